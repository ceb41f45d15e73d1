//go:build linux

package backend_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

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
