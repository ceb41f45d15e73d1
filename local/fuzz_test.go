//go:build linux

package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

// FuzzParseDirents feeds arbitrary bytes to the getdents parser: it must
// not panic, and every name must be a plausible single component.
func FuzzParseDirents(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x18\x00\x08abc\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, buf []byte) {
		names := parseDirents(buf, nil)
		if len(names) > len(buf)/direntName {
			t.Fatalf("%d names from %d bytes", len(names), len(buf))
		}
		for _, n := range names {
			if n == "" || n == "." || n == ".." || strings.IndexByte(n, 0) >= 0 {
				t.Fatalf("bad name %q", n)
			}
		}
	})
}

// FuzzMapHostPath checks that any host path maps either to an error or to
// a canonical storage path that names the same place below the root.
func FuzzMapHostPath(f *testing.F) {
	root := f.TempDir()
	fsys, err := New(root)
	if err != nil {
		f.Fatal(err)
	}
	defer fsys.Close()
	for _, s := range []string{root, root + "/a/../b", "/etc/passwd", root + "/..", root + "x", "rel", root + "//a/./b/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		rel, err := fsys.MapHostPath(host)
		if err != nil {
			return
		}
		if !backend.ValidPath(rel) {
			t.Fatalf("MapHostPath(%q) = %q, not canonical", host, rel)
		}
		if got := filepath.Join(root, rel); got != filepath.Clean(host) {
			t.Fatalf("MapHostPath(%q) = %q, which is %q on the host", host, rel, got)
		}
	})
}

// FuzzResolveSymlinks makes a symlink with an arbitrary target inside a
// small tree and checks that resolving through it either fails or gives a
// canonical path whose host location really lies inside the root.
func FuzzResolveSymlinks(f *testing.F) {
	parent := f.TempDir()
	root := filepath.Join(parent, "root")
	makeTree(f, parent, tree{"root/d/f": "x", "root/d/in": "->../d", "outside/g": "y"})
	fsys, err := New(root)
	if err != nil {
		f.Fatal(err)
	}
	defer fsys.Close()
	for _, s := range []string{"d", "../outside", root + "/d/in", "d/in/in/../f", "/etc", "~x", "l/x", strings.Repeat("a/", 50)} {
		f.Add(s, "f")
	}
	f.Fuzz(func(t *testing.T, target, rest string) {
		if strings.IndexByte(target, 0) >= 0 || target == "" || len(target) >= 4096 {
			return
		}
		link := filepath.Join(root, "l")
		os.Remove(link)
		if err := os.Symlink(target, link); err != nil {
			return
		}
		name := "l"
		if backend.ValidPath(rest) {
			name += "/" + rest
		}
		got, err := fsys.ResolveSymlinks(context.Background(), name)
		if err != nil {
			return
		}
		if !backend.ValidPath(got) {
			t.Fatalf("ResolveSymlinks(%q) via %q = %q, not canonical", name, target, got)
		}
		host, _ := fsys.LocalPath(got)
		real := deepestReal(host)
		if real != root && !strings.HasPrefix(real, root+"/") {
			t.Fatalf("ResolveSymlinks(%q) via %q = %q, which is %s on the host", name, target, got, real)
		}
	})
}

// deepestReal resolves the longest existing prefix of p on the host.
func deepestReal(p string) string {
	for {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return real
		}
		parent := filepath.Dir(p)
		if parent == p {
			return p
		}
		p = parent
	}
}
