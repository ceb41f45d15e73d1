package azureadapter_test

import (
	"testing"

	"github.com/fencefs/fencefs/azureadapter"
	"github.com/fencefs/fencefs/conformance"
)

// TestTools runs the tools suite on Azure backends, writable and
// read-only (the read scenarios then run on blobs seeded behind the
// backend's back, and every change must be refused), over one emulator.
func TestTools(t *testing.T) {
	srv := azurite.Get(t)
	t.Run("Writable", func(t *testing.T) {
		conformance.RunToolsWith(t, newHarness(t, srv), conformance.ToolsOptions{
			ExpectedSkips: []string{"WriteFile/ModeKept", "ToolSelection/ReadOnlyBackend", "Symlinks/*", "SpecialFiles/*"},
		})
	})
	t.Run("ReadOnly", func(t *testing.T) {
		h := newHarness(t, srv)
		h.configure = func(c *azureadapter.Config) { c.Options.ReadOnly = true }
		conformance.RunToolsWith(t, h, conformance.ToolsOptions{ExpectedSkips: []string{
			"WriteFile/*", "EditFile/*", "ApplyPatch/*", "DeleteFile/*", "MoveFile/*", "CopyFile/*",
			"ChangeTools/ChangeRequests", "ChangeTools/Cancelled", "ChangeTools/Events", "CreateDirectory/*",
			"Policy/Protected*", "Events/*", "ChangeRequests/*", "Symlinks/*", "SpecialFiles/*",
		}})
	})
}
