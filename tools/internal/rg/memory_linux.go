package rg

import (
	"errors"

	"golang.org/x/sys/unix"
)

// limitMemory bounds the address space of the process pid to bytes
// (RLIMIT_AS). A process that already ended is left alone.
func limitMemory(pid int, bytes int64) error {
	lim := unix.Rlimit{Cur: uint64(bytes), Max: uint64(bytes)}
	if err := unix.Prlimit(pid, unix.RLIMIT_AS, &lim, nil); err != nil && !errors.Is(err, unix.ESRCH) {
		return err
	}
	return nil
}
