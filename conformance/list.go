package conformance

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/fencefs/fencefs/backend"
)

func (s *suite) listTests() []testCase {
	return []testCase{
		{"EmptyRoot", s.testEmptyRoot},
		{"StatRoot", s.testStatRoot},
		{"Entries", s.testListEntries},
		{"NoDuplicates", s.testListNoDuplicates},
		{"StatMatchesList", s.testStatMatchesList},
		{"StatFallback", s.testStatFallback},
		{"ModTimes", s.testModTimes},
		{"EmptyDirectory", s.testListEmptyDir},
	}
}

// testEmptyRoot checks that a fresh backend lists nothing (and that its
// root lists at all).
func (s *suite) testEmptyRoot(t *testing.T) {
	e := s.setup(t)
	entries, err := e.b.List(e.ctx, ".")
	if err != nil {
		t.Fatalf("List(\".\") of a fresh backend: %v", err)
	}
	if e.s.opts.Dir == "." && len(entries) != 0 {
		t.Errorf("List(\".\") of a fresh backend = %+v, want nothing", entries)
	}
	if names := e.listOrEmpty(e.p(".")); len(names) != 0 {
		t.Errorf("List(%q) of a fresh backend = %q, want nothing", e.p("."), names)
	}
}

// testStatRoot checks that the root is a directory named ".", before and
// after content arrives.
func (s *suite) testStatRoot(t *testing.T) {
	e := s.setup(t)
	check := func() {
		t.Helper()
		fi, err := backend.Stat(e.ctx, e.b, ".")
		if err != nil {
			t.Fatalf("Stat(\".\"): %v", err)
		}
		if !fi.IsDir() {
			t.Errorf("Stat(\".\") = %+v, want a directory", fi)
		}
	}
	check()
	if e.canArrange() {
		e.put("f", []byte("x"))
		check()
		e.wantDir(e.p("."))
	}
}

// arrangeTree stores a small tree: files f (3 bytes) and d/g (5 bytes),
// d/h/i (0 bytes), and when possible the empty directory e.
func (e *env) arrangeTree() (emptyDir bool) {
	e.t.Helper()
	e.requireArrange()
	e.put("f", []byte("abc"))
	e.put("d/g", []byte("hello"))
	e.put("d/h/i", nil)
	if !e.caps.EmptyDirs {
		return false
	}
	if _, ok := e.s.h.(Seeder); ok || (implements[backend.DirMaker](e.b) && !e.caps.ReadOnly) {
		e.mkdir("e")
		return true
	}
	return false
}

// wantEntry checks one listing entry against what was arranged.
func (e *env) wantEntry(dir string, en backend.DirEntry, isDir bool, size int64) {
	e.t.Helper()
	where := fmt.Sprintf("List(%q) entry %q", dir, en.Name)
	switch {
	case isDir && !en.IsDir():
		e.t.Errorf("%s has type %v, want a directory", where, en.Type)
	case !isDir && !en.IsRegular():
		e.t.Errorf("%s has type %v, want a regular file", where, en.Type)
	case !isDir && en.Size != -1 && en.Size != size:
		e.t.Errorf("%s has size %d, want %d (or -1 for unknown)", where, en.Size, size)
	}
}

// testListEntries checks names, type bits and sizes of listing entries.
func (s *suite) testListEntries(t *testing.T) {
	e := s.setup(t)
	emptyDir := e.arrangeTree()
	type want struct {
		dir  bool
		size int64
	}
	wants := map[string]map[string]want{
		".":   {"f": {false, 3}, "d": {dir: true}},
		"d":   {"g": {false, 5}, "h": {dir: true}},
		"d/h": {"i": {false, 0}},
	}
	if emptyDir {
		wants["."]["e"] = want{dir: true}
		wants["e"] = map[string]want{}
	}
	for dir, children := range wants {
		entries := e.list(e.p(dir))
		var got []string
		for _, en := range entries {
			got = append(got, en.Name)
			if strings.Contains(en.Name, "/") || en.Name == "" || en.Name == "." || en.Name == ".." {
				t.Errorf("List(%q) has entry name %q, want a single path component", e.p(dir), en.Name)
			}
			w, ok := children[en.Name]
			if !ok {
				t.Errorf("List(%q) has unexpected entry %+v", e.p(dir), en)
				continue
			}
			e.wantEntry(e.p(dir), en, w.dir, w.size)
		}
		if len(entries) != len(children) {
			t.Errorf("List(%q) names = %q, want %d entries", e.p(dir), got, len(children))
		}
	}
}

// testListNoDuplicates checks that a directory that is also a prefix of
// a file name, or that was created explicitly and then filled, is listed
// once.
func (s *suite) testListNoDuplicates(t *testing.T) {
	e := s.setup(t)
	e.requireArrange()
	if e.canMkdir() {
		e.mkdir("d")
	}
	e.put("d/x", []byte("1"))
	e.put("d.txt", []byte("2"))
	e.put("d-x", []byte("3"))
	e.put("dd/y", []byte("4"))
	e.wantNames(e.p("."), "d", "d-x", "d.txt", "dd")
	e.wantNames(e.p("d"), "x")
}

