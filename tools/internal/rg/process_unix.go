//go:build unix

package rg

import (
	"errors"
	"os/exec"
	"time"

	"golang.org/x/sys/unix"
)

// configureProcess puts rg in its own process group and makes
// cancellation kill the whole group, so nothing rg started outlives it.
func configureProcess(cmd *exec.Cmd) {
	cmd.SysProcAttr = &unix.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return unix.Kill(-cmd.Process.Pid, unix.SIGKILL)
	}
	cmd.WaitDelay = 5 * time.Second
}

// argTooLong reports whether starting rg failed because its arguments
// exceed the system's limit (E2BIG).
func argTooLong(err error) bool { return errors.Is(err, unix.E2BIG) }

// aborted reports whether rg was killed by SIGABRT, as Rust aborts a
// process whose allocation fails.
func aborted(exit *exec.ExitError) bool {
	ws, ok := exit.Sys().(interface{ Signal() unix.Signal })
	return ok && exit.ExitCode() == -1 && ws.Signal() == unix.SIGABRT
}
