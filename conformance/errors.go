package conformance

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

func (s *suite) errorTests() []testCase {
	return []testCase{
		{"OpenReadMissing", s.testOpenReadMissing},
		{"StatMissing", s.testStatMissing},
		{"ListMissing", s.testListMissing},
		{"OpenReadDirectory", s.testOpenReadDir},
		{"ListFile", s.testListFile},
		{"ReadThroughFile", s.testReadThroughFile},
		{"WriteThroughFile", s.testWriteThroughFile},
		{"WriteOntoDirectory", s.testWriteOntoDir},
	}
}

// testOpenReadMissing checks not-exist for a missing file and for a file
// in a missing directory.
func (s *suite) testOpenReadMissing(t *testing.T) {
	e := s.setup(t)
	if e.canArrange() {
		e.put("present", []byte("x"))
	}
	for _, name := range []string{"missing", "nodir/missing"} {
		r, err := e.b.OpenRead(e.ctx, e.p(name))
		if err == nil {
			r.Close()
		}
		wantErr(t, fmt.Sprintf("OpenRead(%q)", e.p(name)), err, fs.ErrNotExist)
		r, err = e.b.OpenRead(e.staleKnown(e.p(name), ""), e.p(name))
		if err == nil {
			r.Close()
		}
		wantErr(t, fmt.Sprintf("OpenRead(%q) claimed a known file", e.p(name)), err, fs.ErrNotExist)
	}
}

// testStatMissing checks not-exist from Stat, through the backend's
// Stater when it has one.
func (s *suite) testStatMissing(t *testing.T) {
	e := s.setup(t)
	if e.canArrange() {
		e.put("present", []byte("x"))
	}
	for _, name := range []string{"missing", "nodir/missing"} {
		fi, err := backend.Stat(e.ctx, e.b, e.p(name))
		if err == nil {
			t.Errorf("Stat(%q) = %+v, want an error", e.p(name), fi)
			continue
		}
		wantErr(t, fmt.Sprintf("Stat(%q)", e.p(name)), err, fs.ErrNotExist)
	}
}

// testListMissing checks not-exist from List.
func (s *suite) testListMissing(t *testing.T) {
	e := s.setup(t)
	if e.canArrange() {
		e.put("present", []byte("x"))
	}
	for _, name := range []string{"missing", "nodir/missing"} {
		entries, err := e.b.List(e.ctx, e.p(name))
		if err == nil {
			t.Errorf("List(%q) = %+v, want an error", e.p(name), entries)
			continue
		}
		wantErr(t, fmt.Sprintf("List(%q)", e.p(name)), err, fs.ErrNotExist)
	}
}

// testOpenReadDir checks is-a-directory from OpenRead of a directory,
// including the working directory itself.
func (s *suite) testOpenReadDir(t *testing.T) {
	e := s.setup(t)
	e.requireArrange()
	e.put("d/f", []byte("x"))
	for _, name := range []string{e.p("d"), e.p("."), "."} {
		for _, ctx := range []context.Context{e.ctx, e.staleKnown(name, "")} {
			r, err := e.b.OpenRead(ctx, name)
			if err == nil {
				r.Close()
				t.Errorf("OpenRead(%q) of a directory succeeded", name)
				continue
			}
			wantErr(t, fmt.Sprintf("OpenRead(%q)", name), err, backend.ErrIsDir)
		}
	}
}

// testListFile checks not-a-directory from List of a file.
func (s *suite) testListFile(t *testing.T) {
	e := s.setup(t)
	e.requireArrange()
	e.put("f", []byte("x"))
	entries, err := e.b.List(e.ctx, e.p("f"))
	if err == nil {
		t.Fatalf("List(%q) of a file = %+v, want an error", e.p("f"), entries)
	}
	wantErr(t, fmt.Sprintf("List(%q)", e.p("f")), err, backend.ErrNotDir)
}

// testReadThroughFile checks that reads of a path that goes through a
// file fail as not-a-directory or as not-existing.
func (s *suite) testReadThroughFile(t *testing.T) {
	e := s.setup(t)
	e.requireArrange()
	e.put("f", []byte("x"))
	for _, name := range []string{e.p("f/x"), e.p("f/x/y")} {
		r, err := e.b.OpenRead(e.ctx, name)
		if err == nil {
			r.Close()
		}
		wantErr(t, fmt.Sprintf("OpenRead(%q)", name), err, backend.ErrNotDir, fs.ErrNotExist)
		_, err = backend.Stat(e.ctx, e.b, name)
		wantErr(t, fmt.Sprintf("Stat(%q)", name), err, backend.ErrNotDir, fs.ErrNotExist)
		_, err = e.b.List(e.ctx, name)
		wantErr(t, fmt.Sprintf("List(%q)", name), err, backend.ErrNotDir, fs.ErrNotExist)
	}
}

