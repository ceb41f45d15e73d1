//go:build unix

package aferoadapter_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"testing/fstest"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/aferoadapter"
	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/internal/backendtest"
)

// diskFS returns a backend over a BasePathFs on a fresh host directory
// holding d/f ("data"), top ("top") and the given symlinks (name ->
// target), and the host directory.
func diskFS(t *testing.T, links map[string]string) (*aferoadapter.FS, string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	must(t, os.MkdirAll(filepath.Join(root, "d"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "d", "f"), []byte("data"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "top"), []byte("top"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "..", "secret"), []byte("secret"), 0o644))
	for name, target := range links {
		must(t, os.Symlink(target, filepath.Join(root, name)))
	}
	return aferoadapter.New(afero.NewBasePathFs(afero.NewOsFs(), root)), root
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestResolveSymlinks(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		links   map[string]string
		name    string
		want    string
		wantErr error
	}{
		{name: "d/f", want: "d/f"},
		{name: "d/missing/x", want: "d/missing/x"},
		{name: "top/x", want: "top/x"}, // through a file: kept as written
		{links: map[string]string{"l": "d"}, name: "l/f", want: "d/f"},
		{links: map[string]string{"l": "d/f"}, name: "l", want: "d/f"},
		{links: map[string]string{"d/up": "../top"}, name: "d/up", want: "top"},
		{links: map[string]string{"d/self": "."}, name: "d/self/self/f", want: "d/f"},
		{links: map[string]string{"l": "l2", "l2": "d"}, name: "l/f", want: "d/f"},
		{links: map[string]string{"dangling": "d/nothing"}, name: "dangling", want: "d/nothing"},
		{links: map[string]string{"esc": "../secret"}, name: "esc", wantErr: backend.ErrOutside},
		{links: map[string]string{"d/esc": "../../secret"}, name: "d/esc", wantErr: backend.ErrOutside},
		{links: map[string]string{"abs": "/etc/passwd"}, name: "abs", wantErr: backend.ErrOutside},
		{links: map[string]string{"loop": "loop"}, name: "loop", wantErr: backend.ErrLoop},
		{links: map[string]string{"a": "b", "b": "a"}, name: "a/x", wantErr: backend.ErrLoop},
		{name: "d/../top", wantErr: backend.ErrInvalidPath},
	}
	for _, tt := range tests {
		b, _ := diskFS(t, tt.links)
		got, err := b.ResolveSymlinks(ctx, tt.name)
		if tt.wantErr != nil {
			backendtest.WantPathErr(t, "ResolveSymlinks("+tt.name+")", err, tt.name, tt.wantErr)
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ResolveSymlinks(%q) with links %v = %q, %v; want %q", tt.name, tt.links, got, err, tt.want)
		}
	}
}

func TestAbsoluteLinkInsideRoot(t *testing.T) {
	ctx := context.Background()
	b, root := diskFS(t, nil)
	must(t, os.Symlink(filepath.Join(root, "d"), filepath.Join(root, "abs")))
	must(t, os.Symlink(root, filepath.Join(root, "rootlink")))
	if got, err := b.ResolveSymlinks(ctx, "abs/f"); err != nil || got != "d/f" {
		t.Errorf("ResolveSymlinks(abs/f) = %q, %v; want d/f", got, err)
	}
	if got, err := b.Readlink(ctx, "abs"); err != nil || got != "d" {
		t.Errorf("Readlink(abs) = %q, %v; want d", got, err)
	}
	if got, err := b.Readlink(ctx, "rootlink"); err != nil || got != "." {
		t.Errorf("Readlink(rootlink) = %q, %v; want .", got, err)
	}
}

