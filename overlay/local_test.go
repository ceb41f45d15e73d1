//go:build linux

package overlay_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/internal/backendtest"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/overlay"
	"github.com/fencefs/fencefs/overlay/overlaytest"
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
	conformance.RunWith(t, overlaytest.NewHarness(localLayer(), localLayer(), false, false), conformance.RunOptions{
		LargeFileSize: 3<<20 + 5, ExpectedSkips: localSkips(overlaytest.WritableSkips()), RequireAbilities: overlaytest.Abilities(),
	})
}

func TestConformanceLocalReadOnlyBase(t *testing.T) {
	conformance.RunWith(t, overlaytest.NewHarness(localLayer(), localLayer(), true, false), conformance.RunOptions{
		LargeFileSize: 3<<20 + 5, ExpectedSkips: localSkips(overlaytest.WritableSkips()), RequireAbilities: overlaytest.Abilities(),
	})
}

func TestConformanceLocalReadOnly(t *testing.T) {
	conformance.RunWith(t, overlaytest.NewHarness(localLayer(), localLayer(), true, true), conformance.RunOptions{
		LargeFileSize: 3<<20 + 5, ExpectedSkips: overlaytest.ReadOnlySkips(), RequireAbilities: overlaytest.Abilities(),
	})
}

func TestToolsLocal(t *testing.T) {
	conformance.RunToolsWith(t, overlaytest.NewHarness(localLayer(), localLayer(), true, false), conformance.ToolsOptions{
		ExpectedSkips: overlaytest.ToolSkips("ToolSelection/ReadOnlyBackend"), RequireAbilities: overlaytest.Abilities(),
	})
}

func TestToolsLocalReadOnly(t *testing.T) {
	conformance.RunToolsWith(t, overlaytest.NewHarness(localLayer(), localLayer(), false, true), conformance.ToolsOptions{
		ExpectedSkips: overlaytest.ReadOnlyToolSkips(), RequireAbilities: overlaytest.Abilities(),
	})
}

// TestWalkMergesLayers walks an overlay of local layers, both Walkers, so
// the overlay's own one-pass walk runs: whiteouts, an opaque directory and
// a file over a base directory are honoured, and fs.SkipDir is.
func TestWalkMergesLayers(t *testing.T) {
	ctx := t.Context()
	open := func(dir string) *local.FS {
		b, err := local.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}
	base, upper := open(t.TempDir()), open(t.TempDir())
	for _, name := range []string{"a", "d/x", "d/sub/y", "e/z", "keep/k"} {
		if err := backend.WriteFile(ctx, base, name, []byte(name), backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	o, err := overlay.New(backend.ReadOnly(base), upper, overlay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := backend.RemoveAll(ctx, o, "d", backend.RemoveAllOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := backend.WriteFile(ctx, o, "d/new", []byte("n"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := backend.RemoveAll(ctx, o, "e", backend.RemoveAllOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := backend.WriteFile(ctx, o, "e", []byte("now a file"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := backend.Remove(ctx, o, "a", backend.RemoveOptions{}); err != nil {
		t.Fatal(err)
	}
	var got []string
	err = o.Walk(ctx, ".", func(name string, e backend.DirEntry) error {
		got = append(got, name)
		if name == "keep" {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"d", "d/new", "e", "keep"}; !slices.Equal(got, want) {
		t.Errorf("Walk = %q, want %q", got, want)
	}
	var listed []string
	if err := backend.WalkByList(ctx, o, ".", func(name string, e backend.DirEntry) error {
		listed = append(listed, name)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"d", "d/new", "e", "keep", "keep/k"}; !slices.Equal(listed, want) {
		t.Errorf("WalkByList = %q, want %q", listed, want)
	}
}

// localLayers returns local base and upper layers over fresh directories.
func localLayers(t *testing.T) (base, upper backend.Backend) {
	open := func() backend.Backend {
		b, err := local.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}
	return open(), open()
}

// localKinds are the local layers of the review tests.
var localKinds = []layerKind{{"local", localLayers}}

// TestBaseSymlinks: a base's links are listed as links and never
// followed: reading one fails (even one leading out of the base), writing
// over one is refused, and removing one is a whiteout that Commit lands.
func TestBaseSymlinks(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	for target, name := range map[string]string{"/etc/passwd": "out", "a.txt": "in"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	base, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { base.Close() })
	_, upper := localLayers(t)
	o, err := overlay.New(base, upper, overlay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"out", "in"} {
		if data, err := backend.ReadFile(ctx, o, name); err == nil {
			t.Errorf("read of the link %s gave %q", name, data)
		}
		if fi, err := o.Stat(ctx, name); err != nil || !fi.IsSymlink() {
			t.Errorf("Stat(%s) = %+v, %v; want a symlink", name, fi, err)
		}
		if err := backend.WriteFile(ctx, o, name, []byte("x"), backend.WriteOptions{}); !errors.Is(err, backend.ErrNotRegular) {
			t.Errorf("write over the link %s: %v, want ErrNotRegular", name, err)
		}
	}
	if err := backend.Remove(ctx, o, "out", backend.RemoveOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := names(t, o, "."); !slices.Equal(got, []string{"a.txt", "in"}) {
		t.Errorf("List(.) = %q", got)
	}
	res, err := o.Commit(ctx)
	if err != nil || !slices.Equal(res.Landed, []string{"out"}) {
		t.Fatalf("Commit = %+v, %v", res, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "out")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the link is still in the base: %v", err)
	}
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Errorf("the link's target: %v", err)
	}
}
