package conformance_test

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/aferoadapter"
	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/mounted"
)

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

// The mounted namespace's root holds only mounts, so the suite works in
// one mount (RunOptions.Dir) while another mount sits beside it.

func TestMountedLocal(t *testing.T) {
	h := newHostHarness("disk", func(t *testing.T, dir string) backend.Backend {
		return newMounted(t, map[string]backend.Backend{
			"disk": newLocal(t, dir),
			"mem":  aferoadapter.New(afero.NewMemMapFs()),
		})
	})
	conformance.RunWith(t, h, conformance.RunOptions{Dir: "disk"})
}

func TestMountedAfero(t *testing.T) {
	h := newAferoHarness("mem", func(t *testing.T, fsys afero.Fs) backend.Backend {
		return newMounted(t, map[string]backend.Backend{
			"disk": newLocal(t, t.TempDir()),
			"mem":  aferoadapter.New(fsys),
		})
	})
	conformance.RunWith(t, h, conformance.RunOptions{Dir: "mem"})
}

// TestMountedLocalOnly mounts local disk alone, so the namespace reports
// symlinks and special files and their tests run through the routing.
func TestMountedLocalOnly(t *testing.T) {
	h := newHostHarness("disk", func(t *testing.T, dir string) backend.Backend {
		return newMounted(t, map[string]backend.Backend{"disk": newLocal(t, dir)})
	})
	conformance.RunWith(t, h, conformance.RunOptions{Dir: "disk"})
}

// TestMountedReadOnly runs the suite on a namespace whose only mount is
// read-only: the write tests skip on Capabilities.ReadOnly, the read tests
// run on files seeded on disk, and ReadOnly/WritesRefused runs.
func TestMountedReadOnly(t *testing.T) {
	h := newHostHarness("ro", func(t *testing.T, dir string) backend.Backend {
		return newMounted(t, map[string]backend.Backend{"ro": mounted.ReadOnly(newLocal(t, dir))})
	})
	conformance.RunWith(t, h, conformance.RunOptions{Dir: "ro"})
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
		"ro": mounted.ReadOnly(aferoadapter.New(roFs)),
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
