//go:build linux

package local

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

// describe renders entries as "name type size" lines, sorted.
func describe(entries []backend.DirEntry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, fmt.Sprintf("%s %v %d", e.Name, e.Type, e.Size))
	}
	slices.Sort(out)
	return out
}

func TestList(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		outside := t.TempDir()
		makeTree(t, outside, tree{"canary": "x"})
		f, root := newTestFS(t, o)
		makeTree(t, root, tree{"a.txt": "hello", "dir/b.txt": "bee", "dir/sub/": "", "empty/": "",
			"link": "->a.txt", "linkdir": "->dir", "escape": "->" + outside, "fifo": "|fifo", "sock": "|sock"})
		tests := []struct {
			dir  string
			want []string
			err  error
		}{
			{".", []string{
				"a.txt ---------- 5", "dir d--------- " + hostSize(t, root, "dir"), "empty d--------- " + hostSize(t, root, "empty"), "escape L--------- " + fmt.Sprint(len(outside)),
				"fifo p--------- -1", "link L--------- 5", "linkdir L--------- 3", "sock S--------- -1"}, nil},
			{"dir", []string{"b.txt ---------- 3", "sub d--------- " + hostSize(t, root, "dir/sub")}, nil},
			{"empty", nil, nil},
			{"missing", nil, fs.ErrNotExist},
			{"a.txt", nil, backend.ErrNotDir},
			{"fifo", nil, backend.ErrNotDir},
			{"linkdir", nil, backend.ErrNotDir},
			{"escape", nil, backend.ErrNotDir},
			{"linkdir/sub", nil, backend.ErrSymlink},
			{"escape/x", nil, backend.ErrSymlink},
		}
		for _, tt := range tests {
			entries, err := f.List(context.Background(), tt.dir)
			wantErr(t, err, tt.err, tt.dir, root)
			if got := describe(entries); !slices.Equal(got, tt.want) {
				t.Errorf("List(%q) = %q, want %q", tt.dir, got, tt.want)
			}
			for _, e := range entries {
				if e.ModTime.IsZero() {
					t.Errorf("List(%q): %s has no mod time", tt.dir, e.Name)
				}
			}
		}
	})
}

// TestListLarge lists a directory that takes several getdents calls and
// compares it with os.ReadDir.
func TestListLarge(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		f, root := newTestFS(t, o)
		for i := range 1200 {
			name := fmt.Sprintf("%04d-%s", i, strings.Repeat("x", i%200))
			if err := os.WriteFile(filepath.Join(root, name), []byte(name), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		entries, err := f.List(context.Background(), ".")
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadDir(root)
		if err != nil {
			t.Fatal(err)
		}
		backend.SortEntries(entries)
		if len(entries) != len(want) {
			t.Fatalf("%d entries, want %d", len(entries), len(want))
		}
		for i, e := range entries {
			if e.Name != want[i].Name() || e.Size != int64(len(e.Name)) {
				t.Fatalf("entry %d = %+v, want %s", i, e, want[i].Name())
			}
		}
	})
}

func TestWalk(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		outside := t.TempDir()
		makeTree(t, outside, tree{"canary": "x"})
		f, root := newTestFS(t, o)
		makeTree(t, root, tree{"a/b.txt": "b", "a/c/d.txt": "d", "a.txt": "a", "skip/x.txt": "x",
			"linkdir": "->a", "escape": "->" + outside, "empty/": ""})
		tests := []struct {
			dir  string
			skip string // directory for which fn returns fs.SkipDir
			want []string
			err  error
		}{
			{".", "", []string{"a/", "a/b.txt", "a/c/", "a/c/d.txt", "a.txt", "empty/", "escape@", "linkdir@", "skip/", "skip/x.txt"}, nil},
			{".", "skip", []string{"a/", "a/b.txt", "a/c/", "a/c/d.txt", "a.txt", "empty/", "escape@", "linkdir@", "skip/"}, nil},
			{".", "a", []string{"a/", "a.txt", "empty/", "escape@", "linkdir@", "skip/", "skip/x.txt"}, nil},
			{"a", "", []string{"a/b.txt", "a/c/", "a/c/d.txt"}, nil},
			{"empty", "", nil, nil},
			{"missing", "", nil, fs.ErrNotExist},
			{"a.txt", "", nil, backend.ErrNotDir},
			{"linkdir", "", nil, backend.ErrNotDir},
			{"linkdir/c", "", nil, backend.ErrSymlink},
		}
		for _, tt := range tests {
			var got []string
			err := f.Walk(context.Background(), tt.dir, func(name string, e backend.DirEntry) error {
				switch {
				case e.IsDir():
					got = append(got, name+"/")
				case e.IsSymlink():
					got = append(got, name+"@")
				default:
					got = append(got, name)
				}
				if name == tt.skip {
					return fs.SkipDir
				}
				return nil
			})
			wantErr(t, err, tt.err, tt.dir, root)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Walk(%q) skipping %q = %q, want %q", tt.dir, tt.skip, got, tt.want)
			}
		}
	})
}

