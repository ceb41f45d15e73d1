package conformance

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

func (s *suite) preconditionTests() []testCase {
	return []testCase{
		{"CreateOnlyNew", s.testCreateOnlyNew},
		{"CreateOnlyExisting", s.testCreateOnlyExisting},
		{"MatchHashCurrent", s.testMatchHashCurrent},
		{"MatchHashStale", s.testMatchHashStale},
		{"MatchHashMissing", s.testMatchHashMissing},
		{"MatchHashKeepsMissingParent", s.testMatchHashMissingParent},
		{"MatchVersionCurrent", s.testMatchVersionCurrent},
		{"MatchVersionStale", s.testMatchVersionStale},
		{"MatchVersionMissing", s.testMatchVersionMissing},
		{"ConcurrentMatchHashOneWinner", s.testConcurrentMatchHash},
		{"ConcurrentCreateOnlyOneWinner", s.testConcurrentCreateOnly},
	}
}

// sha256Hex returns the lowercase hex SHA-256 of data, the form of
// Precondition.MatchHash.
func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// writeWith writes data to the storage path name with the precondition
// pre and returns the first error.
func (e *env) writeWith(w backend.Writer, name string, data []byte, pre backend.Precondition) error {
	return writeOnce(e.ctx, w, name, data, backend.WriteOptions{Precondition: pre})
}

func (s *suite) testCreateOnlyNew(t *testing.T) {
	e := s.setup(t)
	w := e.writer()
	if err := e.writeWith(w, e.p("new/f"), []byte("created"), backend.Precondition{CreateOnly: true}); err != nil {
		t.Fatalf("CreateOnly write of a new file: %v", err)
	}
	e.wantContent(e.p("new/f"), []byte("created"))
}

func (s *suite) testCreateOnlyExisting(t *testing.T) {
	e := s.setup(t)
	w := e.writer()
	e.put("f", []byte("old"))
	err := e.writeWith(w, e.p("f"), []byte("new"), backend.Precondition{CreateOnly: true})
	wantErr(t, "CreateOnly write of an existing file", err, fs.ErrExist)
	e.wantContent(e.p("f"), []byte("old"))
	e.wantRaw(e.p("f"))
}

func (s *suite) testMatchHashCurrent(t *testing.T) {
	e := s.setup(t)
	w := e.writer()
	e.put("f", []byte("old"))
	if err := e.writeWith(w, e.p("f"), []byte("new"), backend.Precondition{MatchHash: sha256Hex([]byte("old"))}); err != nil {
		t.Fatalf("write with the current hash: %v", err)
	}
	e.wantContent(e.p("f"), []byte("new"))
	// The hash of the new content now matches, the old one no longer.
	if err := e.writeWith(w, e.p("f"), []byte("newer"), backend.Precondition{MatchHash: sha256Hex([]byte("new"))}); err != nil {
		t.Fatalf("second write with the current hash: %v", err)
	}
	e.wantContent(e.p("f"), []byte("newer"))
}

func (s *suite) testMatchHashStale(t *testing.T) {
	e := s.setup(t)
	w := e.writer()
	e.put("f", []byte("old"))
	e.put("f", []byte("changed meanwhile"))
	err := e.writeWith(w, e.p("f"), []byte("new"), backend.Precondition{MatchHash: sha256Hex([]byte("old"))})
	wantErr(t, "write with a stale hash", err, backend.ErrPrecondition)
	e.wantContent(e.p("f"), []byte("changed meanwhile"))
	e.wantRaw(e.p("f"))
}

func (s *suite) testMatchHashMissing(t *testing.T) {
	e := s.setup(t)
	w := e.writer()
	e.put("other", []byte("x"))
	err := e.writeWith(w, e.p("f"), []byte("new"), backend.Precondition{MatchHash: sha256Hex([]byte("old"))})
	wantErr(t, "write with a hash to a missing file", err, backend.ErrPrecondition)
	e.wantMissing(e.p("f"))
	e.wantRaw(e.p("other"))
}

// testMatchHashMissingParent checks that a refused write into a missing
// directory creates no file there.
func (s *suite) testMatchHashMissingParent(t *testing.T) {
	e := s.setup(t)
	w := e.writer()
	err := e.writeWith(w, e.p("nodir/f"), []byte("new"), backend.Precondition{MatchHash: sha256Hex([]byte("old"))})
	wantErr(t, "write with a hash to a file in a missing directory", err, backend.ErrPrecondition)
	e.wantMissing(e.p("nodir/f"))
	e.wantRaw()
}

