package mounted_test

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/aferoadapter"
	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/internal/backendtest"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/mounted"
)

// The mounted namespace's root holds only mounts, so the suites work in
// one mount (RunOptions.Dir, ToolsOptions.Dir) while a mount of the other
// kind sits beside it, and the tool suite expects rooted output paths.

// newLocal opens a local backend over dir, closed when t ends.
func newLocal(t *testing.T, dir string) *local.FS {
	t.Helper()
	b, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// newMounted makes a namespace of mounts, failing t on error.
func newMounted(t *testing.T, mounts map[string]backend.Backend) *mounted.FS {
	t.Helper()
	m, err := mounted.New(mounts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The harnesses: local disk as "disk" beside a MemMapFs, a MemMapFs as
// "mem" beside local disk, local disk alone (so the namespace reports
// symlinks and special files), and local disk behind a read-only wrapper.

func diskBesideMem() *backendtest.HostHarness {
	return backendtest.NewHostHarness("disk", func(t *testing.T, dir string) backend.Backend {
		return newMounted(t, map[string]backend.Backend{
			"disk": newLocal(t, dir),
			"mem":  aferoadapter.New(afero.NewMemMapFs()),
		})
	})
}

// memBesideDisk has no Reopen: two afero adapters over one Fs do not
// exclude each other's commits (see aferoadapter.FS).
func memBesideDisk() memOnly {
	return memOnly{backendtest.NewAferoHarness("mem", func(t *testing.T, fsys afero.Fs) backend.Backend {
		return newMounted(t, map[string]backend.Backend{
			"disk": newLocal(t, t.TempDir()),
			"mem":  aferoadapter.New(fsys),
		})
	})}
}

// memOnly passes on every ability of the harness it holds but Reopen.
type memOnly struct{ memAbilities }

type memAbilities interface {
	conformance.Harness
	conformance.RawLister
	conformance.Chmoder
	conformance.Seeder
}

func diskAlone() *backendtest.HostHarness {
	return backendtest.NewHostHarness("disk", func(t *testing.T, dir string) backend.Backend {
		return newMounted(t, map[string]backend.Backend{"disk": newLocal(t, dir)})
	})
}

func diskReadOnly() *backendtest.HostHarness {
	return backendtest.NewHostHarness("ro", func(t *testing.T, dir string) backend.Backend {
		return newMounted(t, map[string]backend.Backend{"ro": backend.ReadOnly(newLocal(t, dir))})
	})
}

// skips are what every run here skips: neither local disk nor afero has
// versions, and a fresh namespace's working directory is a mount, never
// empty of its own accord; a writable run skips the read-only tests, and
// with a MemMapFs beside, the namespace has no symlinks or FIFOs.
func skips(more ...string) []string {
	return append([]string{"Preconditions/MatchVersion*", "Reopen/MatchVersionAcrossValues", "FSView/Empty"}, more...)
}

func writableSkips(more ...string) []string {
	return skips(append([]string{"ReadOnly/*", "Changes/ChangesRefusedWhenReadOnly"}, more...)...)
}

func mixedSkips(more ...string) []string {
	return writableSkips(append([]string{"Symlinks/*", "SpecialFiles/*", "FSView/Symlinks"}, more...)...)
}

func TestConformanceLocal(t *testing.T) {
	conformance.RunWith(t, diskBesideMem(), conformance.RunOptions{Dir: "disk", ExpectedSkips: mixedSkips()})
}

func TestConformanceAfero(t *testing.T) {
	conformance.RunWith(t, memBesideDisk(), conformance.RunOptions{Dir: "mem", ExpectedSkips: mixedSkips("Reopen/*")})
}

func TestConformanceLocalOnly(t *testing.T) {
	conformance.RunWith(t, diskAlone(), conformance.RunOptions{Dir: "disk", ExpectedSkips: writableSkips()})
}

// TestConformanceReadOnly runs the suite on a namespace whose only mount
// is read-only: the write tests skip on Capabilities.ReadOnly, the read
// tests run on files seeded on disk, and ReadOnly/WritesRefused runs.
func TestConformanceReadOnly(t *testing.T) {
	conformance.RunWith(t, diskReadOnly(), conformance.RunOptions{Dir: "ro", ExpectedSkips: skips(
		"RoundTrip/*", "Names/TooLongComponent", "Errors/Write*", "Atomicity/*", "Preconditions/*", "Changes/TruthTable",
		"Changes/Remove*", "Changes/Rename*", "Changes/Concurrent*", "ModeBits/*", "MkdirAll/*", "Reopen/*",
		"Symlinks/WriteThroughSymlinkRefused", "Context/Cancel*Commit*", "Context/CancelledBeforeOpenWrite",
	)})
}

// mixedToolSkips are the scenarios a namespace with a MemMapFs beside
// skips: it has no symlinks or FIFOs, and it is writable.
func mixedToolSkips() []string {
	return []string{"ToolSelection/ReadOnlyBackend", "Symlinks/*", "SpecialFiles/*"}
}

func TestToolsLocal(t *testing.T) {
	conformance.RunToolsWith(t, diskBesideMem(), conformance.ToolsOptions{Dir: "disk", ExpectedSkips: mixedToolSkips()})
}

func TestToolsAfero(t *testing.T) {
	conformance.RunToolsWith(t, memBesideDisk(), conformance.ToolsOptions{Dir: "mem", ExpectedSkips: mixedToolSkips()})
}

// TestToolsLocalOnly works in a directory below the only mount.
func TestToolsLocalOnly(t *testing.T) {
	conformance.RunToolsWith(t, diskAlone(), conformance.ToolsOptions{Dir: "disk/ws", ExpectedSkips: []string{"ToolSelection/ReadOnlyBackend"}})
}

// TestToolsReadOnly: reads work on files seeded on disk, and every change
// is a retry naming the path.
func TestToolsReadOnly(t *testing.T) {
	conformance.RunToolsWith(t, diskReadOnly(), conformance.ToolsOptions{Dir: "ro", ExpectedSkips: []string{
		"WriteFile/*", "EditFile/*", "ApplyPatch/*", "DeleteFile/*", "MoveFile/*", "CopyFile/*",
		"ChangeTools/ChangeRequests", "ChangeTools/Cancelled", "ChangeTools/Events", "CreateDirectory/*", "Policy/Protected*", "Events/*", "ChangeRequests/*",
		"Symlinks/WriteThrough",
	}})
}

// TestMountedReadOnlyMountRefusesWrites checks that in a namespace that
// is writable as a whole, writes to the read-only mount fail with
// ErrReadOnly and never land anywhere, while the writable mount works.
func TestMountedReadOnlyMountRefusesWrites(t *testing.T) {
	ctx := t.Context()
	rwFs, roFs := afero.NewMemMapFs(), afero.NewMemMapFs()
	if err := afero.WriteFile(roFs, "/f", []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	ns := newMounted(t, map[string]backend.Backend{
		"rw": aferoadapter.New(rwFs),
		"ro": backend.ReadOnly(aferoadapter.New(roFs)),
	})
	if backend.CapabilitiesOf(ns).ReadOnly {
		t.Fatalf("a namespace with a writable mount reports Capabilities.ReadOnly=true")
	}
	if c, ok := ns.MountCapabilities("ro"); !ok || !c.ReadOnly {
		t.Errorf("MountCapabilities(\"ro\") = %+v, %v; want ReadOnly", c, ok)
	}
	tests := []struct {
		name  string
		write func() error
	}{
		{"replace", func() error {
			return backend.WriteFile(ctx, ns, "ro/f", []byte("new"), backend.WriteOptions{})
		}},
		{"create", func() error {
			return backend.WriteFile(ctx, ns, "ro/new", []byte("new"), backend.WriteOptions{})
		}},
		{"create in new directory", func() error {
			return backend.WriteFile(ctx, ns, "ro/d/new", []byte("new"), backend.WriteOptions{})
		}},
		{"create only", func() error {
			return backend.WriteFile(ctx, ns, "ro/new", []byte("new"), backend.WriteOptions{Precondition: backend.Precondition{CreateOnly: true}})
		}},
		{"mkdir", func() error { return backend.MkdirAll(ctx, ns, "ro/d") }},
	}
	for _, tt := range tests {
		err := tt.write()
		if !errors.Is(err, backend.ErrReadOnly) || !errors.Is(err, fs.ErrPermission) {
			t.Errorf("%s on the read-only mount: error = %v; want backend.ErrReadOnly (fs.ErrPermission)", tt.name, err)
		}
		var pe *fs.PathError
		if errors.As(err, &pe) && !backend.IsWithin(pe.Path, "ro") {
			t.Errorf("%s on the read-only mount: error names %q, want a path on the mount", tt.name, pe.Path)
		}
	}
	if data, err := afero.ReadFile(roFs, "/f"); err != nil || string(data) != "old" {
		t.Errorf("read-only mount's f = %q, %v; want \"old\"", data, err)
	}
	for _, fsys := range []afero.Fs{roFs, rwFs} {
		var got []string
		afero.Walk(fsys, "/", func(p string, fi fs.FileInfo, err error) error {
			if err == nil && p != "/" && p != "/f" {
				got = append(got, p)
			}
			return err
		})
		if len(got) != 0 {
			t.Errorf("refused writes left %q behind", got)
		}
	}
	if err := backend.WriteFile(ctx, ns, "rw/f", []byte("fine"), backend.WriteOptions{}); err != nil {
		t.Errorf("write to the writable mount: %v", err)
	}
	if data, err := backend.ReadFile(ctx, ns, "rw/f"); err != nil || string(data) != "fine" {
		t.Errorf("rw/f = %q, %v; want \"fine\"", data, err)
	}
}
