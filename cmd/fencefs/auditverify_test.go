//go:build !fencefs_oneshot

package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fencefs/fencefs/audit"
)

// TestAuditVerifyAnchors: --head catches lines cut off the end, which
// leave a chain that verifies, and --prev verifies a file that continues
// a rotated one.
func TestAuditVerifyAnchors(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	l := audit.New(&buf, audit.Genesis)
	var heads []string
	for i := range 4 {
		if err := l.Log(audit.Record{Time: time.Unix(int64(i), 0).UTC(), Tool: "write_file", Outcome: audit.OutcomeOK}); err != nil {
			t.Fatal(err)
		}
		heads = append(heads, l.Head())
	}
	lines := strings.SplitAfter(buf.String(), "\n")[:4]
	full, cut := filepath.Join(dir, "full.jsonl"), filepath.Join(dir, "cut.jsonl")
	first, second := filepath.Join(dir, "first.jsonl"), filepath.Join(dir, "second.jsonl")
	writeFile(t, full, strings.Join(lines, ""))
	writeFile(t, cut, strings.Join(lines[:3], ""))
	writeFile(t, first, strings.Join(lines[:2], ""))
	writeFile(t, second, strings.Join(lines[2:], ""))
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"full", []string{"verify", full}, exitOK, "ok: 4 lines, head " + heads[3]},
		{"full with its head", []string{"verify", "--head", heads[3], full}, exitOK, "ok: 4 lines"},
		{"cut verifies alone", []string{"verify", cut}, exitOK, "ok: 3 lines"},
		{"cut against the head", []string{"verify", "--head", heads[3], cut}, exitFatal, "lines were cut off its end"},
		{"cut before an earlier head", []string{"verify", "--head", heads[2], first}, exitFatal, "never reaches head " + heads[2]},
		{"grown past an earlier head", []string{"verify", "--head", heads[1], full}, exitFatal, "at line 2 and goes on for 2 more lines"},
		{"grown past an earlier head, allowed", []string{"verify", "--head", heads[1], "--allow-growth", full}, exitOK, "ok: 4 lines, head " + heads[3] + " (head " + heads[1] + " at line 2, then 2 more lines)"},
		{"cut before an earlier head, growth allowed", []string{"verify", "--head", heads[2], "--allow-growth", first}, exitFatal, "never reaches head " + heads[2]},
		{"growth allowed without a head", []string{"verify", "--allow-growth", full}, exitFatal, "usage:"},
		{"continuation alone", []string{"verify", second}, exitFatal, "line 1"},
		{"continuation with --prev", []string{"verify", "--prev", heads[1], "--head", heads[3], second}, exitOK, "ok: 2 lines, head " + heads[3]},
		{"no file", []string{"verify"}, exitFatal, "usage:"},
		{"bad flag", []string{"verify", "--nope", full}, exitFatal, "usage:"},
	}
	for _, tc := range cases {
		var out, errOut bytes.Buffer
		code := auditCommand(tc.args, &out, &errOut)
		if code != tc.code || !strings.Contains(out.String()+errOut.String(), tc.want) {
			t.Errorf("%s: exit %d, %q %q; want exit %d and %q", tc.name, code, out.String(), errOut.String(), tc.code, tc.want)
		}
	}
	var out, errOut bytes.Buffer
	if code := auditCommand([]string{"verify", first}, &out, &errOut); code != exitOK || !strings.Contains(out.String(), heads[1]) {
		t.Errorf("the rotated file: %d %q %q", code, out.String(), errOut.String())
	}
}
