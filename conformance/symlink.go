package conformance

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

func (s *suite) symlinkTests() []testCase {
	return []testCase{
		{"Listed", s.testSymlinkListed},
		{"StatDoesNotFollow", s.testSymlinkStat},
		{"OpenReadRefused", s.testSymlinkOpenRead},
		{"ThroughSymlinkRefused", s.testThroughSymlink},
		{"WriteThroughSymlinkRefused", s.testWriteThroughSymlink},
		{"Readlink", s.testReadlink},
		{"Resolve", s.testResolve},
		{"Trace", s.testTrace},
		{"ResolveOutside", s.testResolveOutside},
		{"ResolveLoop", s.testResolveLoop},
		{"WalkDoesNotFollow", s.testWalkSymlink},
	}
}

// symlinks skips the test unless the backend holds symlinks and the
// harness can make them, and returns the two.
func (e *env) symlinks() (Symlinker, backend.SymlinkResolver) {
	e.t.Helper()
	if !e.caps.Symlinks {
		e.t.Skipf("skipped: backend has no symlinks (Capabilities.Symlinks=false)")
	}
	sl, ok := e.s.h.(Symlinker)
	if !ok {
		e.t.Skipf("skipped: the harness has no conformance.Symlinker to make symlinks (Capabilities.Symlinks=true)")
	}
	r, ok := e.b.(backend.SymlinkResolver)
	if !ok {
		e.t.Fatalf("Capabilities.Symlinks=true but the backend does not implement backend.SymlinkResolver")
	}
	return sl, r
}

// arrangeLinks stores f and d/g and the links lf -> f, ld -> d and
// dangling -> nowhere, all in the working directory.
func (e *env) arrangeLinks(sl Symlinker) {
	e.t.Helper()
	e.requireArrange()
	e.put("f", []byte("target"))
	e.put("d/g", []byte("inside"))
	sl.MakeSymlink(e.ctx, e.t, e.b, "f", e.p("lf"))
	sl.MakeSymlink(e.ctx, e.t, e.b, "d", e.p("ld"))
	sl.MakeSymlink(e.ctx, e.t, e.b, "nowhere", e.p("dangling"))
}

var linkNames = []string{"lf", "ld", "dangling"}

func (s *suite) testSymlinkListed(t *testing.T) {
	e := s.setup(t)
	sl, _ := e.symlinks()
	e.arrangeLinks(sl)
	e.wantNames(e.p("."), "d", "dangling", "f", "ld", "lf")
	for _, en := range e.list(e.p(".")) {
		isLink := en.Name == "lf" || en.Name == "ld" || en.Name == "dangling"
		if isLink && (!en.IsSymlink() || en.IsDir()) {
			t.Errorf("List entry %q has type %v, want a symlink and not a directory", en.Name, en.Type)
		}
		if !isLink && en.IsSymlink() {
			t.Errorf("List entry %q has type %v, want no symlink bit", en.Name, en.Type)
		}
	}
}

func (s *suite) testSymlinkStat(t *testing.T) {
	e := s.setup(t)
	sl, _ := e.symlinks()
	e.arrangeLinks(sl)
	for _, name := range linkNames {
		fi := e.stat(e.p(name))
		if !fi.IsSymlink() || fi.IsDir() || fi.Name != name {
			t.Errorf("Stat(%q) = %+v, want the symlink itself, not its target", e.p(name), fi)
		}
	}
}

func (s *suite) testSymlinkOpenRead(t *testing.T) {
	e := s.setup(t)
	sl, _ := e.symlinks()
	e.arrangeLinks(sl)
	for _, name := range linkNames {
		r, err := e.b.OpenRead(e.ctx, e.p(name))
		if err == nil {
			r.Close()
		}
		wantErr(t, fmt.Sprintf("OpenRead(%q) of a symlink", e.p(name)), err, backend.ErrNotRegular)
	}
}

