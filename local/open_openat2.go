//go:build linux

package local

import (
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// resolveFlags keep every lookup below the directory descriptor and refuse
// every symlink, magic links (/proc/self/fd/N) included, so the kernel
// opens exactly the path that was checked or nothing.
const resolveFlags = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// maxRetries bounds the retries of a call interrupted by a signal or told
// by the kernel to try again (openat2 answers EAGAIN when a rename races
// with a RESOLVE_BENEATH lookup).
const maxRetries = 16

// openat2 opens name below dirfd with resolveFlags.
func openat2(dirfd int, name string, flags int) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags), Resolve: resolveFlags}
	for i := 0; ; i++ {
		fd, err := unix.Openat2(dirfd, name, &how)
		if (err == unix.EINTR || err == unix.EAGAIN) && i < maxRetries {
			continue
		}
		return fd, err
	}
}

// openat2Known caches haveOpenat2's answer: 0 not yet probed, 1 offered,
// 2 not offered.
var openat2Known atomic.Int32

// haveOpenat2 reports whether the kernel offers openat2 (openat2Supported),
// probing it on rootfd only the first time: the kernel and a seccomp filter
// are the process's, not the root's, so one probe answers for every root.
func haveOpenat2(rootfd int) bool {
	switch openat2Known.Load() {
	case 1:
		return true
	case 2:
		return false
	}
	ok := openat2Supported(rootfd)
	if ok {
		openat2Known.Store(1)
	} else {
		openat2Known.Store(2)
	}
	return ok
}

// openat2Supported reports whether the kernel offers openat2 with the
// resolve flags fencefs needs (Linux 5.6 and later). A seccomp filter that
// does not know the call may answer EPERM instead of ENOSYS.
func openat2Supported(rootfd int) bool {
	fd, err := openat2(rootfd, ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err != nil {
		return err != unix.ENOSYS && err != unix.EPERM
	}
	unix.Close(fd)
	return true
}

// ignoringEINTR calls fn until it returns something other than EINTR.
func ignoringEINTR(fn func() error) error {
	for {
		if err := fn(); err != unix.EINTR {
			return err
		}
	}
}
