package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

// env is the per-subtest fixture: a fresh backend and what is known of it.
type env struct {
	t    *testing.T
	ctx  context.Context
	s    *suite
	b    backend.Backend
	caps backend.Capabilities
}

// setup makes a fresh backend for the subtest t.
func (s *suite) setup(t *testing.T) *env {
	t.Helper()
	ctx := t.Context()
	b := s.h.MakeBackend(ctx, t)
	if b == nil {
		t.Fatal("Harness.MakeBackend returned nil")
	}
	return &env{t: t, ctx: ctx, s: s, b: b, caps: backend.CapabilitiesOf(b)}
}

// p turns a path relative to the suite's working directory into a storage
// path.
func (e *env) p(name string) string {
	if name == "." {
		return e.s.opts.Dir
	}
	return backend.Join(e.s.opts.Dir, name)
}

// writer returns the backend's Writer or skips the test when it cannot
// write.
func (e *env) writer() backend.Writer {
	e.t.Helper()
	if e.caps.ReadOnly {
		e.t.Skipf("skipped: backend is read-only (Capabilities.ReadOnly=true)")
	}
	w, ok := e.b.(backend.Writer)
	if !ok {
		e.t.Skipf("skipped: backend does not implement backend.Writer")
	}
	return w
}

// dirMaker returns the backend's DirMaker or skips the test.
func (e *env) dirMaker() backend.DirMaker {
	e.t.Helper()
	if e.caps.ReadOnly {
		e.t.Skipf("skipped: backend is read-only (Capabilities.ReadOnly=true)")
	}
	m, ok := e.b.(backend.DirMaker)
	if !ok {
		e.t.Skipf("skipped: backend does not implement backend.DirMaker")
	}
	return m
}

// canArrange reports whether files can be put into storage, through the
// backend or through a Seeder.
func (e *env) canArrange() bool {
	if _, ok := e.s.h.(Seeder); ok {
		return true
	}
	_, ok := e.b.(backend.Writer)
	return ok && !e.caps.ReadOnly
}

// requireArrange skips the test when storage cannot be filled.
func (e *env) requireArrange() {
	e.t.Helper()
	if !e.canArrange() {
		e.t.Skipf("skipped: backend cannot be filled: it is read-only (Capabilities.ReadOnly=%v, implements backend.Writer=%v) and the harness has no conformance.Seeder",
			e.caps.ReadOnly, implements[backend.Writer](e.b))
	}
}

// put stores data as name (relative to the working directory), through
// the backend when it can write and through the harness's Seeder
// otherwise.
func (e *env) put(name string, data []byte) {
	e.t.Helper()
	if w, ok := e.b.(backend.Writer); ok && !e.caps.ReadOnly {
		if err := writeOnce(e.ctx, w, e.p(name), data, backend.WriteOptions{}); err != nil {
			e.t.Fatalf("writing %q: %v", e.p(name), err)
		}
		return
	}
	sd, ok := e.s.h.(Seeder)
	if !ok {
		e.requireArrange()
	}
	sd.Seed(e.ctx, e.t, e.b, e.p(name), data)
}

// mkdir creates the directory dir (relative to the working directory) the
// way put stores files.
func (e *env) mkdir(dir string) {
	e.t.Helper()
	if m, ok := e.b.(backend.DirMaker); ok && !e.caps.ReadOnly {
		if err := m.MkdirAll(e.ctx, e.p(dir)); err != nil {
			e.t.Fatalf("MkdirAll(%q): %v", e.p(dir), err)
		}
		return
	}
	sd, ok := e.s.h.(Seeder)
	if !ok {
		e.t.Skipf("skipped: cannot create a directory: backend is read-only (Capabilities.ReadOnly=%v) or has no backend.DirMaker, and the harness has no conformance.Seeder", e.caps.ReadOnly)
	}
	sd.SeedDir(e.ctx, e.t, e.b, e.p(dir))
}

