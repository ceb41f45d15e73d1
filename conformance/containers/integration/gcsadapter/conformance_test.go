package gcsadapter_test

import (
	"testing"

	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/gcsadapter"
)

// gcsSkips are the tests Cloud Storage skips: it holds no symlinks, FIFOs
// or permission bits and has no local path; and those the emulator
// skips, which honours generation preconditions on uploads only (see
// emulated): the races of a conditional removal with a write, of
// conditional renames, and of conditional writes through two backend
// values (the write races run in TestCompareAndSwap instead).
func gcsSkips(more ...string) []string {
	return append([]string{
		"InvalidPaths/ResolveSymlinks", "InvalidPaths/Readlink", "InvalidPaths/LocalPath",
		"Symlinks/*", "SpecialFiles/*", "FSView/Symlinks",
		"Changes/ConcurrentRemoveMatchHashAndWrite", "Changes/ConcurrentRenameCreateOnlyOneWinner",
		"Preconditions/ConcurrentMatchHashOneWinner", "Preconditions/ConcurrentCreateOnlyOneWinner",
		"Reopen/ConcurrentMatchHashAcrossValues", "Reopen/ConcurrentCreateOnlyAcrossValues",
	}, more...)
}

// gcsAbilities are the harness abilities every run needs.
func gcsAbilities() []conformance.Ability {
	return []conformance.Ability{conformance.AbilityRawLister, conformance.AbilitySeeder, conformance.AbilityReopener}
}

// largeFile spans three chunks of gcsadapter.MinChunkSize.
const largeFile = 2*gcsadapter.MinChunkSize + 12_345

func TestConformance(t *testing.T) {
	srv := gcssrv.Get(t)
	conformance.RunWith(t, newHarness(t, srv), conformance.RunOptions{
		LargeFileSize:    largeFile,
		ExpectedSkips:    gcsSkips("ModeBits/*", "ReadOnly/*", "Changes/ChangesRefusedWhenReadOnly"),
		RequireAbilities: gcsAbilities(),
	})
}

// TestConformanceReadOnly runs the suite on read-only backends, filled
// behind their back by the harness.
func TestConformanceReadOnly(t *testing.T) {
	srv := gcssrv.Get(t)
	h := newHarness(t, srv)
	h.configure = func(c *gcsadapter.Config) { c.Options.ReadOnly = true }
	conformance.RunWith(t, h, conformance.RunOptions{
		LargeFileSize: largeFile,
		ExpectedSkips: gcsSkips(
			"RoundTrip/*", "Names/TooLongComponent", "Errors/Write*", "Atomicity/*", "Preconditions/*", "Changes/*",
			"ModeBits/*", "MkdirAll/*", "Reopen/*", "Context/Cancel*Commit*", "Context/CancelledBeforeOpenWrite",
		),
		RequireAbilities: gcsAbilities(),
	})
}

// TestTools runs the tools suite on backends writable and read-only (the
// read scenarios then run on objects seeded behind the backend's back,
// and every change must be refused).
func TestTools(t *testing.T) {
	srv := gcssrv.Get(t)
	t.Run("Writable", func(t *testing.T) {
		conformance.RunToolsWith(t, newHarness(t, srv), conformance.ToolsOptions{
			ExpectedSkips: []string{"WriteFile/ModeKept", "ToolSelection/ReadOnlyBackend", "Symlinks/*", "SpecialFiles/*"},
		})
	})
	t.Run("ReadOnly", func(t *testing.T) {
		h := newHarness(t, srv)
		h.configure = func(c *gcsadapter.Config) { c.Options.ReadOnly = true }
		conformance.RunToolsWith(t, h, conformance.ToolsOptions{ExpectedSkips: []string{
			"WriteFile/*", "EditFile/*", "ApplyPatch/*", "DeleteFile/*", "MoveFile/*", "CopyFile/*",
			"ChangeTools/ChangeRequests", "ChangeTools/Cancelled", "ChangeTools/Events", "CreateDirectory/*",
			"Policy/Protected*", "Events/*", "ChangeRequests/*", "Symlinks/*", "SpecialFiles/*",
		}})
	})
}