// testWriteThroughFile checks that a write below a file fails with
// not-a-directory and leaves the file alone.
func (s *suite) testWriteThroughFile(t *testing.T) {
	e := s.setup(t)
	w := e.writer()
	e.put("f", []byte("keep"))
	for _, name := range []string{e.p("f/x"), e.p("f/x/y")} {
		err := writeOnce(e.ctx, w, name, []byte("new"), backend.WriteOptions{})
		wantErr(t, fmt.Sprintf("writing %q", name), err, backend.ErrNotDir)
	}
	e.wantContent(e.p("f"), []byte("keep"))
	e.wantNames(e.p("."), "f")
	e.wantRaw(e.p("f"))
}

// testWriteOntoDir checks that a write whose target is a directory fails
// with is-a-directory and leaves the directory alone.
func (s *suite) testWriteOntoDir(t *testing.T) {
	e := s.setup(t)
	w := e.writer()
	e.put("d/f", []byte("keep"))
	for _, name := range []string{e.p("d"), e.p(".")} {
		err := writeOnce(e.ctx, w, name, []byte("new"), backend.WriteOptions{})
		wantErr(t, fmt.Sprintf("writing %q", name), err, backend.ErrIsDir)
	}
	e.wantContent(e.p("d/f"), []byte("keep"))
	if fi := e.stat(e.p("d")); !fi.IsDir() {
		t.Errorf("Stat(%q) = %+v after the refused write, want a directory", e.p("d"), fi)
	}
	e.wantRaw(e.p("d/f"))
}

// invalidPath is a spelling every backend must refuse. Relative ones are
// also tried inside the working directory, where a lax backend that
// cleaned them would find the files the test arranged.
type invalidPath struct {
	name     string
	relative bool
}

var invalidPaths = []invalidPath{
	{"", false},
	{"/", false},
	{"/a", false},
	{"/a/b", false},
	{"a/../b", true},
	{"a/..", true},
	{"..", false},
	{"../a", false},
	{"a//b", true},
	{"./a", true},
	{"a/./b", true},
	{"a/.", true},
	{"a/", true},
	{"a/b/", true},
	{"~x", true},
	{"a/~b", true},
	{"~", true},
	{"C:x", false},
	{"c:", false},
	{"C:/a", false},
	{`a\b`, true},
	{`\a`, true},
	{"a\x00b", true},
	{"\x00", true},
	{"a\xffb", true},
}

// invalidNames returns the spellings to try, with the working directory
// prefixed to the relative ones when the suite works below the root, and
// the names of staged writes the backend reserves.
func (e *env) invalidNames() []string {
	var out []string
	for _, p := range invalidPaths {
		out = append(out, p.name)
		if p.relative && e.s.opts.Dir != "." {
			out = append(out, e.s.opts.Dir+"/"+p.name)
		}
	}
	return append(out, e.reservedNames()...)
}

func (s *suite) invalidPathTests() []testCase {
	return []testCase{
		{"OpenRead", s.invalidRead(func(ctx context.Context, b backend.Backend, name string) error {
			r, err := b.OpenRead(ctx, name)
			if err == nil {
				r.Close()
			}
			return err
		})},
		{"List", s.invalidRead(func(ctx context.Context, b backend.Backend, name string) error {
			_, err := b.List(ctx, name)
			return err
		})},
		{"Stat", s.invalidRead(func(ctx context.Context, b backend.Backend, name string) error {
			_, err := backend.Stat(ctx, b, name)
			return err
		})},
		{"Walk", s.invalidRead(func(ctx context.Context, b backend.Backend, name string) error {
			return backend.Walk(ctx, b, name, func(string, backend.DirEntry) error { return nil })
		})},
		{"ResolveSymlinks", s.invalidResolver(func(ctx context.Context, r backend.SymlinkResolver, name string) error {
			_, err := r.ResolveSymlinks(ctx, name)
			return err
		})},
		{"Readlink", s.invalidResolver(func(ctx context.Context, r backend.SymlinkResolver, name string) error {
			_, err := r.Readlink(ctx, name)
			return err
		})},
		{"LocalPath", s.testInvalidLocalPath},
		{"OpenWrite", s.testInvalidOpenWrite},
		{"MkdirAll", s.testInvalidMkdirAll},
		{"Changes", s.testInvalidChanges},
	}
}

// arrangedForInvalid are the files that lax path cleaning would reach.
var arrangedForInvalid = []string{"a/b", "b", "x"}

// arrangeForInvalid stores arrangedForInvalid when storage can be filled
// and reports whether it did.
func (e *env) arrangeForInvalid() bool {
	e.t.Helper()
	if !e.canArrange() {
		return false
	}
	for _, name := range arrangedForInvalid {
		e.put(name, []byte("arranged "+name))
	}
	return true
}

