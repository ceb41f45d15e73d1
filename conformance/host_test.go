package conformance_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

// hostHarness makes backends over fresh host directories and arranges
// and inspects their storage directly on disk. prefix is the storage
// directory under which the host directory appears in the backend ("" for
// its root, a mount name for a mounted namespace).
type hostHarness struct {
	prefix string
	make   func(t *testing.T, dir string) backend.Backend

	mu   sync.Mutex
	dirs map[backend.Backend]string
}

func newHostHarness(prefix string, make func(t *testing.T, dir string) backend.Backend) *hostHarness {
	return &hostHarness{prefix: prefix, make: make, dirs: map[backend.Backend]string{}}
}

func (h *hostHarness) MakeBackend(ctx context.Context, t *testing.T) backend.Backend {
	dir := t.TempDir()
	b := h.make(t, dir)
	h.mu.Lock()
	h.dirs[b] = dir
	h.mu.Unlock()
	t.Cleanup(func() {
		h.mu.Lock()
		delete(h.dirs, b)
		h.mu.Unlock()
	})
	return b
}

// hostPath maps a storage path of b onto the host.
func (h *hostHarness) hostPath(t *testing.T, b backend.Backend, name string) string {
	t.Helper()
	h.mu.Lock()
	dir, ok := h.dirs[b]
	h.mu.Unlock()
	if !ok {
		t.Fatalf("backend %v was not made by this harness", b)
	}
	rel := name
	if h.prefix != "" {
		if !backend.IsWithin(name, h.prefix) {
			t.Fatalf("storage path %q is not below %q", name, h.prefix)
		}
		rel = strings.TrimPrefix(strings.TrimPrefix(name, h.prefix), "/")
	}
	return filepath.Join(dir, filepath.FromSlash(rel))
}

func (h *hostHarness) MakeSymlink(ctx context.Context, t *testing.T, b backend.Backend, target, name string) {
	if err := os.Symlink(target, h.hostPath(t, b, name)); err != nil {
		t.Fatal(err)
	}
}

func (h *hostHarness) MakeFIFO(ctx context.Context, t *testing.T, b backend.Backend, name string) {
	if err := syscall.Mkfifo(h.hostPath(t, b, name), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (h *hostHarness) ListRaw(ctx context.Context, t *testing.T, b backend.Backend) []string {
	root := h.hostPath(t, b, orRoot(h.prefix))
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		out = append(out, backend.Join(orRoot(h.prefix), filepath.ToSlash(rel)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (h *hostHarness) Chmod(ctx context.Context, t *testing.T, b backend.Backend, name string, perm fs.FileMode) {
	if err := os.Chmod(h.hostPath(t, b, name), perm); err != nil {
		t.Fatal(err)
	}
}

func (h *hostHarness) Seed(ctx context.Context, t *testing.T, b backend.Backend, name string, data []byte) {
	p := h.hostPath(t, b, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func (h *hostHarness) SeedDir(ctx context.Context, t *testing.T, b backend.Backend, dir string) {
	if err := os.MkdirAll(h.hostPath(t, b, dir), 0o755); err != nil {
		t.Fatal(err)
	}
}
