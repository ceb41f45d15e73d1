package overlay_test

import (
	"testing"

	"github.com/fencefs/fencefs/conformance"
)

// writableSkips are the tests a writable overlay skips: it shows no
// symlinks, special files or permission bits of its own, has no host
// paths, and whites out a base file apart from a concurrent write
// (Capabilities.AtomicRemove=false).
func writableSkips(more ...string) []string {
	return append([]string{
		"Symlinks/*", "SpecialFiles/*", "ModeBits/*", "FSView/Symlinks", "ReadOnly/*",
		"InvalidPaths/ResolveSymlinks", "InvalidPaths/Readlink", "InvalidPaths/LocalPath",
		"Changes/ChangesRefusedWhenReadOnly", "Changes/ConcurrentRemoveMatchHashAndWrite",
	}, more...)
}

// readOnlySkips are the tests an overlay over a read-only upper layer
// skips: every change, and what a writable overlay skips.
func readOnlySkips(more ...string) []string {
	return append([]string{
		"Symlinks/*", "SpecialFiles/*", "ModeBits/*", "FSView/Symlinks",
		"InvalidPaths/ResolveSymlinks", "InvalidPaths/Readlink", "InvalidPaths/LocalPath",
		"Atomicity/*", "Preconditions/*", "Reopen/*", "Context/Cancel*Commit*", "Context/CancelledBeforeOpenWrite",
		"MkdirAll/*", "RoundTrip/*", "Names/TooLongComponent",
		"Errors/WriteThroughFile", "Errors/WriteOntoDirectory",
		"Changes/TruthTable/*", "Changes/Remove*", "Changes/Rename*", "Changes/Concurrent*",
	}, more...)
}

// toolSkips are the scenarios an overlay skips: it shows no symlinks or
// special files.
func toolSkips(more ...string) []string {
	return append([]string{"Symlinks/*", "SpecialFiles/*", "WriteFile/ModeKept"}, more...)
}

// readOnlyToolSkips are the scenarios an overlay over a read-only upper
// layer skips.
func readOnlyToolSkips() []string {
	return toolSkips("WriteFile/*", "EditFile/*", "ApplyPatch/*", "DeleteFile/*", "MoveFile/*", "CopyFile/*",
		"ChangeTools/ChangeRequests", "ChangeTools/Cancelled", "ChangeTools/Events", "CreateDirectory/*", "Policy/Protected*",
		"Events/*", "ChangeRequests/*")
}

func TestConformanceMem(t *testing.T) {
	conformance.RunWith(t, newHarness(memHarness{}, memHarness{}, false, false), conformance.RunOptions{
		LargeFileSize: 3<<20 + 5, ExpectedSkips: writableSkips(), RequireAbilities: abilities(),
	})
}

// TestConformanceMemReadOnlyBase is the usual shape: a read-only base
// under a writable upper layer.
func TestConformanceMemReadOnlyBase(t *testing.T) {
	conformance.RunWith(t, newHarness(memHarness{}, memHarness{}, true, false), conformance.RunOptions{
		LargeFileSize: 3<<20 + 5, Dir: "work/space", ExpectedSkips: writableSkips("FSView/Empty"), RequireAbilities: abilities(),
	})
}

// TestConformanceMemReadOnly runs the read tests on an overlay whose upper
// layer is read-only, seeded in the base: every read goes through to it.
func TestConformanceMemReadOnly(t *testing.T) {
	conformance.RunWith(t, newHarness(memHarness{}, memHarness{}, true, true), conformance.RunOptions{
		LargeFileSize: 3<<20 + 5, ExpectedSkips: readOnlySkips(), RequireAbilities: abilities(),
	})
}

func TestToolsMem(t *testing.T) {
	conformance.RunToolsWith(t, newHarness(memHarness{}, memHarness{}, true, false), conformance.ToolsOptions{
		ExpectedSkips: toolSkips("ToolSelection/ReadOnlyBackend"), RequireAbilities: abilities(),
	})
}

func TestToolsMemReadOnly(t *testing.T) {
	conformance.RunToolsWith(t, newHarness(memHarness{}, memHarness{}, false, true), conformance.ToolsOptions{
		ExpectedSkips: readOnlyToolSkips(), RequireAbilities: abilities(),
	})
}