func TestReadlink(t *testing.T) {
	ctx := context.Background()
	b, _ := diskFS(t, map[string]string{"rel": "d/f", "up": "../secret", "abs": "/etc"})
	tests := []struct {
		name    string
		want    string
		wantErr error
	}{
		{name: "rel", want: "d/f"},
		{name: "up", want: "../secret"}, // as stored; resolving it is refused
		{name: "abs", wantErr: backend.ErrOutside},
		{name: "top", wantErr: fs.ErrInvalid},
		{name: "missing", wantErr: fs.ErrNotExist},
	}
	for _, tt := range tests {
		got, err := b.Readlink(ctx, tt.name)
		if tt.wantErr != nil {
			backendtest.WantPathErr(t, "Readlink("+tt.name+")", err, tt.name, tt.wantErr)
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Readlink(%q) = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}

// TestOperationsDoNotFollowSymlinks checks that backend methods refuse
// symlinks in the middle of a path and report, not follow, a final one.
func TestOperationsDoNotFollowSymlinks(t *testing.T) {
	ctx := context.Background()
	b, root := diskFS(t, map[string]string{"dl": "d", "fl": "top", "esc": ".."})
	_, err := b.OpenRead(ctx, "dl/f")
	backendtest.WantPathErr(t, "OpenRead through a link", err, "dl/f", backend.ErrSymlink)
	_, err = b.OpenRead(ctx, "esc/secret")
	backendtest.WantPathErr(t, "OpenRead through an escaping link", err, "esc/secret", backend.ErrSymlink)
	_, err = b.OpenRead(ctx, "fl")
	backendtest.WantPathErr(t, "OpenRead of a link", err, "fl", backend.ErrNotRegular)
	_, err = b.List(ctx, "dl")
	backendtest.WantPathErr(t, "List of a link", err, "dl", backend.ErrSymlink)
	_, err = b.Stat(ctx, "dl/f")
	backendtest.WantPathErr(t, "Stat through a link", err, "dl/f", backend.ErrSymlink)
	err = backend.WriteFile(ctx, b, "esc/secret", []byte("owned"), backend.WriteOptions{})
	backendtest.WantPathErr(t, "write through an escaping link", err, "esc/secret", backend.ErrSymlink)
	backendtest.WantPathErr(t, "MkdirAll through a link", b.MkdirAll(ctx, "dl/sub"), "dl/sub", backend.ErrSymlink)
	if data, err := os.ReadFile(filepath.Join(root, "..", "secret")); err != nil || string(data) != "secret" {
		t.Errorf("the file outside the root = %q, %v", data, err)
	}
	fi, err := b.Stat(ctx, "dl")
	if err != nil || !fi.IsSymlink() {
		t.Errorf("Stat(dl) = %+v, %v; want a symlink", fi, err)
	}
	entries, err := b.List(ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if (e.Name == "dl" || e.Name == "fl") && !e.IsSymlink() {
			t.Errorf("entry %+v is not reported as a symlink", e)
		}
	}
}

func TestFIFOIsNotRegular(t *testing.T) {
	ctx := context.Background()
	b, root := diskFS(t, nil)
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	// Opening a FIFO for reading would block without a writer.
	_, err := b.OpenRead(ctx, "fifo")
	backendtest.WantPathErr(t, "OpenRead of a FIFO", err, "fifo", backend.ErrNotRegular)
	fi, err := b.Stat(ctx, "fifo")
	if err != nil || fi.Mode.Type() != fs.ModeNamedPipe {
		t.Errorf("Stat(fifo) = %+v, %v", fi, err)
	}
}

func TestDiskWriteKeepsMode(t *testing.T) {
	ctx := context.Background()
	b, root := diskFS(t, nil)
	must(t, os.Chmod(filepath.Join(root, "top"), 0o751))
	if err := backend.WriteFile(ctx, b, "top", []byte("new"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(root, "top"))
	if err != nil || fi.Mode().Perm() != 0o751 {
		t.Errorf("mode after replacement = %v, %v; want 0751", fi.Mode(), err)
	}
	names, err := os.ReadDir(root)
	if err != nil || len(names) != 2 {
		t.Errorf("host directory holds %v, %v; want d and top only", names, err)
	}
}

func TestIOFSViewOfDisk(t *testing.T) {
	b, _ := diskFS(t, map[string]string{"dl": "d", "fl": "top"})
	if err := fstest.TestFS(backend.FS(context.Background(), b), "d/f", "top", "dl", "fl"); err != nil {
		t.Fatal(err)
	}
}
