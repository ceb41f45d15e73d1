package textsearch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

// testMaxLine is the line cap of these tests: past the initial buffer, so
// that the buffer grows before a line is cut.
const testMaxLine = 100_000

// TestLongLines searches lines longer than the cap: each is matched and
// shown on its first maxLine bytes only, and the lines after it keep their
// numbers, whatever the size of the reads.
func TestLongLines(t *testing.T) {
	long := strings.Repeat("x", 3*testMaxLine)
	tests := []struct {
		name, pattern, text string
		context             int
		want                string
	}{
		{"match past the cap is not found", "needle", long + "needle\nneedle\n", 0, "f:2:needle"},
		{"match within the cap is found", "^x+$", long + "\nend\n", 0, "f:1:" + strings.Repeat("x", 500) + LongLineMarker},
		{"match ends at the cap", "x{5}needle", strings.Repeat("x", testMaxLine-6) + "needle" + long + "\n", 0,
			"f:1:" + strings.Repeat("x", 500) + LongLineMarker},
		{"last line without newline", "needle", "a\n" + long + "needle", 0, ""},
		{"last line cut then the end", "a", "a\n" + long, 0, "f:1:a"},
		{"cut line as context", "^end$", long + "\nend\nafter\n", 1,
			"f-1-" + strings.Repeat("x", 500) + LongLineMarker + "\nf:2:end\nf-3-after"},
		{"lines after a cut line", "b", long + "\n" + long + "b\nb\n" + long + "\nb", 0, "f:3:b\nf:5:b"},
	}
	readers := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"halves":   iotest.HalfReader,
		"one byte": iotest.OneByteReader,
	}
	for _, tt := range tests {
		for rname, wrap := range readers {
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				m := mustCompile(t, tt.pattern, Options{Context: tt.context})
				m.maxLine = testMaxLine
				p := NewPrinter(0, tt.context > 0)
				err := m.Search(context.Background(), wrap(strings.NewReader(tt.text)), func(l Line) error {
					p.AddLine("f", l)
					return nil
				})
				if err != nil {
					t.Fatalf("Search: %v", err)
				}
				if got := p.String(); got != tt.want {
					t.Errorf("got %.200q\nwant %.200q", got, tt.want)
				}
			})
		}
	}
}

// deafReader serves one endless line of "x" and ignores every context;
// once it served cancelAt bytes it calls cancel.
type deafReader struct {
	served, cancelAt int64
	cancel           context.CancelFunc
}

func (r *deafReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	r.served += int64(len(p))
	if r.served >= r.cancelAt {
		r.cancel()
	}
	return len(p), nil
}

// TestEndlessLineEndsWithTheContext reads one endless line from a reader
// deaf to its context: the search holds no more than the line cap, and
// ends with the context's error soon after it is cancelled.
func TestEndlessLineEndsWithTheContext(t *testing.T) {
	const cancelAt = 32 << 20
	m := mustCompile(t, "y", Options{})
	m.maxLine = testMaxLine
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &deafReader{cancelAt: cancelAt, cancel: cancel}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := m.Search(ctx, r, func(Line) error { return nil })
	runtime.ReadMemStats(&after)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Search: %v; want the context's error", err)
	}
	if r.served > cancelAt+2*initialBuffer {
		t.Errorf("read %d bytes; cancelled after %d", r.served, int64(cancelAt))
	}
	// The buffers: the initial one, grown once to the cap, and the
	// scratch of the skipped part.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("allocated %d bytes reading %d; want at most 1 MiB", alloc, r.served)
	}
}

// TestLongLineMatchStops cancels a search while the regular expression
// runs over a long line: the search ends with the context's error at
// once, where the regexp package alone would run the line to its end.
func TestLongLineMatchStops(t *testing.T) {
	m, err := Compile("[a-z]{1,50}q", Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	line := []byte(strings.Repeat("a", 4*interruptible))
	r := &ctxRuneReader{ctx: ctx, b: line}
	cancel()
	if ok := m.re.MatchReader(r); ok || !errors.Is(r.err, context.Canceled) || r.i >= len(line)/2 {
		t.Fatalf("cancelled match: ok %v, err %v, read %d of %d bytes", ok, r.err, r.i, len(line))
	}
	if ok, err := m.matchLine(ctx, line); ok || !errors.Is(err, context.Canceled) {
		t.Fatalf("matchLine after cancel: %v, %v", ok, err)
	}
	err = m.Search(ctx, strings.NewReader("a\n"+string(line)+"\n"), func(Line) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Search after cancel: %v", err)
	}
}

// FuzzMatchLineReader checks that a long line matched through the
// context's reader matches as the byte slice does: same decoding of
// invalid UTF-8, same anchors and word boundaries at both ends.
func FuzzMatchLineReader(f *testing.F) {
	f.Add(`^a\b`, []byte("a b \xff\xfe é"), uint8(3))
	f.Add(`\xff|\x{FFFD}$`, []byte("\xff"), uint8(1))
	f.Add(`(?i)É.*z$`, []byte("éabz"), uint8(0))
	f.Fuzz(func(t *testing.T, pattern string, unit []byte, reps uint8) {
		m, err := Compile(pattern, Options{})
		if err != nil || len(unit) == 0 || bytes.IndexByte(unit, '\n') >= 0 {
			t.Skip()
		}
		line := bytes.Repeat(unit, int(reps)+1)
		for len(line) < interruptible {
			line = append(line, line...)
		}
		line = append(line[:interruptible], unit...)
		got, err := m.matchLine(context.Background(), line)
		if want := m.re.Match(line); err != nil || got != want {
			t.Fatalf("%q on %q...: reader %v (%v), bytes %v", pattern, line[:min(len(line), 40)], got, err, want)
		}
	})
}
