package backend_test

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

// typeLister is listOnly with a TypeLister that records its calls.
type typeLister struct {
	*listOnly
	typeLists int
}

func (b *typeLister) ListTypes(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	b.typeLists++
	entries, err := b.List(ctx, dir)
	for i, e := range entries {
		entries[i] = backend.DirEntry{Name: e.Name, Type: e.Type, Size: -1}
	}
	return entries, err
}

func TestListTypes(t *testing.T) {
	ctx := context.Background()
	plain := newListOnly(map[string]string{"a.txt": "x", "d/b.txt": "yy"})
	entries, err := backend.ListTypes(ctx, plain, ".")
	if err != nil || len(entries) != 2 || plain.lists != 1 {
		t.Fatalf("fallback: %v entries, %v, %d List calls", entries, err, plain.lists)
	}

	tl := &typeLister{listOnly: newListOnly(map[string]string{"a.txt": "x", "d/b.txt": "yy"})}
	entries, err = backend.ListTypes(ctx, tl, ".")
	if err != nil || tl.typeLists != 1 {
		t.Fatalf("ListTypes was not used: %v, %d calls", err, tl.typeLists)
	}
	backend.SortEntries(entries)
	if len(entries) != 2 || entries[0].Name != "a.txt" || entries[0].Size != -1 || !entries[1].IsDir() {
		t.Errorf("entries = %+v", entries)
	}

	if _, err := backend.ListTypes(ctx, tl, "a.txt"); err == nil {
		t.Error("listing a file succeeded")
	}
	if _, err := backend.ListTypes(ctx, plain, "missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("listing a missing directory: %v, want not-exist", err)
	}
}
