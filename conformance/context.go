package conformance

import (
	"context"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

func (s *suite) contextTests() []testCase {
	return []testCase{
		{"CancelBeforeCommitKeepsOld", s.testCancelKeepsOld},
		{"CancelBeforeCommitCreatesNothing", s.testCancelCreatesNothing},
		{"CancelledBeforeOpenWrite", s.testCancelledOpen},
		{"CancelledOpenRead", s.testCancelledRead},
		{"CancelledStat", s.testCancelledStat},
		{"CancelledList", s.testCancelledList},
	}
}

// cancelled returns a context that is already cancelled.
func (e *env) cancelled() context.Context {
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	return ctx
}

// The read calls below must notice a cancelled context before they touch
// storage, so a caller past its deadline is not served a late answer.

func (s *suite) testCancelledRead(t *testing.T) {
	e := s.setup(t)
	e.requireArrange()
	e.put("f", []byte("content"))
	r, err := e.b.OpenRead(e.cancelled(), e.p("f"))
	if err == nil {
		_, err = readAll(r)
	}
	wantErr(t, "OpenRead and read under a cancelled context", err, context.Canceled)
}

func (s *suite) testCancelledStat(t *testing.T) {
	e := s.setup(t)
	e.requireArrange()
	e.put("f", []byte("content"))
	fi, err := backend.Stat(e.cancelled(), e.b, e.p("f"))
	if err == nil {
		t.Errorf("Stat under a cancelled context = %+v, nil; want an error matching context.Canceled", fi)
		return
	}
	wantErr(t, "Stat under a cancelled context", err, context.Canceled)
}

func (s *suite) testCancelledList(t *testing.T) {
	e := s.setup(t)
	e.requireArrange()
	e.put("f", []byte("content"))
	entries, err := e.b.List(e.cancelled(), e.p("."))
	if err == nil {
		t.Errorf("List under a cancelled context = %v, nil; want an error matching context.Canceled", entries)
		return
	}
	wantErr(t, "List under a cancelled context", err, context.Canceled)
}

// cancelledWrite writes data to the storage path name under a context
// that is cancelled after the data is written and before Commit, and
// requires Commit to fail with context.Canceled.
func (e *env) cancelledWrite(w backend.Writer, name string, data []byte) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	fw, err := w.OpenWrite(ctx, name, backend.WriteOptions{})
	if err != nil {
		e.t.Fatalf("OpenWrite(%q): %v", name, err)
	}
	defer fw.Close()
	e.mustWrite(fw, data)
	cancel()
	err = fw.Commit()
	if err == nil {
		e.t.Errorf("Commit(%q) after the context was cancelled succeeded", name)
		return
	}
	wantErr(e.t, "Commit after cancel", err, context.Canceled)
}

func (s *suite) testCancelKeepsOld(t *testing.T) {
	e := s.setup(t)
	w := e.writer()
	e.put("f", []byte("old"))
	e.cancelledWrite(w, e.p("f"), []byte("new content"))
	e.wantContent(e.p("f"), []byte("old"))
	e.wantNames(e.p("."), "f")
	e.wantRaw(e.p("f"))
}

func (s *suite) testCancelCreatesNothing(t *testing.T) {
	e := s.setup(t)
	w := e.writer()
	e.put("other", []byte("x"))
	e.cancelledWrite(w, e.p("new"), []byte("new content"))
	e.wantMissing(e.p("new"))
	e.wantNames(e.p("."), "other")
	e.wantRaw(e.p("other"))
}

// testCancelledOpen checks that a write started under an already
// cancelled context fails (at OpenWrite or at Commit) and changes
// nothing.
func (s *suite) testCancelledOpen(t *testing.T) {
	e := s.setup(t)
	w := e.writer()
	e.put("f", []byte("old"))
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	err := writeOnce(ctx, w, e.p("f"), []byte("new"), backend.WriteOptions{})
	wantErr(t, "writing under a cancelled context", err, context.Canceled)
	e.wantContent(e.p("f"), []byte("old"))
	e.wantRaw(e.p("f"))
}