// writeOnce writes data to name through w and returns the first error of
// OpenWrite, Write or Commit.
func writeOnce(ctx context.Context, w backend.Writer, name string, data []byte, opts backend.WriteOptions) error {
	fw, err := w.OpenWrite(ctx, name, opts)
	if err != nil {
		return err
	}
	defer fw.Close()
	if _, err := fw.Write(data); err != nil {
		return err
	}
	return fw.Commit()
}

// read returns the content of name (a storage path), failing the test on
// error.
func (e *env) read(name string) []byte {
	e.t.Helper()
	data, err := backend.ReadFile(e.ctx, e.b, name)
	if err != nil {
		e.t.Fatalf("reading %q: %v", name, err)
	}
	return data
}

// wantContent fails the test unless the storage path name holds want.
func (e *env) wantContent(name string, want []byte) {
	e.t.Helper()
	got := e.read(name)
	if !bytes.Equal(got, want) {
		e.t.Errorf("content of %q = %s, want %s", name, describe(got), describe(want))
	}
}

// wantMissing fails the test unless Stat and OpenRead report name as
// missing.
func (e *env) wantMissing(name string) {
	e.t.Helper()
	if fi, err := backend.Stat(e.ctx, e.b, name); !errors.Is(err, fs.ErrNotExist) {
		e.t.Errorf("Stat(%q) = %+v, %v; want an error matching fs.ErrNotExist", name, fi, err)
	}
	r, err := e.b.OpenRead(e.ctx, name)
	if err == nil {
		r.Close()
	}
	if !errors.Is(err, fs.ErrNotExist) {
		e.t.Errorf("OpenRead(%q) error = %v; want an error matching fs.ErrNotExist", name, err)
	}
}

// stat returns the metadata of the storage path name, failing on error.
func (e *env) stat(name string) backend.FileInfo {
	e.t.Helper()
	fi, err := backend.Stat(e.ctx, e.b, name)
	if err != nil {
		e.t.Fatalf("Stat(%q): %v", name, err)
	}
	return fi
}

// list returns the entries of the storage directory dir sorted by name,
// failing on error.
func (e *env) list(dir string) []backend.DirEntry {
	e.t.Helper()
	entries, err := e.b.List(e.ctx, dir)
	if err != nil {
		e.t.Fatalf("List(%q): %v", dir, err)
	}
	backend.SortEntries(entries)
	return entries
}

// names returns the sorted entry names of the storage directory dir.
func (e *env) names(dir string) []string {
	e.t.Helper()
	var out []string
	for _, en := range e.list(dir) {
		out = append(out, en.Name)
	}
	return out
}

// listOrEmpty returns the sorted entry names of the storage directory
// dir, or nothing when dir does not exist.
func (e *env) listOrEmpty(dir string) []string {
	e.t.Helper()
	entries, err := e.b.List(e.ctx, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		e.t.Fatalf("List(%q): %v", dir, err)
	}
	backend.SortEntries(entries)
	var out []string
	for _, en := range entries {
		out = append(out, en.Name)
	}
	return out
}

// wantNames fails the test unless the storage directory dir holds exactly
// the names want.
func (e *env) wantNames(dir string, want ...string) {
	e.t.Helper()
	got := e.names(dir)
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		e.t.Errorf("List(%q) names = %q, want %q", dir, got, want)
	}
}

// wantRaw checks, in a subtest named Leftovers, that the harness's
// RawLister reports exactly the files want (storage paths) below the
// working directory. It is how leftovers the backend hides are caught; a
// harness without a RawLister makes the subtest a visible skip.
func (e *env) wantRaw(want ...string) {
	e.t.Helper()
	e.s.skips.run(e.t, "Leftovers", func(t *testing.T) {
		t.Helper()
		rl, ok := e.s.h.(RawLister)
		if !ok {
			t.Skipf("skipped: the harness has no conformance.RawLister, so leftovers the backend hides are not checked")
		}
		var got []string
		for _, n := range rl.ListRaw(e.ctx, t, e.b) {
			if backend.IsWithin(n, e.s.opts.Dir) {
				got = append(got, n)
			}
		}
		slices.Sort(got)
		want = slices.Clone(want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("raw storage holds %q, want exactly %q", got, want)
		}
	})
}

