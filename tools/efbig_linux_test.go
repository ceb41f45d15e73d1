//go:build linux

package tools

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/local"
)

// efbigChild is set in the environment of the process TestFileSizeLimit
// starts to run under a file size limit.
const efbigChild = "FENCEFS_TEST_EFBIG_DIR"

// TestFileSizeLimit writes through the local backend in a process whose
// file size limit (RLIMIT_FSIZE) is 1 KiB, so that the kernel answers a
// real EFBIG: the model is told the file is larger than the storage
// allows (not that a storage server could not be reached), the host's
// error matches backend.ErrFileTooLarge and the errno, and the file and
// its directory are as they were. The limit is set in a process of its
// own, as it would bound every file the test binary writes.
func TestFileSizeLimit(t *testing.T) {
	if dir := os.Getenv(efbigChild); dir != "" {
		fileSizeLimitChild(t, dir)
		return
	}
	fx := localFixture(t)
	fx.put(t, "f.txt", "small\n")
	cmd := exec.Command(os.Args[0], "-test.run=^TestFileSizeLimit$", "-test.count=1")
	cmd.Env = append(os.Environ(), efbigChild+"="+fx.dir)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PASS") {
		t.Fatalf("the process under the file size limit: %v\n%s", err, out)
	}
	if got := fx.mustGet(t, "f.txt"); got != "small\n" {
		t.Errorf("f.txt holds %q after the refused write", got)
	}
	entries, err := os.ReadDir(fx.dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the directory holds %v, want only f.txt", names)
	}
}

// fileSizeLimitChild is TestFileSizeLimit in the limited process.
func fileSizeLimitChild(t *testing.T, dir string) {
	// Without this the kernel ends the process with SIGXFSZ instead of
	// answering EFBIG.
	signal.Ignore(syscall.SIGXFSZ)
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
	lim.Cur = 1024
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
	b, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	s := newSet(t, b, Options{})
	_, err = s.Call(context.Background(), "write_file", args(t, "path", "f.txt", "content", strings.Repeat("x", 4096)))
	const want = "Storage failure: the file is larger than the storage allows. Details are in the server's log."
	if err == nil || IsRetry(err) || Message(err) != want {
		t.Fatalf("write over the file size limit: %v (retry %v), want the fatal %q", err, IsRetry(err), want)
	}
	if !errors.Is(err, backend.ErrFileTooLarge) || !errors.Is(err, syscall.EFBIG) || OutcomeOf(err) != OutcomeError {
		t.Errorf("the host's error %v (cause %v) matches neither backend.ErrFileTooLarge nor EFBIG", err, Cause(err))
	}
}
