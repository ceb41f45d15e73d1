package conformance

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

func (s *suite) readOnlyTests() []testCase {
	return []testCase{
		{"WritesRefused", s.testWritesRefused},
		{"MkdirAllRefused", s.testMkdirRefused},
	}
}

// requireReadOnly skips the test unless the backend is read-only.
func (e *env) requireReadOnly() {
	e.t.Helper()
	if !e.caps.ReadOnly {
		e.t.Skipf("skipped: backend is writable (Capabilities.ReadOnly=false)")
	}
}

// wantReadOnlyErr checks that err is ErrReadOnly, which also matches
// fs.ErrPermission.
func wantReadOnlyErr(t *testing.T, what string, err error) {
	t.Helper()
	wantErr(t, what, err, backend.ErrReadOnly)
	if err != nil && !errors.Is(err, fs.ErrPermission) {
		t.Errorf("%s: error %v does not match fs.ErrPermission", what, err)
	}
}

// testWritesRefused checks that every way of writing to a read-only
// backend fails with ErrReadOnly and changes nothing, whether the target
// exists or not.
func (s *suite) testWritesRefused(t *testing.T) {
	e := s.setup(t)
	e.requireReadOnly()
	arranged := e.canArrange()
	if arranged {
		e.put("f", []byte("old"))
	}
	for _, name := range []string{e.p("f"), e.p("new"), e.p("d/new")} {
		_, err := backend.OpenWrite(e.ctx, e.b, name, backend.WriteOptions{})
		wantReadOnlyErr(t, fmt.Sprintf("backend.OpenWrite(%q)", name), err)
		if w, ok := e.b.(backend.Writer); ok {
			err := writeOnce(e.ctx, w, name, []byte("new"), backend.WriteOptions{})
			wantReadOnlyErr(t, fmt.Sprintf("Writer.OpenWrite(%q) and Commit", name), err)
		}
		err = backend.WriteFile(e.ctx, e.b, name, []byte("new"), backend.WriteOptions{})
		wantReadOnlyErr(t, fmt.Sprintf("backend.WriteFile(%q)", name), err)
	}
	if arranged {
		e.wantContent(e.p("f"), []byte("old"))
		e.wantNames(e.p("."), "f")
		e.wantRaw(e.p("f"))
	} else {
		e.wantRaw()
	}
}

// testMkdirRefused checks that MkdirAll on a read-only backend fails with
// ErrReadOnly, through the helper and through the backend's own DirMaker.
func (s *suite) testMkdirRefused(t *testing.T) {
	e := s.setup(t)
	e.requireReadOnly()
	err := backend.MkdirAll(e.ctx, e.b, e.p("newdir"))
	wantReadOnlyErr(t, fmt.Sprintf("backend.MkdirAll(%q)", e.p("newdir")), err)
	if m, ok := e.b.(backend.DirMaker); ok {
		err := m.MkdirAll(e.ctx, e.p("newdir"))
		wantReadOnlyErr(t, fmt.Sprintf("DirMaker.MkdirAll(%q)", e.p("newdir")), err)
	}
	if _, err := backend.Stat(e.ctx, e.b, e.p("newdir")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat(%q) after refused MkdirAll: %v; want an error matching fs.ErrNotExist", e.p("newdir"), err)
	}
}
