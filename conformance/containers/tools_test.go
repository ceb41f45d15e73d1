package containers_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/mounted"
	"github.com/fencefs/fencefs/s3adapter"
)

// The tool-level suite against real servers: the same scenarios, with the
// same expected texts, as on local disk.

// TestToolsS3 runs the suite on S3 backends, writable and read-only (the
// read scenarios then run on objects seeded behind the backend's back, and
// every change must be refused), over one server.
func TestToolsS3(t *testing.T) {
	containers.SetTestcontainersDefaults()
	srv := containers.StartS3(t.Context(), t)
	t.Run("Writable", func(t *testing.T) {
		conformance.RunTools(t, srv.Harness(t.Context(), t))
	})
	t.Run("ReadOnly", func(t *testing.T) {
		h := srv.Harness(t.Context(), t)
		h.Configure = func(c *s3adapter.Config) { c.Options.ReadOnly = true }
		conformance.RunTools(t, h)
	})
}

func TestToolsSFTP(t *testing.T) {
	containers.SetTestcontainersDefaults()
	srv := containers.StartSFTP(t.Context(), t)
	conformance.RunTools(t, containers.NewSFTPHarness(srv))
}

// TestToolsMountedRemote runs the suite in the S3 and the SFTP mount of
// one rooted namespace that also holds local disk (the local mount is
// covered by conformance's own mounted runs).
func TestToolsMountedRemote(t *testing.T) {
	containers.SetTestcontainersDefaults()
	s3srv := containers.StartS3(t.Context(), t)
	sftpsrv := containers.StartSFTP(t.Context(), t)
	h := &mixedHarness{s3: s3srv, sftp: containers.NewSFTPHarness(sftpsrv)}
	for _, mount := range []string{"s3", "sftp"} {
		t.Run(mount, func(t *testing.T) {
			conformance.RunToolsWith(t, h, conformance.ToolsOptions{Dir: mount})
		})
	}
}

// mixedHarness makes namespaces of a fresh local directory ("disk"), a
// fresh S3 prefix ("s3") and a fresh SFTP directory ("sftp").
type mixedHarness struct {
	s3   *containers.S3Server
	sftp *containers.SFTPHarness
	n    atomic.Int64
}

func (h *mixedHarness) MakeBackend(ctx context.Context, t *testing.T) backend.Backend {
	t.Helper()
	disk, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { disk.Close() })
	ns, err := mounted.New(map[string]backend.Backend{
		"disk": disk,
		"s3":   h.s3.NewBackend(t, fmt.Sprintf("mixed%05d", h.n.Add(1))),
		"sftp": h.sftp.MakeBackend(ctx, t),
	})
	if err != nil {
		t.Fatal(err)
	}
	return ns
}
