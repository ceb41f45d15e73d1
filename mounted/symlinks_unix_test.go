//go:build unix

package mounted_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/aferoadapter"
	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/internal/backendtest"
	"github.com/fencefs/fencefs/mounted"
)

// TestChildSymlinks mounts a child that holds symlinks next to one that
// does not: resolution is delegated and prefixed, and the child's
// containment errors name namespace paths.
func TestChildSymlinks(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	for _, dir := range []string{"d", "sub"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "d", "f"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{"dl": "d", "sub/up": "../d/f", "esc": "..", "loop": "loop"}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	disk := aferoadapter.New(afero.NewBasePathFs(afero.NewOsFs(), root))
	m, err := mounted.New(map[string]backend.Backend{"disk": disk, "mem": memBackend(t, map[string]string{"x": "x"})})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		want    string
		wantErr error
	}{
		{name: "disk/dl/f", want: "disk/d/f"},
		{name: "disk/sub/up", want: "disk/d/f"},
		{name: "disk/dl/new", want: "disk/d/new"},
		{name: "disk", want: "disk"},
		{name: "mem/x", want: "mem/x"},
		{name: "disk/esc/x", wantErr: backend.ErrOutside},
		{name: "disk/loop", wantErr: backend.ErrLoop},
	}
	for _, tt := range tests {
		got, err := m.ResolveSymlinks(ctx, tt.name)
		if tt.wantErr != nil {
			backendtest.WantPathErr(t, "ResolveSymlinks("+tt.name+")", err, tt.name, tt.wantErr)
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ResolveSymlinks(%q) = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
	if got, err := m.Readlink(ctx, "disk/sub/up"); err != nil || got != "../d/f" {
		t.Errorf("Readlink(disk/sub/up) = %q, %v", got, err)
	}
	_, err = m.Readlink(ctx, "disk/d")
	backendtest.WantPathErr(t, "Readlink(disk/d)", err, "disk/d", fs.ErrInvalid)
	_, err = m.OpenRead(ctx, "disk/dl/f")
	backendtest.WantPathErr(t, "OpenRead through a link", err, "disk/dl/f", backend.ErrSymlink)
	if fi, err := m.Stat(ctx, "disk/dl"); err != nil || !fi.IsSymlink() {
		t.Errorf("Stat(disk/dl) = %+v, %v; want a symlink", fi, err)
	}
	// The io/fs view follows links through the namespace.
	if data, err := fs.ReadFile(backend.FS(ctx, m), "disk/dl/f"); err != nil || string(data) != "data" {
		t.Errorf("fs.ReadFile through a link = %q, %v", data, err)
	}
	if c := m.Capabilities(); c.Symlinks {
		t.Error("a namespace with a mount without symlinks reports Symlinks")
	}
	if c, _ := m.MountCapabilities("disk"); !c.Symlinks {
		t.Error("MountCapabilities(disk) does not report Symlinks")
	}
}
