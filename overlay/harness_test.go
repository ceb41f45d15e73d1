package overlay_test

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/memfs"
)

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
