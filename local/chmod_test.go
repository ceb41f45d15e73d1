//go:build linux

package local_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/local"
)

// TestChmod: Chmod sets a regular file's bits, and refuses a directory,
// a symlink as the final component (its target keeps its mode) and a
// symlink on the way, so no link leads it outside the root.
func TestChmod(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	b, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	write := func(p string, mode fs.FileMode) {
		if err := os.WriteFile(p, []byte("x"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "f"), 0o644)
	write(filepath.Join(outside, "secret"), 0o600)
	if err := os.Mkdir(filepath.Join(root, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "dirlink")); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := b.Chmod(ctx, "f", 0o755); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(root, "f")); fi.Mode().Perm() != 0o755 {
		t.Errorf("f: mode %v, want 0755", fi.Mode().Perm())
	}
	for name, want := range map[string]error{"d": backend.ErrIsDir, "missing": fs.ErrNotExist} {
		if err := b.Chmod(ctx, name, 0o700); !errors.Is(err, want) {
			t.Errorf("chmod %s: %v, want %v", name, err, want)
		}
	}
	for _, name := range []string{"link", "dirlink/secret"} {
		if err := b.Chmod(ctx, name, 0o777); err == nil {
			t.Errorf("chmod %s: no error through a symlink", name)
		}
	}
	if fi, _ := os.Stat(filepath.Join(outside, "secret")); fi.Mode().Perm() != 0o600 {
		t.Errorf("the file outside the root changed mode: %v", fi.Mode().Perm())
	}
	if err := b.Chmod(ctx, "../x", 0o700); !errors.Is(err, backend.ErrInvalidPath) {
		t.Errorf("chmod ../x: %v", err)
	}
}
