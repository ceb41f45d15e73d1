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
	}
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