// requireVersions skips the test unless the backend has version tokens,
// and returns its Stater.
func (e *env) requireVersions() backend.Stater {
	e.t.Helper()
	if !e.caps.Versions {
		e.t.Skipf("skipped: backend has no version tokens (Capabilities.Versions=false)")
	}
	st, ok := e.b.(backend.Stater)
	if !ok {
		e.t.Fatalf("Capabilities.Versions=true but the backend does not implement backend.Stater")
	}
	return st
}

// version returns the version token of the storage path name.
func (e *env) version(st backend.Stater, name string) string {
	e.t.Helper()
	fi, err := st.Stat(e.ctx, name)
	if err != nil {
		e.t.Fatalf("Stat(%q): %v", name, err)
	}
	if fi.Version == "" {
		e.t.Fatalf("Stat(%q).Version is empty although Capabilities.Versions=true", name)
	}
	return fi.Version
}

func (s *suite) testMatchVersionCurrent(t *testing.T) {
	e := s.setup(t)
	st := e.requireVersions()
	w := e.writer()
	e.put("f", []byte("old"))
	v := e.version(st, e.p("f"))
	if err := e.writeWith(w, e.p("f"), []byte("new"), backend.Precondition{MatchVersion: v}); err != nil {
		t.Fatalf("write with the current version: %v", err)
	}
	e.wantContent(e.p("f"), []byte("new"))
	if v2 := e.version(st, e.p("f")); v2 == v {
		t.Errorf("version %q did not change when the content changed", v)
	}
}

func (s *suite) testMatchVersionStale(t *testing.T) {
	e := s.setup(t)
	st := e.requireVersions()
	w := e.writer()
	e.put("f", []byte("old"))
	v := e.version(st, e.p("f"))
	e.put("f", []byte("changed meanwhile"))
	err := e.writeWith(w, e.p("f"), []byte("new"), backend.Precondition{MatchVersion: v})
	wantErr(t, "write with a stale version", err, backend.ErrPrecondition)
	e.wantContent(e.p("f"), []byte("changed meanwhile"))
	// The caller's word that it just saw v changes nothing.
	err = writeOnce(e.staleKnown(e.p("f"), v), w, e.p("f"), []byte("new"), backend.WriteOptions{Precondition: backend.Precondition{MatchVersion: v}})
	wantErr(t, "write with a stale version claimed as known", err, backend.ErrPrecondition)
	e.wantContent(e.p("f"), []byte("changed meanwhile"))
}

// requireAtomicPreconditions skips the test unless preconditions are
// checked atomically with the commit.
func (e *env) requireAtomicPreconditions() {
	e.t.Helper()
	if !e.caps.AtomicPreconditions {
		e.t.Skipf("skipped: backend checks preconditions non-atomically (Capabilities.AtomicPreconditions=false)")
	}
}

// race commits one write per content at once through w, all with pre,
// and returns each commit's error.
func (e *env) race(w backend.Writer, name string, contents [][]byte, pre backend.Precondition) []error {
	e.t.Helper()
	return e.raceAcross([]backend.Writer{w}, name, contents, pre)
}

// wantOneWinner checks that exactly one racing writer committed, that the
// others failed with want, and that the file holds the winner's content.
func (e *env) wantOneWinner(name string, contents [][]byte, errs []error, want error) {
	e.t.Helper()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			e.t.Errorf("writers %d and %d both committed with the same precondition", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, want):
			e.t.Errorf("losing writer %d: error = %v; want an error matching %s", i, err, errName(want))
		}
	}
	if winner < 0 {
		e.t.Fatalf("none of %d writers committed: %v", len(errs), errors.Join(errs...))
	}
	got := e.read(name)
	if !bytes.Equal(got, contents[winner]) {
		e.t.Errorf("%q holds %s, want the winning writer %d's content", name, describe(got), winner)
	}
	e.wantRaw(name)
}

// racingContents returns one distinct content per writer.
func (s *suite) racingContents() [][]byte {
	contents := make([][]byte, s.opts.ConcurrentWriters)
	for i := range contents {
		contents[i] = fmt.Appendf(nil, "writer %d\n", i)
	}
	return contents
}

func (s *suite) testConcurrentMatchHash(t *testing.T) {
	e := s.setup(t)
	e.requireAtomicPreconditions()
	w := e.writer()
	e.put("f", []byte("base"))
	contents := s.racingContents()
	errs := e.race(w, e.p("f"), contents, backend.Precondition{MatchHash: sha256Hex([]byte("base"))})
	e.wantOneWinner(e.p("f"), contents, errs, backend.ErrPrecondition)
}

func (s *suite) testConcurrentCreateOnly(t *testing.T) {
	e := s.setup(t)
	e.requireAtomicPreconditions()
	w := e.writer()
	contents := s.racingContents()
	errs := e.race(w, e.p("f"), contents, backend.Precondition{CreateOnly: true})
	e.wantOneWinner(e.p("f"), contents, errs, fs.ErrExist)
}
