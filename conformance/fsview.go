package conformance

import (
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/fencefs/fencefs/backend"
)

// TestFS runs testing/fstest.TestFS on the io/fs view of b (backend.FS),
// which must contain at least the files expected (slash-separated paths;
// none means b must be empty). It is for backends whose content is fixed
// in advance; Run already includes the same check on content it writes.
func TestFS(t *testing.T, b backend.Backend, expected ...string) {
	t.Helper()
	if err := fstest.TestFS(backend.FS(t.Context(), b), expected...); err != nil {
		t.Error(err)
	}
}

func (s *suite) fsViewTests() []testCase {
	return []testCase{
		{"Empty", s.testFSEmpty},
		{"Tree", s.testFSTree},
		{"Symlinks", s.testFSSymlinks},
	}
}

// view returns the io/fs view of the working directory.
func (e *env) view() fs.FS {
	e.t.Helper()
	fsys := fs.FS(backend.FS(e.ctx, e.b))
	if e.s.opts.Dir == "." {
		return fsys
	}
	sub, err := fs.Sub(fsys, e.s.opts.Dir)
	if err != nil {
		e.t.Fatalf("fs.Sub(%q): %v", e.s.opts.Dir, err)
	}
	return sub
}

// fstest runs testing/fstest.TestFS on the view of the working directory.
func (e *env) fstest(expected ...string) {
	e.t.Helper()
	if err := fstest.TestFS(e.view(), expected...); err != nil {
		e.t.Error(err)
	}
}

func (s *suite) testFSEmpty(t *testing.T) {
	e := s.setup(t)
	if s.opts.Dir != "." {
		t.Skipf("skipped: the working directory %q of a fresh backend need not exist (RunOptions.Dir)", s.opts.Dir)
	}
	TestFS(t, e.b)
}

func (s *suite) testFSTree(t *testing.T) {
	e := s.setup(t)
	emptyDir := e.arrangeTree()
	e.put("sp ace/-dash#[x].txt", []byte("awkward"))
	expected := []string{"f", "d/g", "d/h/i", "sp ace/-dash#[x].txt"}
	if emptyDir {
		expected = append(expected, "e")
	}
	e.fstest(expected...)
}

func (s *suite) testFSSymlinks(t *testing.T) {
	e := s.setup(t)
	sl, _ := e.symlinks()
	e.requireArrange()
	e.put("f", []byte("target"))
	e.put("d/g", []byte("inside"))
	sl.MakeSymlink(e.ctx, t, e.b, "f", e.p("lf"))
	sl.MakeSymlink(e.ctx, t, e.b, "d", e.p("ld"))
	// fstest walks without entering linked directories, so read through
	// the link explicitly.
	e.fstest("f", "d/g", "lf", "ld")
	for name, want := range map[string]string{"lf": "target", "ld/g": "inside"} {
		got, err := fs.ReadFile(e.view(), name)
		if err != nil || string(got) != want {
			t.Errorf("fs.ReadFile(view, %q) = %q, %v; want %q", name, got, err, want)
		}
	}
}
