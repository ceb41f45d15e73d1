//go:build linux

package local

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

func TestResolveSymlinks(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		parent := t.TempDir()
		outside := filepath.Join(parent, "outside")
		rootReal := filepath.Join(parent, "real")
		rootAlias := filepath.Join(parent, "alias")
		makeTree(t, parent, tree{"outside/secret": "canary", "real/": "", "alias": "->real"})
		f := openTestFS(t, o, rootAlias)
		makeTree(t, rootReal, tree{
			"a.txt":         "a",
			"dir/b.txt":     "b",
			"dir/sub/c.txt": "c",
			"rel":           "->a.txt",
			"reldir":        "->dir",
			"up":            "->dir/sub/../b.txt",
			"dir/parent":    "->../a.txt",
			"dir/self":      "->.",
			"chain1":        "->chain2",
			"chain2":        "->reldir/sub",
			"absin":         "->" + rootAlias + "/dir/b.txt",
			"absreal":       "->" + rootReal + "/dir",
			"absroot":       "->" + rootReal,
			"absdotdot":     "->" + rootAlias + "/dir/../a.txt",
			"absout":        "->" + outside + "/secret",
			"absout2":       "->" + rootAlias + "/../outside",
			"relout":        "->../outside/secret",
			"dir/relout":    "->../../outside",
			"dangling":      "->missing/file.txt",
			"danglingout":   "->../missing",
			"loop1":         "->loop2",
			"loop2":         "->loop1",
			"selfloop":      "->selfloop/x",
			"tilde":         "->~home",
			"longtarget":    "->" + long(256),
			"etc":           "->/etc",
		})
		tests := []struct {
			name, want string
			err        error
		}{
			{".", ".", nil},
			{"a.txt", "a.txt", nil},
			{"dir/sub/c.txt", "dir/sub/c.txt", nil},
			{"missing", "missing", nil},
			{"missing/deeper/x", "missing/deeper/x", nil},
			{"dir/missing/x", "dir/missing/x", nil},
			{"a.txt/x", "a.txt/x", nil},
			{"rel", "a.txt", nil},
			{"reldir", "dir", nil},
			{"reldir/sub/c.txt", "dir/sub/c.txt", nil},
			{"reldir/new.txt", "dir/new.txt", nil},
			{"up", "dir/b.txt", nil},
			{"dir/parent", "a.txt", nil},
			{"dir/self/self/b.txt", "dir/b.txt", nil},
			{"chain1/c.txt", "dir/sub/c.txt", nil},
			{"absin", "dir/b.txt", nil},
			{"absreal/sub", "dir/sub", nil},
			{"absroot", ".", nil},
			{"absroot/a.txt", "a.txt", nil},
			{"absdotdot", "a.txt", nil},
			{"dangling", "missing/file.txt", nil},
			{"reldir/" + long(255), "dir/" + long(255), nil},
			{"absout", "", backend.ErrOutside},
			{"absout2", "", backend.ErrOutside},
			{"relout", "", backend.ErrOutside},
			{"dir/relout/secret", "", backend.ErrOutside},
			{"danglingout", "", backend.ErrOutside},
			{"etc", "", backend.ErrOutside},
			{"etc/passwd", "", backend.ErrOutside},
			{"loop1", "", backend.ErrLoop},
			{"loop1/x", "", backend.ErrLoop},
			{"selfloop", "", backend.ErrLoop},
			{"tilde", "", backend.ErrInvalidPath},
			{"longtarget", "", backend.ErrNameTooLong},
			{long(256), "", backend.ErrNameTooLong},
			{"missing/" + long(256), "", backend.ErrNameTooLong},
		}
		for _, tt := range tests {
			got, err := f.ResolveSymlinks(context.Background(), tt.name)
			wantErr(t, err, tt.err, tt.name, parent)
			if got != tt.want {
				t.Errorf("ResolveSymlinks(%q) = %q, want %q", tt.name, got, tt.want)
			}
		}
	})
}

// TestResolveMatchesKernel compares ResolveSymlinks with the kernel's own
// resolution (filepath.EvalSymlinks) for paths that stay inside the root.
func TestResolveMatchesKernel(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		f, root := newTestFS(t, o)
		makeTree(t, root, tree{"d1/d2/f": "x", "d1/l1": "->d2", "d1/d2/l2": "->../l1/f", "l3": "->d1/l1/l2",
			"d1/d2/l4": "->" + root + "/d1", "l5": "->d1/d2/l4/l1/../../l3"})
		for _, name := range []string{"d1/l1", "d1/d2/l2", "l3", "d1/d2/l4", "l5", "d1/l1/f"} {
			got, err := f.ResolveSymlinks(context.Background(), name)
			if err != nil {
				t.Fatal(err)
			}
			real, err := filepath.EvalSymlinks(filepath.Join(root, name))
			if err != nil {
				t.Fatal(err)
			}
			want, _ := filepath.Rel(root, real)
			if got != filepath.ToSlash(want) {
				t.Errorf("ResolveSymlinks(%q) = %q, kernel says %q", name, got, want)
			}
		}
	})
}

func TestReadlink(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		outside := t.TempDir()
		f, root := newTestFS(t, o)
		makeTree(t, root, tree{"a.txt": "a", "dir/": "", "rel": "->a.txt", "dir/up": "->../a.txt",
			"absin": "->" + root + "/dir/../a.txt", "absroot": "->" + root, "absout": "->" + outside,
			"linkdir": "->dir", "dangling": "->nowhere"})
		tests := []struct {
			name, want string
			err        error
		}{
			{"rel", "a.txt", nil},
			{"dir/up", "../a.txt", nil},
			{"dangling", "nowhere", nil},
			{"absin", "a.txt", nil},
			{"absroot", ".", nil},
			{"absout", "", backend.ErrOutside},
			{"a.txt", "", fs.ErrInvalid},
			{"dir", "", fs.ErrInvalid},
			{".", "", fs.ErrInvalid},
			{"missing", "", fs.ErrNotExist},
			{"linkdir/up", "", backend.ErrSymlink},
			{"a.txt/x", "", backend.ErrNotDir},
		}
		for _, tt := range tests {
			got, err := f.Readlink(context.Background(), tt.name)
			wantErr(t, err, tt.err, tt.name, root)
			if got != tt.want {
				t.Errorf("Readlink(%q) = %q, want %q", tt.name, got, tt.want)
			}
		}
	})
}

// TestResolvedPathsAreContained checks, for every entry of a tree full of
// links, that a resolved path really lies inside the root on the host.
func TestResolvedPathsAreContained(t *testing.T) {
	f, root := newTestFS(t, openers()[0])
	outside := t.TempDir()
	makeTree(t, root, tree{"d/f": "x", "d/in": "->../d", "d/out": "->" + outside, "x": "->d/in/in/out"})
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		got, err := f.ResolveSymlinks(context.Background(), filepath.ToSlash(rel))
		if err != nil {
			return nil // refused
		}
		host, _ := f.LocalPath(got)
		if real, err := filepath.EvalSymlinks(host); err == nil && !strings.HasPrefix(real+"/", root+"/") {
			t.Errorf("%s resolved to %s, which is %s on the host", rel, got, real)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Fatal(err)
	}
}
