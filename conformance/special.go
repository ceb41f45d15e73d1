package conformance

import (
	"fmt"
	"io"
	"io/fs"
	"testing"
	"time"

	"github.com/fencefs/fencefs/backend"
)

func (s *suite) specialFileTests() []testCase {
	return []testCase{
		{"FIFOListed", s.testFIFOListed},
		{"FIFOOpenReadRefused", s.testFIFOOpenRead},
	}
}

// fifoMaker skips the test unless the backend can hold special files and
// the harness can make them.
func (e *env) fifoMaker() SpecialFileMaker {
	e.t.Helper()
	if !e.caps.SpecialFiles {
		e.t.Skipf("skipped: backend has no special files (Capabilities.SpecialFiles=false)")
	}
	m, ok := e.s.h.(SpecialFileMaker)
	if !ok {
		e.t.Skipf("skipped: the harness has no conformance.SpecialFileMaker to make a FIFO (Capabilities.SpecialFiles=true)")
	}
	return m
}

func (s *suite) testFIFOListed(t *testing.T) {
	e := s.setup(t)
	m := e.fifoMaker()
	e.requireArrange()
	e.put("f", []byte("x"))
	m.MakeFIFO(e.ctx, t, e.b, e.p("pipe"))
	e.wantNames(e.p("."), "f", "pipe")
	for _, en := range e.list(e.p(".")) {
		if en.Name == "pipe" && en.Type&fs.ModeNamedPipe == 0 {
			t.Errorf("List entry %q has type %v, want fs.ModeNamedPipe", en.Name, en.Type)
		}
	}
	if fi := e.stat(e.p("pipe")); fi.Mode&fs.ModeNamedPipe == 0 {
		t.Errorf("Stat(%q) = %+v, want fs.ModeNamedPipe", e.p("pipe"), fi)
	}
	e.wantWalk(e.walk(e.b, e.p(".")), map[string]fs.FileMode{"f": 0, "pipe": fs.ModeNamedPipe})
}

// fifoTimeout bounds how long OpenRead of a FIFO may take before the test
// reports that it blocks, instead of hanging the whole run.
const fifoTimeout = 10 * time.Second

// testFIFOOpenRead checks that OpenRead refuses a FIFO without blocking
// on it (a blocking open waits for a writer forever).
func (s *suite) testFIFOOpenRead(t *testing.T) {
	e := s.setup(t)
	m := e.fifoMaker()
	e.requireArrange()
	e.put("f", []byte("x"))
	m.MakeFIFO(e.ctx, t, e.b, e.p("pipe"))
	done := make(chan error, 1)
	go func() {
		r, err := e.b.OpenRead(e.ctx, e.p("pipe"))
		if err == nil {
			io.Copy(io.Discard, r)
			r.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		wantErr(t, fmt.Sprintf("OpenRead(%q) of a FIFO", e.p("pipe")), err, backend.ErrNotRegular)
	case <-time.After(fifoTimeout):
		t.Fatalf("OpenRead(%q) of a FIFO blocked for %v", e.p("pipe"), fifoTimeout)
	}
}