// TestWalkMatchesBackendWalk checks that Walk reports what the generic
// list-based walk of package backend reports, in the same order.
func TestWalkMatchesBackendWalk(t *testing.T) {
	f, root := newTestFS(t, openers()[0])
	makeTree(t, root, tree{"a/b.txt": "b", "a/c/d.txt": "d", "a.txt": "a", "a-b/x": "x", "l": "->a"})
	collect := func(walk func(fn backend.WalkFunc) error) []string {
		var out []string
		if err := walk(func(name string, e backend.DirEntry) error {
			out = append(out, fmt.Sprintf("%s %v %d", name, e.Type, e.Size))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	ctx := context.Background()
	got := collect(func(fn backend.WalkFunc) error { return f.Walk(ctx, ".", fn) })
	want := collect(func(fn backend.WalkFunc) error { return backend.Walk(ctx, listOnly{f}, ".", fn) })
	if !slices.Equal(got, want) {
		t.Fatalf("Walk = %q\nbackend.Walk = %q", got, want)
	}
}

// listOnly hides every optional ability of a backend.
type listOnly struct{ backend.Backend }

func TestWalkStops(t *testing.T) {
	f, root := newTestFS(t, openers()[0])
	makeTree(t, root, tree{"a/b.txt": "b", "c.txt": "c"})
	stop := errors.New("stop")
	calls := 0
	err := f.Walk(context.Background(), ".", func(string, backend.DirEntry) error {
		calls++
		return stop
	})
	if err != stop || calls != 1 {
		t.Fatalf("Walk returned %v after %d calls, want the callback's error after 1", err, calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	err = f.Walk(ctx, ".", func(string, backend.DirEntry) error { cancel(); return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Walk with a context cancelled midway returned %v", err)
	}
}

func TestParseDirents(t *testing.T) {
	rec := func(name string, pad int) []byte {
		b := make([]byte, direntName+len(name)+1+pad)
		binary.NativeEndian.PutUint16(b[direntReclen:], uint16(len(b)))
		copy(b[direntName:], name)
		return b
	}
	cat := func(bs ...[]byte) []byte { return slices.Concat(bs...) }
	tests := []struct {
		name string
		buf  []byte
		want []string
	}{
		{"empty", nil, nil},
		{"dots skipped", cat(rec(".", 4), rec("..", 3), rec("a", 0)), []string{"a"}},
		{"padding", cat(rec("file", 5), rec("x", 2)), []string{"file", "x"}},
		{"truncated record", cat(rec("a", 0), rec("bcd", 0)[:10]), []string{"a"}},
		{"reclen too small", cat(rec("a", 0), func() []byte {
			b := rec("z", 0)
			binary.NativeEndian.PutUint16(b[direntReclen:], 3)
			return b
		}()), []string{"a"}},
		{"reclen past end", cat(rec("a", 0), func() []byte {
			b := rec("b", 0)
			binary.NativeEndian.PutUint16(b[direntReclen:], 200)
			return b
		}()), []string{"a"}},
	}
	for _, tt := range tests {
		if got := parseDirents(tt.buf, nil); !slices.Equal(got, tt.want) {
			t.Errorf("%s: parseDirents = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// hostSize returns the host's lstat size of root/name, as text: a
// directory's size is whatever the host filesystem reports.
func hostSize(t *testing.T, root, name string) string {
	t.Helper()
	fi, err := os.Lstat(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(fi.Size())
}
