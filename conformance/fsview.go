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

// fstest runs testing/fstest.TestFS on the io/fs view of the whole
// backend, expecting the given paths of the working directory. (fs.Sub
// would be neater but claims fs.ReadLinkFS even over a view that does not
// have it, and then its Lstat follows links.)
func (e *env) fstest(expected ...string) {
	e.t.Helper()
	for i, name := range expected {
		expected[i] = e.p(name)
	}
	if err := fstest.TestFS(backend.FS(e.ctx, e.b), expected...); err != nil {
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

// testFSSymlinks runs fstest on links inside a subdirectory, because
// fstest also checks fs.Sub of the first directory it is given, and a
// sub-view must report links as links (fs.Lstat) as the view's listings do.
func (s *suite) testFSSymlinks(t *testing.T) {
	e := s.setup(t)
	sl, _ := e.symlinks()
	e.requireArrange()
	e.put("s/f", []byte("target"))
	e.put("s/d/g", []byte("inside"))
	sl.MakeSymlink(e.ctx, t, e.b, "f", e.p("s/lf"))
	sl.MakeSymlink(e.ctx, t, e.b, "d", e.p("s/ld"))
	// fstest walks without entering linked directories, so read through
	// the link explicitly.
	e.fstest("s/f", "s/d/g", "s/lf", "s/ld")
	for name, want := range map[string]string{"s/lf": "target", "s/ld/g": "inside"} {
		got, err := fs.ReadFile(backend.FS(e.ctx, e.b), e.p(name))
		if err != nil || string(got) != want {
			t.Errorf("fs.ReadFile(view, %q) = %q, %v; want %q", e.p(name), got, err, want)
		}
	}
}
