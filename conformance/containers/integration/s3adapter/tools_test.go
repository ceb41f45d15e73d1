package s3adapter_test

import (
	"testing"

	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/s3adapter"
)

// TestToolsS3 runs the suite on S3 backends, writable and read-only (the
// read scenarios then run on objects seeded behind the backend's back, and
// every change must be refused), over one server.
func TestToolsS3(t *testing.T) {
	containers.SetTestcontainersDefaults()
	srv := containers.StartS3(t.Context(), t)
	t.Run("Writable", func(t *testing.T) {
		conformance.RunToolsWith(t, srv.Harness(t.Context(), t), conformance.ToolsOptions{
			ExpectedSkips: []string{"WriteFile/ModeKept", "ToolSelection/ReadOnlyBackend", "Symlinks/*", "SpecialFiles/*"},
		})
	})
	t.Run("ReadOnly", func(t *testing.T) {
		h := srv.Harness(t.Context(), t)
		h.Configure = func(c *s3adapter.Config) { c.Options.ReadOnly = true }
		conformance.RunToolsWith(t, h, conformance.ToolsOptions{ExpectedSkips: []string{
			"WriteFile/*", "EditFile/*", "ApplyPatch/*", "DeleteFile/*", "MoveFile/*", "CopyFile/*",
			"ChangeTools/ChangeRequests", "ChangeTools/Cancelled", "ChangeTools/Events", "CreateDirectory/*",
			"Policy/Protected*", "Events/*", "ChangeRequests/*", "Symlinks/*", "SpecialFiles/*",
		}})
	})
}
