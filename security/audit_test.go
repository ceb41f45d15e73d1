package security

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/audit"
)

// auditLines returns the lines of the audit file at p.
func auditLines(t *testing.T, p string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(b, []byte("\n"))
}

// TestAuditRecordAlwaysFits (class 1): a record always leaves its line.
// A patch creating thousands of files with long names full of characters
// JSON escapes six times over, and a refused call whose path argument is
// megabytes long, are each logged (before, both were refused as over the
// line limit after the tool had run, and audit verify said ok): every
// line is within MaxLineBytes, oversized fields are summarized by length
// and SHA-256, left-out paths are counted and hashed, and the log
// verifies up to the Logger's head.
func TestAuditRecordAlwaysFits(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "audit.log")
	l, err := audit.OpenFile(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var paths []string
	for i := range 5000 {
		paths = append(paths, fmt.Sprintf("/ws/%05d-%s", i, strings.Repeat("\x01\"\\", 100)))
	}
	huge := "/ws/" + strings.Repeat("\x02", 3<<20)
	recs := []audit.Record{
		{Tool: "apply_patch", Outcome: audit.OutcomeOK, Paths: paths},
		{Tool: "write_file", Outcome: audit.OutcomeRefused, Paths: []string{huge}, Reason: strings.Repeat("why ", 1<<20)},
		{Tool: "write_file", Outcome: audit.OutcomePending, Paths: []string{huge}},
	}
	for _, r := range recs {
		if err := l.Log(r); err != nil {
			t.Fatalf("%s: the record was not logged: %v", r.Tool, err)
		}
	}
	if err := l.Append(audit.Record{Tool: "delete_file", Outcome: audit.OutcomePending, Paths: paths}); err != nil {
		t.Fatalf("Append: %v", err)
	}
	lines := auditLines(t, p)
	if n := len(lines) - 1; n != 4 || len(lines[4]) != 0 {
		t.Fatalf("%d lines, want 4", n)
	}
	for i, b := range lines[:4] {
		if len(b) > audit.MaxLineBytes {
			t.Errorf("line %d: %d bytes, over %d", i+1, len(b), audit.MaxLineBytes)
		}
	}
	var first, second audit.Record
	if err := json.Unmarshal(lines[0], &first); err != nil {
		t.Fatal(err)
	}
	if first.PathsOmitted == 0 || first.PathsOmitted+len(first.Paths) != len(paths) {
		t.Errorf("paths: %d kept, %d omitted, of %d", len(first.Paths), first.PathsOmitted, len(paths))
	}
	h := sha256.New()
	for _, p := range paths {
		h.Write([]byte(p + "\n"))
	}
	if first.PathsDigest != hex.EncodeToString(h.Sum(nil)) {
		t.Errorf("paths digest %q is not the SHA-256 of every path", first.PathsDigest)
	}
	if err := json.Unmarshal(lines[1], &second); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(huge))
	if len(second.Paths) != 1 || !strings.Contains(second.Paths[0], hex.EncodeToString(sum[:])) || !strings.Contains(second.Paths[0], fmt.Sprint(len(huge))) {
		t.Errorf("the huge path is not summarized by length and hash: %.200q", second.Paths)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := audit.VerifyHead(bufio.NewReader(f), audit.Genesis, l.Head())
	if err != nil || res.Lines != 4 {
		t.Fatalf("verify: %+v, %v", res, err)
	}
}

// TestAuditVerifyFindsTruncatedTail (class 1): given a head the server
// reported, verify refuses a log whose lines were cut off after that head
// (the chain alone still holds), and accepts one that grew since.
func TestAuditVerifyFindsTruncatedTail(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "audit.log")
	l, err := audit.OpenFile(p, &audit.FileOptions{Sync: true})
	if err != nil {
		t.Fatal(err)
	}
	var anchor string
	for i := range 10 {
		if err := l.Log(audit.Record{Tool: "write_file", Outcome: audit.OutcomeOK, Paths: []string{fmt.Sprintf("/ws/%d", i)}}); err != nil {
			t.Fatal(err)
		}
		if i == 5 {
			anchor = l.Head()
		}
	}
	l.Close()
	lines := auditLines(t, p)
	check := func(n int) error {
		_, err := audit.VerifyHead(bytes.NewReader(bytes.Join(lines[:n], nil)), audit.Genesis, anchor)
		return err
	}
	if err := check(10); err != nil {
		t.Fatalf("the whole log, grown since the head: %v", err)
	}
	if err := check(6); err != nil {
		t.Fatalf("the log up to the head: %v", err)
	}
	for _, n := range []int{5, 1, 0} {
		if err := check(n); !errors.Is(err, audit.ErrTruncated) {
			t.Errorf("cut to %d lines: %v, want ErrTruncated", n, err)
		}
		if _, err := audit.VerifyFrom(bytes.NewReader(bytes.Join(lines[:n], nil)), audit.Genesis); err != nil {
			t.Fatalf("cut to %d lines: the chain alone should still hold: %v", n, err)
		}
	}
}
