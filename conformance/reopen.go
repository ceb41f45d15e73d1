package conformance

import (
	"errors"
	"io/fs"
	"sync"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

func (s *suite) reopenTests() []testCase {
	return []testCase{
		{"CommitSeenByOther", s.testReopenCommitSeen},
		{"MatchHashAcrossValues", s.testReopenMatchHash},
		{"MatchVersionAcrossValues", s.testReopenMatchVersion},
		{"ConcurrentMatchHashAcrossValues", s.testReopenConcurrentMatchHash},
		{"ConcurrentCreateOnlyAcrossValues", s.testReopenConcurrentCreateOnly},
	}
}

// reopen returns a second backend over the storage of e.b, or skips the
// test when the harness cannot make one.
func (e *env) reopen() backend.Backend {
	e.t.Helper()
	r, ok := e.s.h.(Reopener)
	if !ok {
		e.t.Skipf("skipped: the harness has no conformance.Reopener to make a second backend over the same storage")
	}
	b := r.Reopen(e.ctx, e.t, e.b)
	if b == nil {
		e.t.Fatal("Reopener.Reopen returned nil")
	}
	return b
}

// writerOf returns b's Writer, failing when the reopened value cannot
// write although the first one can.
func (e *env) writerOf(b backend.Backend) backend.Writer {
	e.t.Helper()
	w, ok := b.(backend.Writer)
	if !ok || backend.CapabilitiesOf(b).ReadOnly {
		e.t.Fatalf("the reopened backend cannot write although the first one can")
	}
	return w
}

// testReopenCommitSeen checks that files and directories committed
// through one value are read, stat-ed and listed through the other, both
// ways, and that a replacement through one is what the other reads.
func (s *suite) testReopenCommitSeen(t *testing.T) {
	e := s.setup(t)
	w := e.writer()
	other := e.reopen()
	w2 := e.writerOf(other)
	if err := writeOnce(e.ctx, w, e.p("d/one"), []byte("from the first"), backend.WriteOptions{}); err != nil {
		t.Fatalf("writing through the first value: %v", err)
	}
	if err := writeOnce(e.ctx, w2, e.p("two"), []byte("from the second"), backend.WriteOptions{}); err != nil {
		t.Fatalf("writing through the second value: %v", err)
	}
	e.wantContentOn(other, e.p("d/one"), []byte("from the first"))
	e.wantContent(e.p("two"), []byte("from the second"))
	if fi, err := backend.Stat(e.ctx, other, e.p("d/one")); err != nil || fi.Size != int64(len("from the first")) {
		t.Errorf("Stat(%q) through the second value = %+v, %v; want %d bytes", e.p("d/one"), fi, err, len("from the first"))
	}
	if err := writeOnce(e.ctx, w2, e.p("d/one"), []byte("replaced"), backend.WriteOptions{}); err != nil {
		t.Fatalf("replacing through the second value: %v", err)
	}
	e.wantContent(e.p("d/one"), []byte("replaced"))
	e.wantNames(e.p("."), "d", "two")
	entries, err := other.List(e.ctx, e.p("d"))
	if err != nil || len(entries) != 1 || entries[0].Name != "one" {
		t.Errorf("List(%q) through the second value = %v, %v; want only \"one\"", e.p("d"), entries, err)
	}
	e.wantRaw(e.p("d/one"), e.p("two"))
}

// wantContentOn fails the test unless name on b holds want.
func (e *env) wantContentOn(b backend.Backend, name string, want []byte) {
	e.t.Helper()
	got, err := backend.ReadFile(e.ctx, b, name)
	if err != nil {
		e.t.Errorf("reading %q through the second value: %v", name, err)
		return
	}
	if string(got) != string(want) {
		e.t.Errorf("content of %q through the second value = %s, want %s", name, describe(got), describe(want))
	}
}

// testReopenMatchHash checks that a hash read through one value guards a
// write through it against a replacement made through the other.
func (s *suite) testReopenMatchHash(t *testing.T) {
	e := s.setup(t)
	w := e.writer()
	w2 := e.writerOf(e.reopen())
	e.put("f", []byte("base"))
	seen := sha256Hex(e.read(e.p("f")))
	if err := writeOnce(e.ctx, w2, e.p("f"), []byte("theirs"), backend.WriteOptions{}); err != nil {
		t.Fatalf("replacing through the second value: %v", err)
	}
	err := e.writeWith(w, e.p("f"), []byte("mine"), backend.Precondition{MatchHash: seen})
	wantErr(t, "write with a hash the other value made stale", err, backend.ErrPrecondition)
	e.wantContent(e.p("f"), []byte("theirs"))
	if err := e.writeWith(w, e.p("f"), []byte("mine"), backend.Precondition{MatchHash: sha256Hex([]byte("theirs"))}); err != nil {
		t.Errorf("write with the hash of the other value's content: %v", err)
	}
	e.wantRaw(e.p("f"))
}

// testReopenMatchVersion checks that a version read through one value is
// honoured by the other, and goes stale for both.
func (s *suite) testReopenMatchVersion(t *testing.T) {
	e := s.setup(t)
	st := e.requireVersions()
	w := e.writer()
	w2 := e.writerOf(e.reopen())
	e.put("f", []byte("base"))
	v := e.version(st, e.p("f"))
	if err := e.writeWith(w2, e.p("f"), []byte("second"), backend.Precondition{MatchVersion: v}); err != nil {
		t.Fatalf("write through the second value with the first value's version: %v", err)
	}
	err := e.writeWith(w, e.p("f"), []byte("first"), backend.Precondition{MatchVersion: v})
	wantErr(t, "write with a version the other value made stale", err, backend.ErrPrecondition)
	e.wantContent(e.p("f"), []byte("second"))
}

// raceAcross commits one write per content at once, alternating between
// the writers, all with pre, and returns each commit's error.
func (e *env) raceAcross(ws []backend.Writer, name string, contents [][]byte, pre backend.Precondition) []error {
	e.t.Helper()
	pending := make([]backend.FileWriter, len(contents))
	for i, c := range contents {
		pending[i] = e.openWrite(ws[i%len(ws)], name, backend.WriteOptions{Precondition: pre})
		e.mustWrite(pending[i], c)
	}
	errs := make([]error, len(contents))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, fw := range pending {
		wg.Go(func() {
			<-start
			errs[i] = fw.Commit()
		})
	}
	close(start)
	wg.Wait()
	return errs
}

func (s *suite) testReopenConcurrentMatchHash(t *testing.T) {
	e := s.setup(t)
	e.requireAtomicPreconditions()
	w := e.writer()
	w2 := e.writerOf(e.reopen())
	e.put("f", []byte("base"))
	contents := s.racingContents()
	errs := e.raceAcross([]backend.Writer{w, w2}, e.p("f"), contents, backend.Precondition{MatchHash: sha256Hex([]byte("base"))})
	e.wantOneWinner(e.p("f"), contents, errs, backend.ErrPrecondition)
}

func (s *suite) testReopenConcurrentCreateOnly(t *testing.T) {
	e := s.setup(t)
	e.requireAtomicPreconditions()
	w := e.writer()
	w2 := e.writerOf(e.reopen())
	contents := s.racingContents()
	errs := e.raceAcross([]backend.Writer{w, w2}, e.p("f"), contents, backend.Precondition{CreateOnly: true})
	e.wantOneWinner(e.p("f"), contents, errs, fs.ErrExist)
}

// testMatchVersionMissing checks that a version precondition on a missing
// target fails with ErrPrecondition and creates nothing: the content the
// version names is not there.
func (s *suite) testMatchVersionMissing(t *testing.T) {
	e := s.setup(t)
	st := e.requireVersions()
	w := e.writer()
	e.put("g", []byte("elsewhere"))
	v := e.version(st, e.p("g"))
	err := e.writeWith(w, e.p("f"), []byte("new"), backend.Precondition{MatchVersion: v})
	wantErr(t, "write with a version to a missing target", err, backend.ErrPrecondition)
	e.wantMissing(e.p("f"))
	e.wantRaw(e.p("g"))
}

// testDirAppearsBeforeCommit checks that a directory created at the
// target while a write is pending makes Commit fail with ErrIsDir and
// leaves the directory and its contents as they are.
func (s *suite) testDirAppearsBeforeCommit(t *testing.T) {
	e := s.setup(t)
	w := e.writer()
	fw := e.openWrite(w, e.p("f"), backend.WriteOptions{})
	e.mustWrite(fw, []byte("pending"))
	e.put("f/inner", []byte("inside"))
	err := fw.Commit()
	if err == nil {
		t.Errorf("Commit onto a directory created after OpenWrite succeeded")
	} else if !errors.Is(err, backend.ErrIsDir) {
		t.Errorf("Commit onto a directory created after OpenWrite: error = %v; want an error matching backend.ErrIsDir", err)
	}
	if fi := e.stat(e.p("f")); !fi.IsDir() {
		t.Errorf("Stat(%q) after the refused commit = %+v, want the directory", e.p("f"), fi)
	}
	e.wantContent(e.p("f/inner"), []byte("inside"))
	e.wantRaw(e.p("f/inner"))
}
