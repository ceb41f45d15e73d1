package conformance

import (
	"io/fs"
	"testing"
)

func (s *suite) modeTests() []testCase {
	return []testCase{
		{"NewFileIsReadWritable", s.testNewFileMode},
		{"ReplacementKeepsMode", s.testReplacementKeepsMode},
	}
}

// requireModeBits skips the test unless the backend stores permission
// bits.
func (e *env) requireModeBits() {
	e.t.Helper()
	if !e.caps.ModeBits {
		e.t.Skipf("skipped: backend does not store permission bits (Capabilities.ModeBits=false)")
	}
}

// testNewFileMode checks that a new file gets ordinary creation
// permissions: its owner can read and write it. The exact bits depend on
// the umask, so only those are required.
func (s *suite) testNewFileMode(t *testing.T) {
	e := s.setup(t)
	e.requireModeBits()
	e.writer()
	e.put("f", []byte("x"))
	if perm := e.stat(e.p("f")).Mode.Perm(); perm&0o600 != 0o600 {
		t.Errorf("new file has permissions %v, want at least owner read and write (0600)", perm)
	}
}

// testReplacementKeepsMode checks that replacing a file keeps the
// permission bits it had, including unusual ones such as an executable
// bit.
func (s *suite) testReplacementKeepsMode(t *testing.T) {
	e := s.setup(t)
	e.requireModeBits()
	e.writer()
	ch, ok := e.s.h.(Chmoder)
	if !ok {
		t.Skipf("skipped: the harness has no conformance.Chmoder to set permission bits (Capabilities.ModeBits=true)")
	}
	for _, perm := range []fs.FileMode{0o640, 0o750, 0o604} {
		e.put("f", []byte("before"))
		ch.Chmod(e.ctx, t, e.b, e.p("f"), perm)
		if got := e.stat(e.p("f")).Mode.Perm(); got != perm {
			t.Fatalf("after Chmoder.Chmod(%v) Stat reports %v", perm, got)
		}
		e.put("f", []byte("after"))
		e.wantContent(e.p("f"), []byte("after"))
		if got := e.stat(e.p("f")).Mode.Perm(); got != perm {
			t.Errorf("replacing a file with permissions %v left %v", perm, got)
		}
	}
}