// invalidRead returns a test that calls op with every invalid spelling.
func (s *suite) invalidRead(op func(ctx context.Context, b backend.Backend, name string) error) func(t *testing.T) {
	return func(t *testing.T) {
		e := s.setup(t)
		e.arrangeForInvalid()
		for _, name := range e.invalidNames() {
			err := op(e.ctx, e.b, name)
			if !errors.Is(err, fs.ErrInvalid) {
				t.Errorf("%q: error = %v; want an error matching fs.ErrInvalid", name, err)
			}
		}
	}
}

// invalidResolver returns a test that calls op with every invalid
// spelling on a backend that resolves symlinks.
func (s *suite) invalidResolver(op func(ctx context.Context, r backend.SymlinkResolver, name string) error) func(t *testing.T) {
	return func(t *testing.T) {
		e := s.setup(t)
		r, ok := e.b.(backend.SymlinkResolver)
		if !ok {
			t.Skipf("skipped: backend does not implement backend.SymlinkResolver (Capabilities.Symlinks=%v)", e.caps.Symlinks)
		}
		e.arrangeForInvalid()
		for _, name := range e.invalidNames() {
			if err := op(e.ctx, r, name); !errors.Is(err, fs.ErrInvalid) {
				t.Errorf("%q: error = %v; want an error matching fs.ErrInvalid", name, err)
			}
		}
	}
}

// testInvalidLocalPath checks that LocalPath maps no invalid spelling to
// a host path, since callers hand the result to local programs.
func (s *suite) testInvalidLocalPath(t *testing.T) {
	e := s.setup(t)
	lp, ok := e.b.(backend.LocalPather)
	if !ok {
		t.Skipf("skipped: backend does not implement backend.LocalPather")
	}
	for _, name := range e.invalidNames() {
		if p, ok := lp.LocalPath(name); ok {
			t.Errorf("LocalPath(%q) = %q, true; want false", name, p)
		}
	}
}

// refusedWrite lists the errors a write to an invalid path may give:
// fs.ErrInvalid, or on a read-only backend also ErrReadOnly.
func (e *env) refusedWrite() []error {
	if e.caps.ReadOnly {
		return []error{fs.ErrInvalid, backend.ErrReadOnly}
	}
	return []error{fs.ErrInvalid}
}

// matchesAny reports whether err matches one of targets.
func matchesAny(err error, targets []error) bool {
	return slices.ContainsFunc(targets, func(target error) bool { return errors.Is(err, target) })
}

// testInvalidOpenWrite checks that OpenWrite refuses every invalid
// spelling itself, before a temporary file could be created, and that
// storage is unchanged.
func (s *suite) testInvalidOpenWrite(t *testing.T) {
	e := s.setup(t)
	w, ok := e.b.(backend.Writer)
	if !ok {
		t.Skipf("skipped: backend does not implement backend.Writer")
	}
	arranged := e.arrangeForInvalid()
	for _, name := range e.invalidNames() {
		fw, err := w.OpenWrite(e.ctx, name, backend.WriteOptions{})
		if err == nil {
			fw.Write([]byte("must not land"))
			cerr := fw.Commit()
			fw.Close()
			t.Errorf("OpenWrite(%q) succeeded (Commit: %v); want an error matching fs.ErrInvalid", name, cerr)
			continue
		}
		if !matchesAny(err, e.refusedWrite()) {
			t.Errorf("OpenWrite(%q): error = %v; want an error matching fs.ErrInvalid", name, err)
		}
	}
	e.wantUnchanged(arranged)
}

// testInvalidMkdirAll checks that MkdirAll refuses every invalid spelling
// and creates nothing.
func (s *suite) testInvalidMkdirAll(t *testing.T) {
	e := s.setup(t)
	m, ok := e.b.(backend.DirMaker)
	if !ok {
		t.Skipf("skipped: backend does not implement backend.DirMaker")
	}
	arranged := e.arrangeForInvalid()
	for _, name := range e.invalidNames() {
		if err := m.MkdirAll(e.ctx, name); !matchesAny(err, e.refusedWrite()) {
			t.Errorf("MkdirAll(%q): error = %v; want an error matching fs.ErrInvalid", name, err)
		}
	}
	e.wantUnchanged(arranged)
}

// wantUnchanged checks that the arranged files, when there are any, are
// still all there is, through the backend and through the RawLister.
func (e *env) wantUnchanged(arranged bool) {
	e.t.Helper()
	if !arranged {
		e.wantRaw()
		return
	}
	var raw []string
	for _, name := range arrangedForInvalid {
		e.wantContent(e.p(name), []byte("arranged "+name))
		raw = append(raw, e.p(name))
	}
	e.wantNames(e.p("."), "a", "b", "x")
	e.wantNames(e.p("a"), "b")
	e.wantRaw(raw...)
}
