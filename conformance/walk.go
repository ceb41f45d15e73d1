package conformance

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

func (s *suite) walkTests() []testCase {
	return []testCase{
		{"EveryEntryOnce", s.testWalkAll},
		{"ListFallbackAgrees", s.testWalkFallback},
		{"Subdirectory", s.testWalkSubdir},
		{"SkipDir", s.testWalkSkipDir},
		{"StopsOnError", s.testWalkStops},
		{"Missing", s.testWalkMissing},
	}
}

// walked is one walk's result: the type bits of each name, in the order
// reported.
type walked struct {
	order []string
	types map[string]fs.FileMode
}

// walk walks the storage directory dir on b, failing the test on error or
// when an entry is reported twice. Names are returned relative to the
// working directory.
func (e *env) walk(b backend.Backend, dir string) walked {
	e.t.Helper()
	w := walked{types: map[string]fs.FileMode{}}
	err := backend.Walk(e.ctx, b, dir, func(name string, en backend.DirEntry) error {
		rel := relativeTo(name, e.s.opts.Dir)
		if _, dup := w.types[rel]; dup {
			e.t.Errorf("Walk(%q) reported %q twice", dir, name)
		}
		if _, base := backend.Split(name); base != en.Name {
			e.t.Errorf("Walk(%q) reported %q with entry name %q", dir, name, en.Name)
		}
		w.order = append(w.order, rel)
		w.types[rel] = en.Type.Type()
		return nil
	})
	if err != nil {
		e.t.Fatalf("Walk(%q): %v", dir, err)
	}
	return w
}

// relativeTo returns the storage path name relative to dir.
func relativeTo(name, dir string) string {
	if dir == "." || !backend.IsWithin(name, dir) || name == dir {
		return name
	}
	return name[len(dir)+1:]
}

// wantWalk checks that a walk reported exactly the names of want with
// their type bits, and every directory before its contents.
func (e *env) wantWalk(got walked, want map[string]fs.FileMode) {
	e.t.Helper()
	if !maps.Equal(got.types, want) {
		e.t.Errorf("walk reported %v, want %v", got.types, want)
	}
	seen := map[string]bool{}
	for _, name := range got.order {
		if dir, _ := backend.Split(name); dir != "." && !seen[dir] && got.types[dir] != 0 {
			e.t.Errorf("walk reported %q before its directory %q", name, dir)
		}
		seen[name] = true
	}
}

// treeWant is what a walk of the working directory reports after
// arrangeTree.
func treeWant(emptyDir bool) map[string]fs.FileMode {
	want := map[string]fs.FileMode{"f": 0, "d": fs.ModeDir, "d/g": 0, "d/h": fs.ModeDir, "d/h/i": 0}
	if emptyDir {
		want["e"] = fs.ModeDir
	}
	return want
}

func (s *suite) testWalkAll(t *testing.T) {
	e := s.setup(t)
	emptyDir := e.arrangeTree()
	e.wantWalk(e.walk(e.b, e.p(".")), treeWant(emptyDir))
}

// testWalkFallback checks that the listing-based walk agrees with the
// backend's own Walker.
func (s *suite) testWalkFallback(t *testing.T) {
	e := s.setup(t)
	if !implements[backend.Walker](e.b) {
		t.Skipf("skipped: backend does not implement backend.Walker; EveryEntryOnce already used the listing fallback")
	}
	emptyDir := e.arrangeTree()
	e.wantWalk(e.walk(listOnly{e.b}, e.p(".")), treeWant(emptyDir))
}

func (s *suite) testWalkSubdir(t *testing.T) {
	e := s.setup(t)
	e.arrangeTree()
	e.wantWalk(e.walk(e.b, e.p("d")), map[string]fs.FileMode{"d/g": 0, "d/h": fs.ModeDir, "d/h/i": 0})
	e.wantWalk(e.walk(e.b, e.p("d/h")), map[string]fs.FileMode{"d/h/i": 0})
}

func (s *suite) testWalkSkipDir(t *testing.T) {
	e := s.setup(t)
	emptyDir := e.arrangeTree()
	got := map[string]bool{}
	err := backend.Walk(e.ctx, e.b, e.p("."), func(name string, en backend.DirEntry) error {
		rel := relativeTo(name, e.s.opts.Dir)
		got[rel] = true
		if rel == "d" {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Walk with SkipDir: %v", err)
	}
	want := []string{"d", "f"}
	if emptyDir {
		want = append(want, "e")
	}
	gotNames := slices.Sorted(maps.Keys(got))
	slices.Sort(want)
	if !slices.Equal(gotNames, want) {
		t.Errorf("Walk skipping %q reported %q, want %q", e.p("d"), gotNames, want)
	}
}

func (s *suite) testWalkStops(t *testing.T) {
	e := s.setup(t)
	e.arrangeTree()
	stop := errors.New("stop here")
	calls := 0
	err := backend.Walk(e.ctx, e.b, e.p("."), func(string, backend.DirEntry) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("Walk whose callback fails = %v after %d calls; want the callback's error after 1 call", err, calls)
	}
}

func (s *suite) testWalkMissing(t *testing.T) {
	e := s.setup(t)
	if e.canArrange() {
		e.put("f", []byte("x"))
	}
	err := backend.Walk(e.ctx, e.b, e.p("missing"), func(name string, _ backend.DirEntry) error {
		return fmt.Errorf("walk of a missing directory reported %q", name)
	})
	wantErr(t, fmt.Sprintf("Walk(%q)", e.p("missing")), err, fs.ErrNotExist)
}
