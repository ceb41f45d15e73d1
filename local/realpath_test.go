//go:build linux

package local

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRealPath checks that the kernel's path of an open root is the one
// filepath.EvalSymlinks resolves, through a chain of symlinks too, and
// that a directory whose path is gone is resolved (and refused) by its
// path as before.
func TestRealPath(t *testing.T) {
	parent := t.TempDir()
	makeTree(t, parent, tree{"real/sub/": "", "a": "->real", "b": "->a/sub", "gone/": ""})
	for _, p := range []string{"/", parent, filepath.Join(parent, "a"), filepath.Join(parent, "b"), filepath.Join(parent, "real", "sub")} {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			t.Fatal(err)
		}
		got, err := realPath(p, fd, &st)
		want, werr := filepath.EvalSymlinks(p)
		if got != want || err != nil || werr != nil {
			t.Errorf("realPath(%q) = %q, %v; EvalSymlinks: %q, %v", p, got, err, want, werr)
		}
		unix.Close(fd)
	}
	gone := filepath.Join(parent, "gone")
	fd, err := unix.Open(gone, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	if got, err := realPath(gone, fd, &st); err == nil {
		t.Errorf("realPath of a removed directory = %q, want an error", got)
	}
	// Another directory now at the path is not the one open.
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := realPath(gone, fd, &st); err != nil || got != gone {
		t.Errorf("realPath with a new directory at the path = %q, %v; want the path resolved, %q", got, err, gone)
	}
}
