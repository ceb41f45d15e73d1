package mounted_test

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

// FuzzRoute checks that any storage path is either refused as invalid or
// routed, that errors name the path asked for, and that resolution keeps
// paths canonical and on the same mount.
func FuzzRoute(f *testing.F) {
	for _, s := range []string{".", "ws", "ws/a.txt", "ws/src/main.go", "nope/x", "ro/ref.txt", "plain/d/q.txt",
		"ws/", "/ws", "ws//a", "ws/../tenant", "C:", "ws/C:", "~", "ws/a.txt/x", "\xff"} {
		f.Add(s)
	}
	m, _ := newNamespace(f) // only read, so shared by every input
	f.Fuzz(func(t *testing.T, name string) {
		ctx := context.Background()
		_, err := m.Stat(ctx, name)
		if !backend.ValidPath(name) {
			if !errors.Is(err, backend.ErrInvalidPath) {
				t.Fatalf("Stat(%q) = %v, want ErrInvalidPath", name, err)
			}
			return
		}
		if err != nil {
			var pe *fs.PathError
			if !errors.As(err, &pe) || pe.Path != name {
				t.Fatalf("Stat(%q) error %#v does not name the path", name, err)
			}
		}
		resolved, err := m.ResolveSymlinks(ctx, name)
		if err != nil {
			return
		}
		if !backend.ValidPath(resolved) {
			t.Fatalf("ResolveSymlinks(%q) = %q, not canonical", name, resolved)
		}
		mount, _, _ := strings.Cut(name, "/")
		if !backend.IsWithin(resolved, mount) {
			t.Fatalf("ResolveSymlinks moved %q to another mount: %q", name, resolved)
		}
	})
}
