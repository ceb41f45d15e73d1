package mounted_test

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/mounted"
	"github.com/fencefs/fencefs/s3adapter"
)

// mountHarness runs the suite in one mount ("s3", "sftp" or "disk") of
// a namespace that mixes local disk, S3 and SFTP. The mount under test
// is fresh per subtest; the others are shared. It passes RawLister and
// Seeder through to the mount's own harness, with paths re-rooted.
type mountHarness struct {
	dir    string
	child  conformance.Harness
	others map[string]backend.Backend
	// children maps each namespace made to its backend under test.
	children map[backend.Backend]backend.Backend
}

func (h *mountHarness) MakeBackend(ctx context.Context, t *testing.T) backend.Backend {
	t.Helper()
	child := h.child.MakeBackend(ctx, t)
	mounts := map[string]backend.Backend{h.dir: child}
	for name, b := range h.others {
		if name != h.dir {
			mounts[name] = b
		}
	}
	m, err := mounted.New(mounts)
	if err != nil {
		t.Fatal(err)
	}
	h.children[m] = child
	return m
}

func (h *mountHarness) ListRaw(ctx context.Context, t *testing.T, b backend.Backend) []string {
	t.Helper()
	rl, ok := h.child.(conformance.RawLister)
	if !ok {
		t.Skipf("skipped: the %s harness has no conformance.RawLister", h.dir)
	}
	var out []string
	for _, name := range rl.ListRaw(ctx, t, h.children[b]) {
		out = append(out, backend.Join(h.dir, name))
	}
	return out
}

func (h *mountHarness) Seed(ctx context.Context, t *testing.T, b backend.Backend, name string, data []byte) {
	t.Helper()
	h.seeder(t).Seed(ctx, t, h.children[b], h.rest(t, name), data)
}

func (h *mountHarness) SeedDir(ctx context.Context, t *testing.T, b backend.Backend, dir string) {
	t.Helper()
	h.seeder(t).SeedDir(ctx, t, h.children[b], h.rest(t, dir))
}

func (h *mountHarness) seeder(t *testing.T) conformance.Seeder {
	t.Helper()
	sd, ok := h.child.(conformance.Seeder)
	if !ok {
		t.Skipf("skipped: the %s harness has no conformance.Seeder", h.dir)
	}
	return sd
}

// rest turns a namespace path below the mount into the mount's path.
func (h *mountHarness) rest(t *testing.T, name string) string {
	t.Helper()
	if !backend.IsWithin(name, h.dir) || name == h.dir {
		t.Fatalf("path %q is not below the mount %q", name, h.dir)
	}
	return name[len(h.dir)+1:]
}

// localHarness makes local backends over fresh temporary directories.
type localHarness struct{}

func (localHarness) MakeBackend(ctx context.Context, t *testing.T) backend.Backend {
	t.Helper()
	return newLocalFS(t)
}

// ListRaw lists every non-directory below the backend's host directory,
// temporary files included.
func (localHarness) ListRaw(ctx context.Context, t *testing.T, b backend.Backend) []string {
	t.Helper()
	root, ok := b.(backend.LocalPather).LocalPath(".")
	if !ok {
		t.Fatal("local backend without a host path")
	}
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		out = append(out, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func newLocalFS(t *testing.T) *local.FS {
	t.Helper()
	b, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// TestMountedMix runs the conformance suite in each mount of one rooted
// namespace holding local disk, an S3 prefix and an SFTP directory,
// against the real servers.
func TestMountedMix(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: the adapters' own suites cover the same servers")
	}
	ctx := context.Background()
	s3srv := containers.StartS3(ctx, t)
	sftpsrv := containers.StartSFTP(ctx, t)
	s3h := s3srv.Harness(ctx, t)
	sftph := containers.NewSFTPHarness(sftpsrv)
	others := map[string]backend.Backend{
		"disk": newLocalFS(t),
		"s3":   s3srv.NewBackend(t, "mix-neighbour"),
		"sftp": sftph.MakeBackend(ctx, t),
	}
	// Large files stay modest: the adapters' own suites stream big ones.
	opts := conformance.RunOptions{LargeFileSize: 2*s3adapter.MinPartSize + 1}
	for _, mount := range []struct {
		name    string
		harness conformance.Harness
	}{
		{"s3", s3h},
		{"sftp", sftph},
		{"disk", localHarness{}},
	} {
		t.Run(mount.name, func(t *testing.T) {
			h := &mountHarness{dir: mount.name, child: mount.harness, others: others, children: map[backend.Backend]backend.Backend{}}
			o := opts
			o.Dir = mount.name
			// Local disk and SFTP have no versions and SFTP no atomic
			// preconditions, so the namespace has neither; it holds no
			// symlinks, FIFOs or mode bits since S3 does not, and this
			// harness does not reopen.
			o.ExpectedSkips = []string{
				"Preconditions/MatchVersion*", "Preconditions/Concurrent*", "Changes/Concurrent*",
				"Changes/ChangesRefusedWhenReadOnly", "ModeBits/*", "Symlinks/*", "SpecialFiles/*", "ReadOnly/*",
				"Reopen/*", "FSView/Empty", "FSView/Symlinks",
			}
			conformance.RunWith(t, h, o)
		})
	}
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
			conformance.RunToolsWith(t, h, conformance.ToolsOptions{Dir: mount, ExpectedSkips: []string{
				"WriteFile/ModeKept", "ToolSelection/ReadOnlyBackend", "Symlinks/*", "SpecialFiles/*",
			}})
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
