//go:build linux

package security

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fencefs/fencefs/audit"
)

// auditSinkChild is set in the environment of the process
// TestAuditBrokenSinkIsSticky starts under a file size limit.
const auditSinkChild = "FENCEFS_TEST_AUDIT_SINK"

// TestAuditBrokenSinkIsSticky (class 1): once the audit file cannot be
// written (a real EFBIG: the process's file size limit, RLIMIT_FSIZE, is
// 64 KiB), the Logger is broken for good: Err says so, and every later
// Append and Log fails, even of a record small enough to fit, so a server
// that appends write-ahead refuses every later change; the file holds
// whole verifying lines up to the failure (a torn last line at most).
func TestAuditBrokenSinkIsSticky(t *testing.T) {
	if p := os.Getenv(auditSinkChild); p != "" {
		auditSinkChildRun(t, p)
		return
	}
	t.Parallel()
	p := filepath.Join(t.TempDir(), "audit.log")
	cmd := exec.Command(os.Args[0], "-test.run=^TestAuditBrokenSinkIsSticky$", "-test.count=1")
	cmd.Env = append(os.Environ(), auditSinkChild+"="+p)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PASS") {
		t.Fatalf("the process under the file size limit: %v\n%s", err, out)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[:i+1]
	}
	res, err := audit.Verify(bytes.NewReader(b))
	if err != nil || res.Lines == 0 {
		t.Fatalf("the whole lines before the failure: %+v, %v", res, err)
	}
}

func auditSinkChildRun(t *testing.T, p string) {
	signal.Ignore(syscall.SIGXFSZ)
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
	lim.Cur = 64 << 10
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
	l, err := audit.OpenFile(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var failed error
	for i := 0; i < 10000 && failed == nil; i++ {
		if l.Err() != nil {
			t.Fatalf("Err before any failure: %v", l.Err())
		}
		failed = l.Append(audit.Record{Tool: "write_file", Outcome: audit.OutcomePending, Paths: []string{fmt.Sprintf("/ws/%d-%s", i, strings.Repeat("x", 500))}})
	}
	if failed == nil {
		t.Fatal("64 KiB of lines were written past the file size limit")
	}
	if !errors.Is(failed, syscall.EFBIG) {
		t.Errorf("the failure is %v, want EFBIG", failed)
	}
	if err := l.Err(); err == nil || !errors.Is(err, syscall.EFBIG) {
		t.Errorf("Err after the failure: %v", err)
	}
	// A record small enough to fit what is left must not be written: the
	// log has a hole, and the server must refuse changes.
	for _, f := range []func(audit.Record) error{l.Append, l.Log} {
		if err := f(audit.Record{Tool: "w", Outcome: audit.OutcomePending}); err == nil {
			t.Error("a record was accepted after the log broke")
		}
	}
}