// testThroughSymlink checks that a symlink in a middle component is an
// error for every read, and that List does not follow a final one.
func (s *suite) testThroughSymlink(t *testing.T) {
	e := s.setup(t)
	sl, _ := e.symlinks()
	e.arrangeLinks(sl)
	name := e.p("ld/g")
	r, err := e.b.OpenRead(e.ctx, name)
	if err == nil {
		r.Close()
	}
	wantErr(t, fmt.Sprintf("OpenRead(%q)", name), err, backend.ErrSymlink, backend.ErrNotDir)
	_, err = backend.Stat(e.ctx, e.b, name)
	wantErr(t, fmt.Sprintf("Stat(%q)", name), err, backend.ErrSymlink, backend.ErrNotDir, fs.ErrNotExist)
	for _, dir := range []string{e.p("ld"), e.p("lf"), e.p("dangling")} {
		entries, err := e.b.List(e.ctx, dir)
		if err == nil {
			t.Errorf("List(%q) of a symlink = %+v; want an error", dir, entries)
			continue
		}
		wantErr(t, fmt.Sprintf("List(%q)", dir), err, backend.ErrSymlink, backend.ErrNotDir)
	}
}

// testWriteThroughSymlink checks that writes and MkdirAll do not follow a
// symlink in a middle component, so nothing appears in the target
// directory.
func (s *suite) testWriteThroughSymlink(t *testing.T) {
	e := s.setup(t)
	sl, _ := e.symlinks()
	w := e.writer()
	e.arrangeLinks(sl)
	err := writeOnce(e.ctx, w, e.p("ld/new"), []byte("x"), backend.WriteOptions{})
	wantErr(t, fmt.Sprintf("writing %q", e.p("ld/new")), err, backend.ErrSymlink, backend.ErrNotDir)
	if m, ok := e.b.(backend.DirMaker); ok {
		err := m.MkdirAll(e.ctx, e.p("ld/sub"))
		wantErr(t, fmt.Sprintf("MkdirAll(%q)", e.p("ld/sub")), err, backend.ErrSymlink, backend.ErrNotDir)
	}
	e.wantNames(e.p("d"), "g")
	e.wantContent(e.p("d/g"), []byte("inside"))
}

func (s *suite) testReadlink(t *testing.T) {
	e := s.setup(t)
	sl, r := e.symlinks()
	e.arrangeLinks(sl)
	for name, want := range map[string]string{"lf": "f", "ld": "d", "dangling": "nowhere"} {
		got, err := r.Readlink(e.ctx, e.p(name))
		if err != nil || got != want {
			t.Errorf("Readlink(%q) = %q, %v; want %q", e.p(name), got, err, want)
		}
	}
	if got, err := r.Readlink(e.ctx, e.p("f")); err == nil {
		t.Errorf("Readlink(%q) of a regular file = %q; want an error", e.p("f"), got)
	}
	if got, err := r.Readlink(e.ctx, e.p("missing")); err == nil {
		t.Errorf("Readlink(%q) of a missing path = %q; want an error", e.p("missing"), got)
	}
}

func (s *suite) testResolve(t *testing.T) {
	e := s.setup(t)
	sl, r := e.symlinks()
	e.arrangeLinks(sl)
	sl.MakeSymlink(e.ctx, t, e.b, "lf", e.p("chain"))
	cases := map[string]string{
		"f":        "f",
		"lf":       "f",
		"chain":    "f",
		"ld":       "d",
		"ld/g":     "d/g",
		"ld/new":   "d/new",
		"dangling": "nowhere",
		"new/file": "new/file",
	}
	for name, want := range cases {
		got, err := r.ResolveSymlinks(e.ctx, e.p(name))
		if err != nil || got != e.p(want) {
			t.Errorf("ResolveSymlinks(%q) = %q, %v; want %q", e.p(name), got, err, e.p(want))
		}
	}
	if got, err := r.ResolveSymlinks(e.ctx, "."); err != nil || got != "." {
		t.Errorf("ResolveSymlinks(\".\") = %q, %v; want \".\"", got, err)
	}
}

