//go:build linux

package local_test

import (
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/internal/backendtest"
	"github.com/fencefs/fencefs/local"
)

// harness makes local backends over fresh directories, reaching the disk
// beneath them for every harness ability.
func harness() *backendtest.HostHarness {
	return backendtest.NewHostHarness("", func(t *testing.T, dir string) backend.Backend {
		b, err := local.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	})
}

// every harness ability, so a harness that loses one fails the run.
func abilities() []conformance.Ability {
	return []conformance.Ability{
		conformance.AbilitySymlinker, conformance.AbilitySpecialFileMaker, conformance.AbilityRawLister,
		conformance.AbilityChmoder, conformance.AbilitySeeder, conformance.AbilityReopener,
	}
}

// TestConformance runs the suite on local disk, which has no versions
// (MatchVersion is declined) and is writable.
func TestConformance(t *testing.T) {
	conformance.RunWith(t, harness(), conformance.RunOptions{
		ExpectedSkips: []string{
			"Preconditions/MatchVersion*", "Reopen/MatchVersionAcrossValues",
			"ReadOnly/*", "Changes/ChangesRefusedWhenReadOnly",
		},
		RequireAbilities: abilities(),
	})
}

func TestTools(t *testing.T) {
	conformance.RunToolsWith(t, harness(), conformance.ToolsOptions{
		ExpectedSkips:    []string{"ToolSelection/ReadOnlyBackend"},
		RequireAbilities: abilities(),
	})
}

// TestToolsInDir works in a subdirectory, so the tool sets' working
// directory is not the root: output paths stay relative to it, events
// and policy messages name the full path.
func TestToolsInDir(t *testing.T) {
	conformance.RunToolsWith(t, harness(), conformance.ToolsOptions{
		Dir:              "work/space",
		ExpectedSkips:    []string{"ToolSelection/ReadOnlyBackend"},
		RequireAbilities: abilities(),
	})
}
