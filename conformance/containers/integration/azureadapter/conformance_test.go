package azureadapter_test

import (
	"testing"

	"github.com/fencefs/fencefs/azureadapter"
	"github.com/fencefs/fencefs/conformance"
)

// azureSkips are the tests Azure Blob Storage skips: it holds no
// symlinks, FIFOs or permission bits and has no local path.
func azureSkips(more ...string) []string {
	return append([]string{
		"InvalidPaths/ResolveSymlinks", "InvalidPaths/Readlink", "InvalidPaths/LocalPath",
		"Symlinks/*", "SpecialFiles/*", "FSView/Symlinks",
	}, more...)
}

// azureAbilities are the harness abilities every run needs.
func azureAbilities() []conformance.Ability {
	return []conformance.Ability{conformance.AbilityRawLister, conformance.AbilitySeeder, conformance.AbilityReopener}
}

func TestConformance(t *testing.T) {
	srv := azurite.Get(t)
	conformance.RunWith(t, newHarness(t, srv), conformance.RunOptions{
		LargeFileSize:    largeFile,
		ExpectedSkips:    azureSkips("ModeBits/*", "ReadOnly/*", "Changes/ChangesRefusedWhenReadOnly"),
		RequireAbilities: azureAbilities(),
	})
}

// TestConformanceReadOnly runs the suite on read-only backends, filled
// behind their back by the harness.
func TestConformanceReadOnly(t *testing.T) {
	srv := azurite.Get(t)
	h := newHarness(t, srv)
	h.configure = func(c *azureadapter.Config) { c.Options.ReadOnly = true }
	conformance.RunWith(t, h, conformance.RunOptions{
		LargeFileSize: largeFile,
		ExpectedSkips: azureSkips(
			"RoundTrip/*", "Names/TooLongComponent", "Errors/Write*", "Atomicity/*", "Preconditions/*", "Changes/*",
			"ModeBits/*", "MkdirAll/*", "Reopen/*", "Context/Cancel*Commit*", "Context/CancelledBeforeOpenWrite",
		),
		RequireAbilities: azureAbilities(),
	})
}
