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

// argTooLong reports false: only Unix systems are known to refuse long
// arguments with E2BIG.
func argTooLong(error) bool { return false }

// aborted reports false: there are no signals to tell an abort by.
func aborted(*exec.ExitError) bool { return false }
