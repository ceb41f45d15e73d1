package objstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

// testKeys has the limits the adapters share.
var testKeys = Keys{limits: Limits{MaxKeyBytes: 1024, MaxNameBytes: maxName}}

const maxName = 255

// walkKeys runs the walker over keys (relative to root, sorted as S3
// sorts them) and returns what it reported, "d:" for directories and
// "f:" for files.
func walkKeys(t *testing.T, root string, keys []string, fn backend.WalkFunc) ([]string, error) {
	t.Helper()
	keys = slices.Clone(keys)
	sort.Strings(keys)
	var got []string
	w := &walker{root: root, valid: testKeys.Valid, fn: func(name string, e backend.DirEntry) error {
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
			[]string{strings.Repeat("n", maxName+1), "d/" + strings.Repeat("n", maxName), "d/" + strings.Repeat("m", maxName+1) + "/x"},
			[]string{"d:d", "f:d/" + strings.Repeat("n", maxName)}},
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
	dirs := []backend.DirEntry{{Name: "a", Type: fs.ModeDir}, {Name: "c", Type: fs.ModeDir}}
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

// seekList is a Lister over sorted keys, pageSize a page, that can seek
// as S3's StartAfter does, and counts its pages.
type seekList struct {
	keys     []string
	pageSize int
	next     int
	pages    int
	err      error
}

func (l *seekList) More() bool { return l.next < len(l.keys) }

func (l *seekList) NextPage(context.Context) ([]Object, error) {
	l.pages++
	if l.err != nil {
		return nil, l.err
	}
	var page []Object
	for _, k := range l.keys[l.next:min(l.next+l.pageSize, len(l.keys))] {
		page = append(page, Object{Key: k})
	}
	l.next += len(page)
	return page, nil
}

func (l *seekList) Seek(key string) {
	l.next, _ = slices.BinarySearch(l.keys, key)
	for l.next < len(l.keys) && l.keys[l.next] <= key {
		l.next++
	}
}

// TestWalkSeeksPastSkippedDir checks that a directory fn skips costs no
// pages beyond the one it starts in, and that the walk goes on after it.
func TestWalkSeeksPastSkippedDir(t *testing.T) {
	var keys []string
	for i := range 100 {
		keys = append(keys, fmt.Sprintf("p/big/%03d", i))
	}
	keys = append(keys, "p/z")
	k := Keys{prefix: "p/"}
	l := &seekList{keys: keys, pageSize: 10}
	var got []string
	found, err := k.Walk(context.Background(), l, ".", func(name string, e backend.DirEntry) error {
		got = append(got, name)
		if name == "big" {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil || !found {
		t.Fatalf("Walk = %v, %v", found, err)
	}
	if want := []string{"big", "z"}; !slices.Equal(got, want) {
		t.Errorf("walked %q, want %q", got, want)
	}
	if l.pages != 2 {
		t.Errorf("%d pages listed, want 2 (the first, then the one after the skipped directory)", l.pages)
	}
}

func TestWalkErrors(t *testing.T) {
	ctx := context.Background()
	k := Keys{}
	listErr := errors.New("listing failed")
	_, err := k.Walk(ctx, &seekList{keys: []string{"a"}, pageSize: 1, err: listErr}, "d", func(string, backend.DirEntry) error { return nil })
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Op != "walk" || pe.Path != "d" || pe.Err != listErr {
		t.Errorf("listing error = %#v, want *fs.PathError{walk d listing failed}", err)
	}
	stop := errors.New("stop")
	_, err = k.Walk(ctx, &seekList{keys: []string{"a", "b"}, pageSize: 1}, ".", func(string, backend.DirEntry) error { return stop })
	if err != stop {
		t.Errorf("fn's error = %v, want it as it is", err)
	}
	var n int
	_, err = k.Walk(ctx, &seekList{keys: []string{"a", "b"}, pageSize: 1}, ".", func(string, backend.DirEntry) error { n++; return fs.SkipAll })
	if err != nil || n != 1 {
		t.Errorf("SkipAll: err %v after %d calls, want nil after 1", err, n)
	}
	found, err := k.Walk(ctx, &seekList{}, "d", func(string, backend.DirEntry) error { return nil })
	if found || err != nil {
		t.Errorf("empty listing: found %v, err %v", found, err)
	}
}

// TestList checks a delimited listing: common prefixes are directories,
// which hide objects of their name, and the directory's own marker and
// keys that cannot be named are skipped.
func TestList(t *testing.T) {
	k := Keys{prefix: "p/", limits: Limits{MaxKeyBytes: 1024, MaxNameBytes: maxName}}
	l := &seekList{pageSize: 2, keys: []string{"p/d/", "p/d/a", "p/d/a/", "p/d/b", "p/d/c/", "p/d/~x", "p/d/~y/"}}
	got, found, err := k.List(context.Background(), l, "d")
	if err != nil || !found {
		t.Fatalf("List = %v, %v", found, err)
	}
	backend.SortEntries(got)
	var names []string
	for _, e := range got {
		names = append(names, e.Name+map[bool]string{true: "/", false: ""}[e.IsDir()])
	}
	if want := []string{"a/", "b", "c/"}; !slices.Equal(names, want) {
		t.Errorf("List = %q, want %q", names, want)
	}
}
