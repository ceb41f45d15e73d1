package audit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func record(i int) Record {
	return Record{
		Time: time.Date(2026, 12, 1, 21, 0, 0, i, time.UTC), RequestID: fmt.Sprintf("r-%d", i),
		Tenant: "t1", Subject: "alice", Tool: "write_file", Paths: []string{fmt.Sprintf("/ws/f%d.txt", i)},
		Outcome: OutcomeOK, OldHash: "sha256:aa", NewHash: "sha256:bb", Bytes: int64(i), Duration: time.Millisecond,
	}
}

// lines splits a log into its lines, each with its newline.
func lines(b []byte) []string {
	ls := strings.SplitAfter(string(b), "\n")
	return ls[:len(ls)-1]
}

func TestVerify(t *testing.T) {
	good, head := testLog(5)
	res, err := Verify(bytes.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	if res.Lines != 5 || res.Head != head {
		t.Fatalf("Verify = %+v, want 5 lines, head %s", res, head)
	}
	if res, err := Verify(strings.NewReader("")); err != nil || res.Lines != 0 || res.Head != Genesis {
		t.Fatalf("empty log: %+v %v", res, err)
	}

	ls := lines(good)
	join := func(parts ...string) string { return strings.Join(parts, "") }
	edit := func(s, old, new string) string {
		if !strings.Contains(s, old) {
			t.Fatalf("%q not in %q", old, s)
		}
		return strings.Replace(s, old, new, 1)
	}
	cases := []struct {
		name  string
		log   string
		line  int
		chain bool // the error is ErrChain
	}{
		{"line 2 removed", join(ls[0], ls[2], ls[3], ls[4]), 2, true},
		{"first line removed", join(ls[1], ls[2], ls[3], ls[4]), 1, true},
		{"lines 2 and 3 swapped", join(ls[0], ls[2], ls[1], ls[3], ls[4]), 2, true},
		{"line 3 repeated", join(ls[0], ls[1], ls[2], ls[2], ls[3], ls[4]), 4, true},
		{"tenant edited in line 2", join(ls[0], edit(ls[1], `"tenant":"t1"`, `"tenant":"t2"`), ls[2], ls[3], ls[4]), 3, true},
		{"outcome edited in line 1", join(edit(ls[0], `"outcome":"ok"`, `"outcome":"error"`), ls[1], ls[2], ls[3], ls[4]), 2, true},
		{"space added in line 4", join(ls[0], ls[1], ls[2], edit(ls[3], `,"tool"`, `, "tool"`), ls[4]), 5, true},
		{"line 2 rechained to line 0", join(ls[0], edit(ls[2], `"prev":"`, `"prev":"x`), ls[3]), 2, true},
		{"last line cut short", join(ls[0], ls[1], strings.TrimSuffix(ls[2], "\n")), 3, false},
		{"empty line", join(ls[0], "\n", ls[1]), 2, false},
		{"not JSON", join(ls[0], "hello\n"), 2, false},
		{"unknown field", join(ls[0], edit(ls[1], `{"time"`, `{"x":1,"time"`)), 2, false},
		{"text after the record", join(ls[0], edit(ls[1], "}\n", "} {}\n")), 2, false},
		{"two records on a line", join(ls[0], strings.TrimSuffix(ls[1], "\n")+ls[2]), 2, false},
		{"bad outcome", join(edit(ls[0], `"outcome":"ok"`, `"outcome":"fine"`)), 1, false},
		{"too long", join(ls[0], strings.Repeat("x", MaxLineBytes+10)+"\n"), 2, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Verify(strings.NewReader(tc.log))
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("Verify: %v, want a LineError", err)
			}
			if le.Line != tc.line || errors.Is(err, ErrChain) != tc.chain {
				t.Fatalf("Verify: %v, want line %d (chain %v)", err, tc.line, tc.chain)
			}
		})
	}

	// Lines cut off the end leave a chain that verifies, with a head that
	// no longer matches the Logger's: the anchor is what finds them.
	res, err = Verify(strings.NewReader(join(ls[0], ls[1], ls[2])))
	if err != nil || res.Head == head {
		t.Fatalf("truncated log: %+v %v", res, err)
	}
}

func TestLogRefuses(t *testing.T) {
	l := New(&bytes.Buffer{}, Genesis)
	for _, r := range []Record{
		{Outcome: OutcomeOK},
		{Tool: "read_file", Outcome: "maybe"},
		{Tool: "read_file", Outcome: OutcomeOK, Duration: -1},
	} {
		if err := l.Log(r); err == nil {
			t.Errorf("Log(%+v) accepted", r)
		}
	}
	if l.Head() != Genesis {
		t.Fatal("a refused record moved the head")
	}
}

// TestConcurrentWriters logs from many goroutines into one file.
func TestConcurrentWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := OpenFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 100
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				errs <- l.Log(record(w*each + i))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	head := l.Head()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := Verify(f)
	if err != nil || res.Lines != writers*each || res.Head != head {
		t.Fatalf("Verify = %+v, %v; want %d lines, head %s", res, err, writers*each, head)
	}
}

// TestOpenFileResumes reopens a log, and one whose last line a crash cut
// short.
func TestOpenFileResumes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	write := func(from, n int) {
		t.Helper()
		l, err := OpenFile(path, &FileOptions{Sync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		for i := range n {
			if err := l.Log(record(from + i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	verify := func() (Result, error) {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return Verify(bytes.NewReader(b))
	}
	write(0, 3)
	write(3, 2)
	if res, err := verify(); err != nil || res.Lines != 5 {
		t.Fatalf("after reopening: %+v %v", res, err)
	}

	// A long last line, so the tail is read in more than one chunk.
	l, err := OpenFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	long := record(5)
	long.Paths = []string{strings.Repeat("d/", 5000)}
	if err := l.Log(long); err != nil {
		t.Fatal(err)
	}
	l.Close()
	write(6, 1)
	if res, err := verify(); err != nil || res.Lines != 7 {
		t.Fatalf("after a long line: %+v %v", res, err)
	}

	// A torn last line stays torn: Verify names it, and the lines after
	// it chain on.
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, b[:len(b)-20], 0o600); err != nil {
		t.Fatal(err)
	}
	write(7, 2)
	_, err = verify()
	var le *LineError
	if !errors.As(err, &le) || le.Line != 7 || errors.Is(err, ErrChain) {
		t.Fatalf("torn line: %v, want line 7 not a record", err)
	}
	all, _ := os.ReadFile(path)
	rest := lines(all)[7:]
	if res, err := VerifyFrom(strings.NewReader(strings.Join(rest, "")), hashLine([]byte(strings.TrimSuffix(lines(all)[6], "\n")))); err != nil || res.Lines != 2 {
		t.Fatalf("lines after the torn one: %+v %v", res, err)
	}
}

// brokenWriter fails after n writes.
type brokenWriter struct{ n int }

func (w *brokenWriter) Write(p []byte) (int, error) {
	if w.n == 0 {
		return 0, errors.New("disk full")
	}
	w.n--
	return len(p), nil
}

func TestLogStopsAfterAFailedWrite(t *testing.T) {
	l := New(&brokenWriter{n: 1}, Genesis)
	if err := l.Log(record(0)); err != nil {
		t.Fatal(err)
	}
	if err := l.Log(record(1)); err == nil {
		t.Fatal("failed write reported no error")
	}
	if err := l.Log(record(2)); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Log after a failed write: %v", err)
	}
}
