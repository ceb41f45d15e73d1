package backend_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

// fallbackWalker is a Walker that always falls back to listing, as an
// adapter's Walk does when its fast path cannot serve a call.
type fallbackWalker struct{ *listOnly }

func (w fallbackWalker) Walk(ctx context.Context, dir string, fn backend.WalkFunc) error {
	return backend.WalkByList(ctx, w, dir, fn)
}

func TestWalkByListIsAWalkerFallback(t *testing.T) {
	w := fallbackWalker{sampleTree()}
	var got []string
	err := backend.Walk(context.Background(), w, ".", func(name string, e backend.DirEntry) error {
		got = append(got, name)
		return nil
	})
	want := []string{"a", "a/b.txt", "a/c", "a/c/d.txt", "a.txt", "b", "z", "z/deep", "z/deep/y.md"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Walk through a falling-back Walker = %q, %v; want %q", got, err, want)
	}
	if w.lists == 0 {
		t.Errorf("WalkByList listed nothing")
	}
}
