package audit

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// FuzzVerify feeds Verify arbitrary logs. Of a log that verifies, every
// line but the last is load-bearing: taking it out must break the chain.
func FuzzVerify(f *testing.F) {
	good, _ := testLog(3)
	f.Add(good)
	f.Add([]byte(""))
	f.Add([]byte("\n"))
	f.Add([]byte(`{"time":"2026-12-01T00:00:00Z","tool":"x","outcome":"ok","duration_ns":0,"prev":"` + Genesis + `"}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Verify(bytes.NewReader(data))
		if err != nil {
			return
		}
		ls := lines(data)
		if res.Lines != len(ls) {
			t.Fatalf("%d lines verified of %d", res.Lines, len(ls))
		}
		if len(ls) > 0 && res.Head != hashLine([]byte(strings.TrimSuffix(ls[len(ls)-1], "\n"))) {
			t.Fatal("head is not the last line's hash")
		}
		for i := 0; i+1 < len(ls) && i < 8; i++ {
			cut := strings.Join(append(append([]string{}, ls[:i]...), ls[i+1:]...), "")
			if _, err := Verify(strings.NewReader(cut)); err == nil {
				t.Fatalf("log verifies without its line %d", i+1)
			}
		}
	})
}

// FuzzLogVerify logs records of arbitrary text and checks that the log
// verifies, and that changing any byte of a line but the last breaks it.
func FuzzLogVerify(f *testing.F) {
	f.Add("t1", "alice", "/ws/a.txt", "write_file", uint16(10))
	f.Add("", "\x00\xff", "\n\"}", "x", uint16(0))
	f.Fuzz(func(t *testing.T, tenant, subject, path, tool string, at uint16) {
		if tool == "" {
			return
		}
		var buf bytes.Buffer
		l := New(&buf, Genesis)
		for i := range 3 {
			r := Record{Time: time.Unix(int64(i), 0), Tenant: tenant, Subject: subject, Tool: tool,
				Paths: []string{path, path + "2"}, Outcome: OutcomeOK, Bytes: int64(i)}
			if err := l.Log(r); err != nil {
				t.Fatal(err)
			}
		}
		res, err := Verify(bytes.NewReader(buf.Bytes()))
		if err != nil || res.Lines != 3 || res.Head != l.Head() {
			t.Fatalf("Verify = %+v, %v", res, err)
		}
		ls := lines(buf.Bytes())
		limit := len(ls[0]) + len(ls[1]) - 1
		pos := int(at) % limit
		if pos == len(ls[0])-1 {
			return // the newline of line 1; changing it merges lines, checked by FuzzVerify
		}
		tampered := bytes.Clone(buf.Bytes())
		tampered[pos] ^= 0x01
		if _, err := Verify(bytes.NewReader(tampered)); err == nil {
			t.Fatalf("log verifies with byte %d changed", pos)
		}
	})
}

// testLog returns a log of n records and its Logger's head.
func testLog(n int) ([]byte, string) {
	var buf bytes.Buffer
	l := New(&buf, Genesis)
	for i := range n {
		if err := l.Log(record(i)); err != nil {
			panic(err)
		}
	}
	return buf.Bytes(), l.Head()
}
