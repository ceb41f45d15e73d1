//go:build unix

package rg

import (
	"os/exec"
	"syscall"
	"time"
)

// configureProcess puts rg in its own process group and makes
// cancellation kill the whole group, so nothing rg started outlives it.
func configureProcess(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 5 * time.Second
}