// testTrace checks TraceSymlinks: it resolves as ResolveSymlinks does,
// visits every link of a chain (each before the next is read) and the
// directory a link leads into, and ends with the visit's own error as soon
// as the visit refuses a path, before anything further is followed (so a
// loop or a link leading out behind it is never reached).
func (s *suite) testTrace(t *testing.T) {
	e := s.setup(t)
	sl, r := e.symlinks()
	e.arrangeLinks(sl)
	sl.MakeSymlink(e.ctx, t, e.b, "lf", e.p("chain"))
	sl.MakeSymlink(e.ctx, t, e.b, "d/out", e.p("via"))
	sl.MakeSymlink(e.ctx, t, e.b, "../../../../../../../../../../../../etc", e.p("d/out"))
	sl.MakeSymlink(e.ctx, t, e.b, "d/loop", e.p("vialoop"))
	sl.MakeSymlink(e.ctx, t, e.b, "loop", e.p("d/loop"))
	for _, c := range []struct {
		name, want string
		visits     []string
	}{
		{"chain", "f", []string{"chain", "lf", "f"}},
		{"ld/g", "d/g", []string{"ld", "d", "d/g"}},
	} {
		var seen []string
		got, err := r.TraceSymlinks(e.ctx, e.p(c.name), func(p string) error {
			seen = append(seen, p)
			return nil
		})
		if err != nil || got != e.p(c.want) {
			t.Errorf("TraceSymlinks(%q) = %q, %v; want %q", e.p(c.name), got, err, e.p(c.want))
		}
		for _, v := range c.visits {
			i := slices.Index(seen, e.p(v))
			if i < 0 {
				t.Errorf("TraceSymlinks(%q) visited %q; want %q among them, in order %q", e.p(c.name), seen, e.p(v), c.visits)
				break
			}
			seen = seen[i+1:]
		}
	}
	stop := errors.New("refused by the visit")
	for _, name := range []string{"via", "vialoop", "chain"} {
		refuse := e.p("d")
		if name == "chain" {
			refuse = e.p("lf")
		}
		var after []string
		refused := false
		got, err := r.TraceSymlinks(e.ctx, e.p(name), func(p string) error {
			if refused {
				after = append(after, p)
			}
			if p == refuse {
				refused = true
				return stop
			}
			return nil
		})
		if err != stop {
			t.Errorf("TraceSymlinks(%q) refusing %q = %q, %v; want the visit's own error %v", e.p(name), refuse, got, err, stop)
		}
		if len(after) > 0 {
			t.Errorf("TraceSymlinks(%q) went on to visit %q after the visit refused %q", e.p(name), after, refuse)
		}
	}
}

// testResolveOutside checks that links leading out of the root are
// refused with ErrOutside, whether relative or absolute.
func (s *suite) testResolveOutside(t *testing.T) {
	e := s.setup(t)
	sl, r := e.symlinks()
	e.requireArrange()
	e.put("f", []byte("x"))
	sl.MakeSymlink(e.ctx, t, e.b, "../../../../../../../../../../../../etc", e.p("up"))
	sl.MakeSymlink(e.ctx, t, e.b, "/etc", e.p("abs"))
	for _, name := range []string{"up", "up/passwd", "abs", "abs/passwd"} {
		got, err := r.ResolveSymlinks(e.ctx, e.p(name))
		if err == nil {
			t.Errorf("ResolveSymlinks(%q) = %q; want an error matching backend.ErrOutside", e.p(name), got)
			continue
		}
		wantErr(t, fmt.Sprintf("ResolveSymlinks(%q)", e.p(name)), err, backend.ErrOutside)
	}
}

func (s *suite) testResolveLoop(t *testing.T) {
	e := s.setup(t)
	sl, r := e.symlinks()
	e.requireArrange()
	e.put("f", []byte("x"))
	sl.MakeSymlink(e.ctx, t, e.b, "loop2", e.p("loop1"))
	sl.MakeSymlink(e.ctx, t, e.b, "loop1", e.p("loop2"))
	sl.MakeSymlink(e.ctx, t, e.b, "self", e.p("self"))
	for _, name := range []string{"loop1", "loop1/x", "self"} {
		got, err := r.ResolveSymlinks(e.ctx, e.p(name))
		if err == nil {
			t.Errorf("ResolveSymlinks(%q) = %q; want an error matching backend.ErrLoop", e.p(name), got)
			continue
		}
		wantErr(t, fmt.Sprintf("ResolveSymlinks(%q)", e.p(name)), err, backend.ErrLoop)
	}
}

func (s *suite) testWalkSymlink(t *testing.T) {
	e := s.setup(t)
	sl, _ := e.symlinks()
	e.arrangeLinks(sl)
	got := e.walk(e.b, e.p("."))
	want := map[string]fs.FileMode{"f": 0, "d": fs.ModeDir, "d/g": 0, "lf": fs.ModeSymlink, "ld": fs.ModeSymlink, "dangling": fs.ModeSymlink}
	e.wantWalk(got, want)
}
