//go:build linux

package overlay_test

import (
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/internal/backendtest"
	"github.com/fencefs/fencefs/local"
)

// localLayer makes local layers over fresh directories.
func localLayer() *backendtest.HostHarness {
	return backendtest.NewHostHarness("", func(t *testing.T, dir string) backend.Backend {
		b, err := local.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	})
}

// localSkips adds what local layers lack: versions.
func localSkips(skips []string) []string {
	return append(skips, "Preconditions/MatchVersion*", "Reopen/MatchVersionAcrossValues")
}

func TestConformanceLocal(t *testing.T) {
	conformance.RunWith(t, newHarness(localLayer(), localLayer(), false, false), conformance.RunOptions{
		LargeFileSize: 3<<20 + 5, ExpectedSkips: localSkips(writableSkips()), RequireAbilities: abilities(),
	})
}

func TestConformanceLocalReadOnlyBase(t *testing.T) {
	conformance.RunWith(t, newHarness(localLayer(), localLayer(), true, false), conformance.RunOptions{
		LargeFileSize: 3<<20 + 5, ExpectedSkips: localSkips(writableSkips()), RequireAbilities: abilities(),
	})
}

func TestConformanceLocalReadOnly(t *testing.T) {
	conformance.RunWith(t, newHarness(localLayer(), localLayer(), true, true), conformance.RunOptions{
		LargeFileSize: 3<<20 + 5, ExpectedSkips: readOnlySkips(), RequireAbilities: abilities(),
	})
}

func TestToolsLocal(t *testing.T) {
	conformance.RunToolsWith(t, newHarness(localLayer(), localLayer(), true, false), conformance.ToolsOptions{
		ExpectedSkips: toolSkips("ToolSelection/ReadOnlyBackend"), RequireAbilities: abilities(),
	})
}

func TestToolsLocalReadOnly(t *testing.T) {
	conformance.RunToolsWith(t, newHarness(localLayer(), localLayer(), false, true), conformance.ToolsOptions{
		ExpectedSkips: readOnlyToolSkips(), RequireAbilities: abilities(),
	})
}
