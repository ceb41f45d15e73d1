//go:build unix

package mounted_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/memfs"
	"github.com/fencefs/fencefs/mounted"
)

// TestOpenReadNoLinks: a file of a local mount opens in one step when
// its path holds no link, under the mount's name; a link on the way, a
// mount root, the namespace root and a mount that cannot tell (memfs)
// are refused, so the caller resolves first.
func TestOpenReadNoLinks(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "d"), 0o755)
	os.WriteFile(filepath.Join(root, "d", "f"), []byte("data"), 0o644)
	if err := os.Symlink("d", filepath.Join(root, "dl")); err != nil {
		t.Fatal(err)
	}
	disk, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	defer disk.Close()
	mem := memfs.New()
	if err := backend.WriteFile(ctx, mem, "m.txt", []byte("mem"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	m, err := mounted.New(map[string]backend.Backend{"disk": disk, "mem": mem})
	if err != nil {
		t.Fatal(err)
	}
	r, ok := backend.OpenReadNoLinks(ctx, m, "disk/d/f")
	if !ok {
		t.Fatal("a plain path of a local mount did not open")
	}
	data, err := io.ReadAll(r)
	r.Close()
	if err != nil || string(data) != "data" {
		t.Fatalf("read %q, %v", data, err)
	}
	if resolved, err := m.TraceSymlinks(ctx, "disk/d/f", nil); err != nil || resolved != "disk/d/f" {
		t.Fatalf("TraceSymlinks %q, %v", resolved, err)
	}
	for _, name := range []string{"disk/dl/f", "disk", ".", "mem/m.txt", "nomount/x"} {
		if r, ok := backend.OpenReadNoLinks(ctx, m, name); ok {
			r.Close()
			t.Errorf("%s: opened in one step", name)
		}
	}
	if _, err := m.OpenReadNoLinks(ctx, "mem/m.txt"); !errors.Is(err, backend.ErrUnsupported) {
		t.Errorf("memfs mount: %v, want ErrUnsupported", err)
	}
}
