//go:build linux

package backend_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/local"
)

// TestCopyFSKeepsLinks copies the io/fs view of a directory holding links
// with os.CopyFS and checks that every link in the copy leads to the same
// content: an absolute link below the root must come back relative to its
// own directory, or the copy dangles.
func TestCopyFSKeepsLinks(t *testing.T) {
	src := t.TempDir()
	mustWrite := func(rel, data string) {
		t.Helper()
		p := filepath.Join(src, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite("x", "top x")
	mustWrite("a/b/y", "deep y")
	links := []struct{ name, target string }{
		{"a/b/abs", filepath.Join(src, "x")}, // absolute, below the root
		{"a/b/absdeep", filepath.Join(src, "a/b/y")},
		{"a/rel", "../x"},                          // relative, as stored
		{"top", filepath.Join(src, "a/b/y")},       // absolute, at the root
		{"a/b/chain", filepath.Join(src, "a/rel")}, // absolute, to a link
	}
	for _, l := range links {
		if err := os.Symlink(l.target, filepath.Join(src, l.name)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := local.New(src)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	dst := filepath.Join(t.TempDir(), "copy")
	if err := os.CopyFS(dst, backend.FS(context.Background(), b)); err != nil {
		t.Fatalf("os.CopyFS of the view: %v", err)
	}
	want := map[string]string{"a/b/abs": "top x", "a/b/absdeep": "deep y", "a/rel": "top x", "top": "deep y", "a/b/chain": "top x"}
	for name, content := range want {
		got, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil || string(got) != content {
			target, _ := os.Readlink(filepath.Join(dst, name))
			t.Errorf("copy of %s (-> %q) reads %q, %v; want %q", name, target, got, err, content)
		}
	}
	if target, err := os.Readlink(filepath.Join(dst, "a/rel")); err != nil || target != "../x" {
		t.Errorf("copy of the relative link a/rel -> %q, %v; want it as stored, \"../x\"", target, err)
	}
}

// TestCopyFSOutsideLinks checks links leading outside the root are one
// case, absolute or relative, direct or through a link inside: absent from
// listings, refused with ErrOutside by every call naming them, so that
// os.CopyFS of the view completes, with everything else and none of them,
// and testing/fstest finds the view consistent.
func TestCopyFSOutsideLinks(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "root")
	for _, dir := range []string{"a/b", "z"} {
		if err := os.MkdirAll(filepath.Join(src, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range map[string]string{"a/b/f": "f", "z/last": "last"} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rel, err := filepath.Rel(filepath.Join(src, "a"), filepath.Join(outside, "secret"))
	if err != nil {
		t.Fatal(err)
	}
	links := []struct{ name, target string }{
		{"a/abs", filepath.Join(outside, "secret")}, // absolute, outside
		{"a/rel", rel},          // relative, outside
		{"a/b/chain", "../rel"}, // inside, to a link outside
		{"a/dirout", outside},   // a directory outside
		{"a/in", "b/f"},         // inside: kept
	}
	for _, l := range links {
		if err := os.Symlink(l.target, filepath.Join(src, l.name)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := local.New(src)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	view := backend.FS(context.Background(), b)

	for _, name := range []string{"a/abs", "a/rel", "a/b/chain", "a/dirout"} {
		if _, err := fs.ReadLink(view, name); !errors.Is(err, backend.ErrOutside) {
			t.Errorf("ReadLink(%s) = %v, want ErrOutside", name, err)
		}
		if _, err := fs.Lstat(view, name); !errors.Is(err, backend.ErrOutside) {
			t.Errorf("Lstat(%s) = %v, want ErrOutside", name, err)
		}
		if _, err := fs.Stat(view, name); !errors.Is(err, backend.ErrOutside) {
			t.Errorf("Stat(%s) = %v, want ErrOutside", name, err)
		}
		if _, err := fs.ReadFile(view, name); !errors.Is(err, backend.ErrOutside) {
			t.Errorf("ReadFile(%s) = %v, want ErrOutside", name, err)
		}
	}
	if err := fstest.TestFS(view, "a/b/f", "a/in", "z/last"); err != nil {
		t.Errorf("fstest.TestFS: %v", err)
	}
	// A dangling link inside stays (fstest would open it, so it comes now).
	if err := os.Symlink("b/missing", filepath.Join(src, "a/dangling")); err != nil {
		t.Fatal(err)
	}
	entries, err := fs.ReadDir(view, "a")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != "b dangling in" {
		t.Errorf("ReadDir(a) = %s, want b dangling in", got)
	}

	dst := filepath.Join(t.TempDir(), "copy")
	if err := os.CopyFS(dst, view); err != nil {
		t.Fatalf("os.CopyFS of the view: %v", err)
	}
	var copied []string
	err = filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(dst, p)
		copied = append(copied, filepath.ToSlash(r))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// z/last comes after every outside link in walk order: the copy is whole.
	want := ". a a/b a/b/f a/dangling a/in z z/last"
	if got := strings.Join(copied, " "); got != want {
		t.Errorf("the copy holds %s, want %s", got, want)
	}
	if data, err := os.ReadFile(filepath.Join(dst, "a/in")); err != nil || string(data) != "f" {
		t.Errorf("copy of a/in reads %q, %v", data, err)
	}
}
