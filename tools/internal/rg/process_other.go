//go:build !unix

package rg

import (
	"os/exec"
	"time"
)

// configureProcess bounds the wait for a killed rg's pipes.
func configureProcess(cmd *exec.Cmd) {
	cmd.WaitDelay = 5 * time.Second
}