// wantErr fails the test unless err matches one of targets.
func wantErr(t *testing.T, what string, err error, targets ...error) {
	t.Helper()
	for _, target := range targets {
		if errors.Is(err, target) {
			checkPathError(t, what, err)
			return
		}
	}
	var names []string
	for _, target := range targets {
		names = append(names, errName(target))
	}
	t.Errorf("%s: error = %v; want an error matching %s", what, err, strings.Join(names, " or "))
}

// checkPathError fails the test unless err is an *fs.PathError naming a
// storage path rather than a host path.
func checkPathError(t *testing.T, what string, err error) {
	t.Helper()
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		t.Errorf("%s: error %v (%T) is not an *fs.PathError", what, err, err)
		return
	}
	if strings.HasPrefix(pe.Path, "/") || strings.Contains(pe.Path, `\`) {
		t.Errorf("%s: error %v names %q, which looks like a host path, not a storage path", what, err, pe.Path)
	}
	checkNoBareErrno(t, what, err)
}

// backendSentinels are the error values a backend maps host errors to.
var backendSentinels = []error{
	backend.ErrInvalidPath, backend.ErrIsDir, backend.ErrNotDir, backend.ErrNotRegular,
	backend.ErrPrecondition, backend.ErrOutside, backend.ErrLoop, backend.ErrSymlink,
	backend.ErrNameTooLong, backend.ErrReadOnly, backend.ErrNoSpace, backend.ErrReadOnlyStorage,
	backend.ErrIO, backend.ErrFileTooLarge, backend.ErrUnsupported,
}

// checkNoBareErrno fails the test when err carries an operating system
// errno without a sentinel of package backend beside it: callers test
// errors with errors.Is against those sentinels and must never need to
// know errnos (an ENOENT matches fs.ErrNotExist, but an EISDIR matches
// nothing a caller would ask for).
func checkNoBareErrno(t *testing.T, what string, err error) {
	t.Helper()
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return
	}
	for _, s := range backendSentinels {
		if errors.Is(err, s) {
			return
		}
	}
	t.Errorf("%s: error %v carries the bare errno %d (%v); map it to an io/fs or backend sentinel (see backend.FatalErrno)", what, err, int(errno), errno)
}

// errName names the well-known error values in messages.
func errName(err error) string {
	switch err {
	case fs.ErrNotExist:
		return "fs.ErrNotExist"
	case fs.ErrExist:
		return "fs.ErrExist"
	case fs.ErrInvalid:
		return "fs.ErrInvalid"
	case fs.ErrPermission:
		return "fs.ErrPermission"
	case backend.ErrIsDir:
		return "backend.ErrIsDir"
	case backend.ErrNotDir:
		return "backend.ErrNotDir"
	case backend.ErrNotRegular:
		return "backend.ErrNotRegular"
	case backend.ErrPrecondition:
		return "backend.ErrPrecondition"
	case backend.ErrReadOnly:
		return "backend.ErrReadOnly"
	case backend.ErrSymlink:
		return "backend.ErrSymlink"
	case backend.ErrNameTooLong:
		return "backend.ErrNameTooLong"
	case context.Canceled:
		return "context.Canceled"
	}
	return fmt.Sprintf("%v", err)
}

// describe summarises content for failure messages without dumping
// megabytes.
func describe(data []byte) string {
	if len(data) <= 64 {
		return fmt.Sprintf("%q", data)
	}
	return fmt.Sprintf("%d bytes starting %q", len(data), data[:32])
}

// implements reports whether b implements the interface I.
func implements[I any](b backend.Backend) bool {
	_, ok := b.(I)
	return ok
}

// readAll reads r to the end and closes it.
func readAll(r io.ReadCloser) ([]byte, error) {
	defer r.Close()
	return io.ReadAll(r)
}