// canMkdir reports whether an empty directory can be made.
func (e *env) canMkdir() bool {
	if _, ok := e.s.h.(Seeder); ok {
		return true
	}
	return implements[backend.DirMaker](e.b) && !e.caps.ReadOnly
}

// testStatMatchesList checks that Stat of every listed entry agrees with
// the entry on name, type and size.
func (s *suite) testStatMatchesList(t *testing.T) {
	e := s.setup(t)
	e.arrangeTree()
	e.statMatchesList(e.b)
}

// statMatchesList compares Stat on b with the listing of every directory
// of the working tree.
func (e *env) statMatchesList(b backend.Backend) {
	e.t.Helper()
	err := backend.Walk(e.ctx, e.b, e.p("."), func(name string, en backend.DirEntry) error {
		fi, err := backend.Stat(e.ctx, b, name)
		if err != nil {
			e.t.Errorf("Stat(%q) of a listed entry: %v", name, err)
			return nil
		}
		_, base := backend.Split(name)
		if fi.Name != base || fi.Mode.Type() != en.Type.Type() {
			e.t.Errorf("Stat(%q) = name %q type %v; the listing says name %q type %v", name, fi.Name, fi.Mode.Type(), en.Name, en.Type.Type())
		}
		if !en.IsDir() && fi.Size != -1 && en.Size != -1 && fi.Size != en.Size {
			e.t.Errorf("Stat(%q).Size = %d; the listing says %d", name, fi.Size, en.Size)
		}
		return nil
	})
	if err != nil {
		e.t.Fatalf("Walk(%q): %v", e.p("."), err)
	}
}

// listOnly hides every optional interface of a backend, so the helpers of
// package backend take their fallback paths.
type listOnly struct{ b backend.Backend }

func (l listOnly) OpenRead(ctx context.Context, name string) (backend.FileReader, error) {
	return l.b.OpenRead(ctx, name)
}

func (l listOnly) List(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	return l.b.List(ctx, dir)
}

// testStatFallback checks that backend.Stat without a Stater, built on
// List, agrees with the listing and reports missing paths, so backends
// that leave Stater out still serve every tool.
func (s *suite) testStatFallback(t *testing.T) {
	e := s.setup(t)
	e.arrangeTree()
	lo := listOnly{e.b}
	e.statMatchesList(lo)
	for _, name := range []string{e.p("missing"), e.p("d/missing"), e.p("f/below")} {
		if fi, err := backend.Stat(e.ctx, lo, name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("fallback Stat(%q) = %+v, %v; want an error matching fs.ErrNotExist", name, fi, err)
		}
	}
	for _, name := range []string{".", e.p("."), e.p("d")} {
		if fi, err := backend.Stat(e.ctx, lo, name); err != nil || !fi.IsDir() {
			t.Errorf("fallback Stat(%q) = %+v, %v; want a directory", name, fi, err)
		}
	}
}

// testModTimes checks that backends declaring ModTimes fill them in, with
// plausible values, in listings and Stat.
func (s *suite) testModTimes(t *testing.T) {
	e := s.setup(t)
	if !e.caps.ModTimes {
		t.Skipf("skipped: backend has no modification times (Capabilities.ModTimes=false)")
	}
	e.requireArrange()
	e.put("f", []byte("x"))
	// Clocks of remote servers drift; a day either way is still plausible.
	plausible := func(tm time.Time) bool {
		return !tm.IsZero() && time.Since(tm).Abs() < 24*time.Hour
	}
	entries := e.list(e.p("."))
	if len(entries) != 1 || !plausible(entries[0].ModTime) {
		t.Errorf("List(%q) = %+v, want one entry with a current ModTime", e.p("."), entries)
	}
	if fi := e.stat(e.p("f")); !plausible(fi.ModTime) {
		t.Errorf("Stat(%q).ModTime = %v, want a current time", e.p("f"), fi.ModTime)
	}
}

// testListEmptyDir checks that an empty directory lists as empty, not as
// missing.
func (s *suite) testListEmptyDir(t *testing.T) {
	e := s.setup(t)
	e.requireEmptyDirs()
	if !e.canMkdir() {
		t.Skipf("skipped: cannot create a directory: backend is read-only (Capabilities.ReadOnly=%v) or has no backend.DirMaker, and the harness has no conformance.Seeder", e.caps.ReadOnly)
	}
	e.mkdir("empty")
	entries, err := e.b.List(e.ctx, e.p("empty"))
	if err != nil || len(entries) != 0 {
		t.Errorf("List(%q) of an empty directory = %+v, %v; want no entries and no error", e.p("empty"), entries, err)
	}
}
