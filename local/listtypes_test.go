//go:build linux

package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

// TestListTypes checks that ListTypes gives List's names and types, with
// no sizes, and List's errors.
func TestListTypes(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		outside := t.TempDir()
		f, root := newTestFS(t, o)
		makeTree(t, root, tree{"a.txt": "hello", "dir/b.txt": "bee", "dir/sub/": "", "empty/": "",
			"link": "->a.txt", "linkdir": "->dir", "escape": "->" + outside, "fifo": "|fifo", "sock": "|sock"})
		// More records than one getdents buffer holds, so the listing grows
		// over several reads of a reused buffer.
		big := tree{}
		for i := range 1500 {
			big[fmt.Sprintf("big/%s-%04d", strings.Repeat("n", 40), i)] = ""
		}
		makeTree(t, root, big)
		types := func(entries []backend.DirEntry) []string {
			var out []string
			for _, e := range entries {
				out = append(out, fmt.Sprintf("%s %v", e.Name, e.Type))
			}
			slices.Sort(out)
			return out
		}
		for _, dir := range []string{".", "dir", "big", "empty", "missing", "a.txt", "fifo", "linkdir", "linkdir/sub"} {
			want, wantErr := f.List(context.Background(), dir)
			got, err := f.ListTypes(context.Background(), dir)
			if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
				t.Errorf("ListTypes(%q) error %v, List's %v", dir, err, wantErr)
			}
			if !slices.Equal(types(got), types(want)) {
				t.Errorf("ListTypes(%q) = %q, List gives %q", dir, types(got), types(want))
			}
			for _, e := range got {
				if e.Size != -1 || !e.ModTime.IsZero() {
					t.Errorf("ListTypes(%q): %s has size %d, mod time %v", dir, e.Name, e.Size, e.ModTime)
				}
			}
		}
		var _ backend.TypeLister = f
		if _, err := f.ListTypes(context.Background(), "../x"); err == nil || !errorsIsInvalid(err) {
			t.Errorf("ListTypes(../x) = %v, want an invalid path", err)
		}
	})
}

func errorsIsInvalid(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && errors.Is(err, fs.ErrInvalid)
}
