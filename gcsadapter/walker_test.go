package gcsadapter

import (
	"errors"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

// walkKeys runs the walker over keys (relative to root, sorted as S3
// sorts them) and returns what it reported, "d:" for directories and
// "f:" for files.
func walkKeys(t *testing.T, root string, keys []string, fn backend.WalkFunc) ([]string, error) {
	t.Helper()
	keys = slices.Clone(keys)
	sort.Strings(keys)
	var got []string
	f := &FS{}
	w := &walker{root: root, valid: f.representable, fn: func(name string, e backend.DirEntry) error {
		kind := "f:"
		if e.IsDir() {
			kind = "d:"
		}
		if _, base := backend.Split(name); base != e.Name {
			t.Errorf("entry %q has Name %q", name, e.Name)
		}
		got = append(got, kind+name)
		if fn != nil {
			return fn(name, e)
		}
		return nil
	}}
	for _, k := range keys {
		if err := w.add(k, backend.DirEntry{Size: int64(len(k))}); err != nil {
			return got, err
		}
	}
	return got, w.finish()
}

func TestWalkerEntries(t *testing.T) {
	tests := []struct {
		name string
		root string
		keys []string
		want []string
	}{
		{"flat", ".", []string{"b", "a"}, []string{"f:a", "f:b"}},
		{"nested dirs reported once before contents", ".",
			[]string{"a/b/c", "a/b/d", "a/e", "f"},
			[]string{"d:a", "d:a/b", "f:a/b/c", "f:a/b/d", "f:a/e", "f:f"}},
		{"markers make empty dirs", ".",
			[]string{"empty/", "x/", "x/y/", "x/y/z"},
			[]string{"d:empty", "d:x", "d:x/y", "f:x/y/z"}},
		{"root marker ignored", "sub", []string{"", "f"}, []string{"f:sub/f"}},
		{"paths joined to the root", "r/s", []string{"a/b"}, []string{"d:r/s/a", "f:r/s/a/b"}},
		{"object and prefix: the directory wins", ".",
			[]string{"a", "a/b"},
			[]string{"d:a", "f:a/b"}},
		{"object and prefix with keys in between", ".",
			[]string{"a", "a-x", "a.txt", "a/b", "b"},
			[]string{"f:a-x", "f:a.txt", "d:a", "f:a/b", "f:b"}},
		{"chained object-and-prefix keys", ".",
			[]string{"a", "a-", "a-/x", "a/y"},
			[]string{"d:a-", "f:a-/x", "d:a", "f:a/y"}},
		{"object and marker", ".", []string{"d", "d/"}, []string{"d:d"}},
		{"unrepresentable keys skipped", ".",
			[]string{"/lead", "a//b", "a/./b", "a/../b", "~home/x", "t/~x", "back\\slash", "nul\x00", "C:/x", "ok/C:", "ok/fine"},
			[]string{"d:a", "d:ok", "f:ok/C:", "f:ok/fine", "d:t"}},
		{"over-long component skipped", ".",
			[]string{strings.Repeat("n", MaxNameBytes+1), "d/" + strings.Repeat("n", MaxNameBytes), "d/" + strings.Repeat("m", MaxNameBytes+1) + "/x"},
			[]string{"d:d", "f:d/" + strings.Repeat("n", MaxNameBytes)}},
		{"empty component below a good directory", ".", []string{"a//b", "a/c"}, []string{"d:a", "f:a/c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := walkKeys(t, tt.root, tt.keys, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("walk of %q\n got %q\nwant %q", tt.keys, got, tt.want)
			}
		})
	}
}

func TestWalkerSkipDir(t *testing.T) {
	keys := []string{"a/x", "a/y/z", "b", "c/d", "c/e"}
	got, err := walkKeys(t, ".", keys, func(name string, e backend.DirEntry) error {
		if name == "a" || name == "c" {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"d:a", "f:b", "d:c"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestWalkerStops(t *testing.T) {
	stop := errors.New("stop")
	got, err := walkKeys(t, ".", []string{"a", "b", "c"}, func(name string, e backend.DirEntry) error {
		if name == "b" {
			return stop
		}
		return nil
	})
	if err != errWalkFunc {
		t.Fatalf("error = %v, want errWalkFunc", err)
	}
	if want := []string{"f:a", "f:b"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestMergeEntries(t *testing.T) {
	files := []backend.DirEntry{{Name: "a"}, {Name: "b"}}
	dirs := []backend.DirEntry{dirEntry("a"), dirEntry("c")}
	got := mergeEntries(files, dirs)
	backend.SortEntries(got)
	var names []string
	for _, e := range got {
		names = append(names, e.Name+map[bool]string{true: "/", false: ""}[e.IsDir()])
	}
	if want := []string{"a/", "b", "c/"}; !slices.Equal(names, want) {
		t.Errorf("merged = %q, want %q", names, want)
	}
}

// FuzzWalker checks the walker's promises on arbitrary key sets: every
// reported path is canonical, reported once, as a file or a directory
// but never both, and after its parent directory.
func FuzzWalker(f *testing.F) {
	f.Add("a\na/b\na-x\nb/")
	f.Add("x//y\n/x\n~a\na/../b")
	f.Add("a\na.\na./b\na/\na/c")
	f.Fuzz(func(t *testing.T, list string) {
		keys := slices.Compact(slices.Sorted(slices.Values(strings.Split(list, "\n"))))
		seen := map[string]bool{}
		isDir := map[string]bool{}
		_, err := walkKeys(t, ".", keys, func(name string, e backend.DirEntry) error {
			if !backend.ValidPath(name) || name == "." {
				t.Errorf("reported non-canonical path %q", name)
			}
			if seen[name] {
				t.Errorf("reported %q twice", name)
			}
			seen[name] = true
			isDir[name] = e.IsDir()
			if parent, _ := backend.Split(name); parent != "." && !isDir[parent] {
				t.Errorf("reported %q before its directory %q", name, parent)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for name := range seen {
			if !isDir[name] && hasKeyBelow(keys, name) {
				t.Errorf("%q reported as a file but keys lie below it", name)
			}
		}
	})
}

func hasKeyBelow(keys []string, name string) bool {
	for _, k := range keys {
		if strings.HasPrefix(k, name+"/") {
			return true
		}
	}
	return false
}
