package backendtest

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/backend"
)

// registry remembers which storage each backend a harness made sits on,
// so the harness abilities can reach that storage directly.
type registry[S any] struct {
	prefix string // the storage directory the storage appears under, "" for the root

	mu     sync.Mutex
	stores map[backend.Backend]S
}

// add records that b sits on st until t ends.
func (r *registry[S]) add(t *testing.T, b backend.Backend, st S) {
	r.mu.Lock()
	if r.stores == nil {
		r.stores = map[backend.Backend]S{}
	}
	r.stores[b] = st
	r.mu.Unlock()
	t.Cleanup(func() {
		r.mu.Lock()
		delete(r.stores, b)
		r.mu.Unlock()
	})
}

// lookup returns b's storage and name relative to it ("" for its root).
func (r *registry[S]) lookup(t *testing.T, b backend.Backend, name string) (S, string) {
	t.Helper()
	r.mu.Lock()
	st, ok := r.stores[b]
	r.mu.Unlock()
	if !ok {
		t.Fatalf("backend %v was not made by this harness", b)
	}
	rel := name
	if r.prefix != "" {
		if !backend.IsWithin(name, r.prefix) {
			t.Fatalf("storage path %q is not below %q", name, r.prefix)
		}
		rel = strings.TrimPrefix(strings.TrimPrefix(name, r.prefix), "/")
	}
	if rel == "." {
		rel = ""
	}
	return st, rel
}

// root is the storage path of the storage's root.
func (r *registry[S]) root() string {
	if r.prefix == "" {
		return "."
	}
	return r.prefix
}

// HostHarness makes backends over fresh host directories and arranges and
// inspects their storage on disk. It has every optional harness ability.
type HostHarness struct {
	make func(t *testing.T, dir string) backend.Backend
	reg  registry[string]
}

// NewHostHarness returns a harness whose backends make returns over a
// fresh directory. prefix is the storage directory under which the host
// directory appears in the backend: "" for its root, a mount name for a
// mounted namespace.
func NewHostHarness(prefix string, make func(t *testing.T, dir string) backend.Backend) *HostHarness {
	return &HostHarness{make: make, reg: registry[string]{prefix: prefix}}
}

// MakeBackend makes a backend over a fresh directory.
func (h *HostHarness) MakeBackend(ctx context.Context, t *testing.T) backend.Backend {
	return h.over(t, t.TempDir())
}

// Reopen makes a second backend over b's directory.
func (h *HostHarness) Reopen(ctx context.Context, t *testing.T, b backend.Backend) backend.Backend {
	dir, _ := h.reg.lookup(t, b, h.reg.root())
	return h.over(t, dir)
}

func (h *HostHarness) over(t *testing.T, dir string) backend.Backend {
	b := h.make(t, dir)
	h.reg.add(t, b, dir)
	return b
}

// hostPath maps a storage path of b onto the host.
func (h *HostHarness) hostPath(t *testing.T, b backend.Backend, name string) string {
	t.Helper()
	dir, rel := h.reg.lookup(t, b, name)
	return filepath.Join(dir, filepath.FromSlash(rel))
}

// MakeSymlink creates the symlink name pointing at target.
func (h *HostHarness) MakeSymlink(ctx context.Context, t *testing.T, b backend.Backend, target, name string) {
	if err := os.Symlink(target, h.hostPath(t, b, name)); err != nil {
		t.Fatal(err)
	}
}

// MakeFIFO creates a named pipe at name.
func (h *HostHarness) MakeFIFO(ctx context.Context, t *testing.T, b backend.Backend, name string) {
	if err := syscall.Mkfifo(h.hostPath(t, b, name), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ListRaw lists every non-directory on disk, hidden or not.
func (h *HostHarness) ListRaw(ctx context.Context, t *testing.T, b backend.Backend) []string {
	root := h.hostPath(t, b, h.reg.root())
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		out = append(out, backend.Join(h.reg.root(), filepath.ToSlash(rel)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Chmod sets the permission bits of name.
func (h *HostHarness) Chmod(ctx context.Context, t *testing.T, b backend.Backend, name string, perm fs.FileMode) {
	if err := os.Chmod(h.hostPath(t, b, name), perm); err != nil {
		t.Fatal(err)
	}
}

// Seed stores data as name on disk.
func (h *HostHarness) Seed(ctx context.Context, t *testing.T, b backend.Backend, name string, data []byte) {
	p := h.hostPath(t, b, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// SeedDir creates dir on disk.
func (h *HostHarness) SeedDir(ctx context.Context, t *testing.T, b backend.Backend, dir string) {
	if err := os.MkdirAll(h.hostPath(t, b, dir), 0o755); err != nil {
		t.Fatal(err)
	}
}

// AferoHarness makes backends over fresh afero.MemMapFs file systems and
// arranges and inspects their storage through afero. It has no Symlinker
// or SpecialFileMaker, since a MemMapFs holds neither.
type AferoHarness struct {
	make func(t *testing.T, fsys afero.Fs) backend.Backend
	reg  registry[afero.Fs]
}

// NewAferoHarness returns a harness whose backends make returns over a
// fresh MemMapFs; prefix is as for [NewHostHarness].
func NewAferoHarness(prefix string, make func(t *testing.T, fsys afero.Fs) backend.Backend) *AferoHarness {
	return &AferoHarness{make: make, reg: registry[afero.Fs]{prefix: prefix}}
}

// MakeBackend makes a backend over a fresh MemMapFs.
func (h *AferoHarness) MakeBackend(ctx context.Context, t *testing.T) backend.Backend {
	return h.over(t, afero.NewMemMapFs())
}

// Reopen makes a second backend over b's file system.
func (h *AferoHarness) Reopen(ctx context.Context, t *testing.T, b backend.Backend) backend.Backend {
	fsys, _ := h.reg.lookup(t, b, h.reg.root())
	return h.over(t, fsys)
}

func (h *AferoHarness) over(t *testing.T, fsys afero.Fs) backend.Backend {
	b := h.make(t, fsys)
	h.reg.add(t, b, fsys)
	return b
}

// path maps a storage path of b onto its afero.Fs.
func (h *AferoHarness) path(t *testing.T, b backend.Backend, name string) (afero.Fs, string) {
	t.Helper()
	fsys, rel := h.reg.lookup(t, b, name)
	return fsys, "/" + rel
}

// ListRaw lists every non-directory in the file system, hidden or not.
func (h *AferoHarness) ListRaw(ctx context.Context, t *testing.T, b backend.Backend) []string {
	fsys, _ := h.path(t, b, h.reg.root())
	var out []string
	err := afero.Walk(fsys, "/", func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		out = append(out, backend.Join(h.reg.root(), strings.TrimPrefix(p, "/")))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Chmod sets the permission bits of name.
func (h *AferoHarness) Chmod(ctx context.Context, t *testing.T, b backend.Backend, name string, perm fs.FileMode) {
	fsys, p := h.path(t, b, name)
	if err := fsys.Chmod(p, perm); err != nil {
		t.Fatal(err)
	}
}

// Seed stores data as name in the file system.
func (h *AferoHarness) Seed(ctx context.Context, t *testing.T, b backend.Backend, name string, data []byte) {
	fsys, p := h.path(t, b, name)
	if err := fsys.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := afero.WriteFile(fsys, p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// SeedDir creates dir in the file system.
func (h *AferoHarness) SeedDir(ctx context.Context, t *testing.T, b backend.Backend, dir string) {
	fsys, p := h.path(t, b, dir)
	if err := fsys.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}
