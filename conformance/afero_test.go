package conformance_test

import (
	"context"
	"io/fs"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/backend"
)

// aferoHarness makes backends over fresh afero file systems and arranges
// and inspects their storage through afero directly. prefix is the
// storage directory under which the afero root appears in the backend
// ("" for its root, a mount name for a mounted namespace).
type aferoHarness struct {
	prefix string
	make   func(t *testing.T, fsys afero.Fs) backend.Backend

	mu  sync.Mutex
	fss map[backend.Backend]afero.Fs
}

func newAferoHarness(prefix string, make func(t *testing.T, fsys afero.Fs) backend.Backend) *aferoHarness {
	return &aferoHarness{prefix: prefix, make: make, fss: map[backend.Backend]afero.Fs{}}
}

func (h *aferoHarness) MakeBackend(ctx context.Context, t *testing.T) backend.Backend {
	fsys := afero.NewMemMapFs()
	b := h.make(t, fsys)
	h.mu.Lock()
	h.fss[b] = fsys
	h.mu.Unlock()
	t.Cleanup(func() {
		h.mu.Lock()
		delete(h.fss, b)
		h.mu.Unlock()
	})
	return b
}

// path maps a storage path of b onto its afero.Fs.
func (h *aferoHarness) path(t *testing.T, b backend.Backend, name string) (afero.Fs, string) {
	t.Helper()
	h.mu.Lock()
	fsys, ok := h.fss[b]
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
	if rel == "" || rel == "." {
		return fsys, "/"
	}
	return fsys, "/" + rel
}

func (h *aferoHarness) ListRaw(ctx context.Context, t *testing.T, b backend.Backend) []string {
	fsys, _ := h.path(t, b, orRoot(h.prefix))
	var out []string
	err := afero.Walk(fsys, "/", func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		out = append(out, backend.Join(orRoot(h.prefix), strings.TrimPrefix(p, "/")))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// orRoot returns prefix, or "." for the root when it is empty.
func orRoot(prefix string) string {
	if prefix == "" {
		return "."
	}
	return prefix
}

func (h *aferoHarness) Chmod(ctx context.Context, t *testing.T, b backend.Backend, name string, perm fs.FileMode) {
	fsys, p := h.path(t, b, name)
	if err := fsys.Chmod(p, perm); err != nil {
		t.Fatal(err)
	}
}

func (h *aferoHarness) Seed(ctx context.Context, t *testing.T, b backend.Backend, name string, data []byte) {
	fsys, p := h.path(t, b, name)
	dir, _ := backend.Split(strings.TrimPrefix(p, "/"))
	if err := fsys.MkdirAll("/"+dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := afero.WriteFile(fsys, p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func (h *aferoHarness) SeedDir(ctx context.Context, t *testing.T, b backend.Backend, dir string) {
	fsys, p := h.path(t, b, dir)
	if err := fsys.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}
