package conformance

import (
	"fmt"
	"io/fs"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

func (s *suite) mkdirTests() []testCase {
	return []testCase{
		{"Nested", s.testMkdirNested},
		{"Existing", s.testMkdirExisting},
		{"Root", s.testMkdirRoot},
		{"ThroughFile", s.testMkdirThroughFile},
		{"OnFile", s.testMkdirOnFile},
		{"ThenWrite", s.testMkdirThenWrite},
	}
}

// requireEmptyDirs skips the test unless empty directories can exist.
func (e *env) requireEmptyDirs() {
	e.t.Helper()
	if !e.caps.EmptyDirs {
		e.t.Skipf("skipped: backend cannot hold empty directories (Capabilities.EmptyDirs=false)")
	}
}

// wantDir fails the test unless the storage path name is a directory.
func (e *env) wantDir(name string) {
	e.t.Helper()
	if fi := e.stat(name); !fi.IsDir() {
		e.t.Errorf("Stat(%q) = %+v, want a directory", name, fi)
	}
}

// testMkdirNested creates a chain of directories and checks each exists
// and the innermost is empty. Without EmptyDirs the directories need not
// be visible, but MkdirAll must still succeed.
func (s *suite) testMkdirNested(t *testing.T) {
	e := s.setup(t)
	m := e.dirMaker()
	if err := m.MkdirAll(e.ctx, e.p("a/b/c")); err != nil {
		t.Fatalf("MkdirAll(%q): %v", e.p("a/b/c"), err)
	}
	if !e.caps.EmptyDirs {
		t.Logf("Capabilities.EmptyDirs=false: not checking that the empty directories are visible")
		return
	}
	for _, d := range []string{"a", "a/b", "a/b/c"} {
		e.wantDir(e.p(d))
	}
	e.wantNames(e.p("a"), "b")
	if en := e.list(e.p("a")); len(en) == 1 && !en[0].IsDir() {
		t.Errorf("List(%q) entry %+v is not a directory", e.p("a"), en[0])
	}
	e.wantNames(e.p("a/b/c"))
}

// testMkdirExisting checks that creating an existing directory, one with
// content or created twice, is not an error and changes nothing.
func (s *suite) testMkdirExisting(t *testing.T) {
	e := s.setup(t)
	m := e.dirMaker()
	e.put("d/f", []byte("keep"))
	for _, d := range []string{"d", "d", "d/e", "d/e"} {
		if err := m.MkdirAll(e.ctx, e.p(d)); err != nil {
			t.Errorf("MkdirAll(%q): %v", e.p(d), err)
		}
	}
	e.wantContent(e.p("d/f"), []byte("keep"))
	if e.caps.EmptyDirs {
		e.wantNames(e.p("d"), "e", "f")
	}
}

// testMkdirRoot checks that the root and the working directory can be
// "created": they exist.
func (s *suite) testMkdirRoot(t *testing.T) {
	e := s.setup(t)
	m := e.dirMaker()
	for _, d := range []string{".", e.p(".")} {
		if err := m.MkdirAll(e.ctx, d); err != nil {
			t.Errorf("MkdirAll(%q): %v", d, err)
		}
	}
}

// testMkdirThroughFile checks not-a-directory when a file is on the way.
func (s *suite) testMkdirThroughFile(t *testing.T) {
	e := s.setup(t)
	m := e.dirMaker()
	e.put("f", []byte("keep"))
	for _, d := range []string{"f/x", "f/x/y"} {
		err := m.MkdirAll(e.ctx, e.p(d))
		wantErr(t, fmt.Sprintf("MkdirAll(%q)", e.p(d)), err, backend.ErrNotDir)
	}
	e.wantContent(e.p("f"), []byte("keep"))
	e.wantRaw(e.p("f"))
}

// testMkdirOnFile checks that MkdirAll of an existing file fails (with
// fs.ErrExist, or not-a-directory) and keeps the file.
func (s *suite) testMkdirOnFile(t *testing.T) {
	e := s.setup(t)
	m := e.dirMaker()
	e.put("f", []byte("keep"))
	err := m.MkdirAll(e.ctx, e.p("f"))
	wantErr(t, fmt.Sprintf("MkdirAll(%q)", e.p("f")), err, fs.ErrExist, backend.ErrNotDir)
	e.wantContent(e.p("f"), []byte("keep"))
}

// testMkdirThenWrite checks that a file can be written into a directory
// made by MkdirAll and that the listing shows both.
func (s *suite) testMkdirThenWrite(t *testing.T) {
	e := s.setup(t)
	m := e.dirMaker()
	if err := m.MkdirAll(e.ctx, e.p("d/sub")); err != nil {
		t.Fatalf("MkdirAll: %v", err)
	}
	e.put("d/f", []byte("x"))
	e.wantContent(e.p("d/f"), []byte("x"))
	want := []string{"f", "sub"}
	if !e.caps.EmptyDirs {
		want = []string{"f"}
	}
	e.wantNames(e.p("d"), want...)
}
