package overlay_test

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"sync"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/memfs"
	"github.com/fencefs/fencefs/overlay"
)

// layerHarness makes the backends of one layer and reaches their storage.
type layerHarness interface {
	conformance.Harness
	conformance.Seeder
	conformance.RawLister
	conformance.Reopener
}

// layers are the two backends under an overlay, as their harnesses made
// them (before any read-only wrapper).
type layers struct{ base, upper backend.Backend }

// harness makes overlays over backends of two layer harnesses. Seeding
// goes to the base, so the read tests read through the overlay from the
// base; the raw listing is both layers' with the overlay's index left out.
type harness struct {
	base, upper     layerHarness
	baseRO, upperRO bool
	mu              sync.Mutex
	made            map[backend.Backend]layers
}

func newHarness(base, upper layerHarness, baseRO, upperRO bool) *harness {
	return &harness{base: base, upper: upper, baseRO: baseRO, upperRO: upperRO, made: map[backend.Backend]layers{}}
}

func (h *harness) MakeBackend(ctx context.Context, t *testing.T) backend.Backend {
	return h.over(t, layers{h.base.MakeBackend(ctx, t), h.upper.MakeBackend(ctx, t)})
}

// over returns an overlay over l.
func (h *harness) over(t *testing.T, l layers) backend.Backend {
	t.Helper()
	base, upper := l.base, l.upper
	if h.baseRO {
		base = backend.ReadOnly(base)
	}
	if h.upperRO {
		upper = backend.ReadOnly(upper)
	}
	o, err := overlay.New(base, upper, overlay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	h.made[o] = l
	h.mu.Unlock()
	t.Cleanup(func() {
		h.mu.Lock()
		delete(h.made, o)
		h.mu.Unlock()
	})
	return o
}

// layersOf returns the layers under b.
func (h *harness) layersOf(t *testing.T, b backend.Backend) layers {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	l, ok := h.made[b]
	if !ok {
		t.Fatalf("backend %v was not made by this harness", b)
	}
	return l
}

func (h *harness) Seed(ctx context.Context, t *testing.T, b backend.Backend, name string, data []byte) {
	h.base.Seed(ctx, t, h.layersOf(t, b).base, name, data)
}

func (h *harness) SeedDir(ctx context.Context, t *testing.T, b backend.Backend, dir string) {
	h.base.SeedDir(ctx, t, h.layersOf(t, b).base, dir)
}

func (h *harness) ListRaw(ctx context.Context, t *testing.T, b backend.Backend) []string {
	l := h.layersOf(t, b)
	out := h.base.ListRaw(ctx, t, l.base)
	for _, name := range h.upper.ListRaw(ctx, t, l.upper) {
		if name != overlay.IndexName && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

func (h *harness) Reopen(ctx context.Context, t *testing.T, b backend.Backend) backend.Backend {
	l := h.layersOf(t, b)
	return h.over(t, layers{h.base.Reopen(ctx, t, l.base), h.upper.Reopen(ctx, t, l.upper)})
}

// memHarness makes memfs layers.
type memHarness struct{}

func (memHarness) MakeBackend(ctx context.Context, t *testing.T) backend.Backend { return memfs.New() }

func (memHarness) Reopen(ctx context.Context, t *testing.T, b backend.Backend) backend.Backend {
	return b.(*memfs.FS).Reopen()
}

func (memHarness) Seed(ctx context.Context, t *testing.T, b backend.Backend, name string, data []byte) {
	t.Helper()
	if err := backend.WriteFile(ctx, b, name, data, backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (memHarness) SeedDir(ctx context.Context, t *testing.T, b backend.Backend, dir string) {
	t.Helper()
	if err := backend.MkdirAll(ctx, b, dir); err != nil {
		t.Fatal(err)
	}
}

// ListRaw lists every file; a memfs hides nothing.
func (memHarness) ListRaw(ctx context.Context, t *testing.T, b backend.Backend) []string {
	t.Helper()
	var out []string
	err := backend.WalkByList(ctx, b, ".", func(name string, e backend.DirEntry) error {
		if !e.IsDir() {
			out = append(out, name)
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}

// abilities are every ability the overlay harness has.
func abilities() []conformance.Ability {
	return []conformance.Ability{conformance.AbilityRawLister, conformance.AbilitySeeder, conformance.AbilityReopener}
}
