package local

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

// TestOpenReadNoLinks: a path without links opens and reads, and a link
// on any component (the leaf, a directory on the way, one leading out of
// the root, a dangling one) is refused, with both openers: TraceSymlinks
// would have resolved such a path elsewhere, so a caller must not take it
// as resolved.
func TestOpenReadNoLinks(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		f, root := newTestFS(t, o)
		outside := t.TempDir()
		makeTree(t, outside, tree{"secret": "s\n"})
		makeTree(t, root, tree{"d/f.txt": "plain\n", "l.txt": "->d/f.txt", "ld": "->d",
			"out": "->" + outside, "dangling": "->nope"})
		ctx := context.Background()
		var nl backend.NoLinksReader = f
		r, err := nl.OpenReadNoLinks(ctx, "d/f.txt")
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil || string(data) != "plain\n" {
			t.Fatalf("read %q, %v", data, err)
		}
		if resolved, err := f.TraceSymlinks(ctx, "d/f.txt", nil); err != nil || resolved != "d/f.txt" {
			t.Fatalf("TraceSymlinks %q, %v: the path has no link", resolved, err)
		}
		for _, name := range []string{"l.txt", "ld/f.txt", "out/secret", "dangling"} {
			r, err := nl.OpenReadNoLinks(ctx, name)
			if err == nil {
				r.Close()
				t.Errorf("%s: opened through a link", name)
				continue
			}
			if !errors.Is(err, backend.ErrSymlink) && !errors.Is(err, backend.ErrNotRegular) {
				t.Errorf("%s: %v, want a link refused", name, err)
			}
			if r, ok := backend.OpenReadNoLinks(ctx, f, name); ok {
				r.Close()
				t.Errorf("%s: backend.OpenReadNoLinks opened through a link", name)
			}
		}
	})
}
