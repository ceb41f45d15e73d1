//go:build linux

package local

import (
	"errors"
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/fencefs/fencefs/backend"
)

// pathError returns err as an *fs.PathError naming the storage path name,
// with errnos turned into the sentinels callers test with errors.Is.
func pathError(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: name, Err: mapErrno(err)}
}

// mapErrno turns an errno (bare or inside an os error) into the io/fs or
// backend sentinel it stands for; the fatal ones (ENOSPC, EROFS, EIO, EFBIG) into
// those of backend.FatalErrno.
func mapErrno(err error) error {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err
	}
	if fatal := backend.FatalErrno(errno); fatal != nil {
		return fatal
	}
	switch errno {
	case unix.ENOENT:
		return fs.ErrNotExist
	case unix.EEXIST, unix.ENOTEMPTY:
		return fs.ErrExist
	case unix.EACCES, unix.EPERM:
		return fs.ErrPermission
	case unix.ENOTDIR:
		return backend.ErrNotDir
	case unix.EISDIR:
		return backend.ErrIsDir
	case unix.ELOOP:
		// Lookups never follow links, so ELOOP always means a symlink was
		// met where a real file or directory was needed.
		return backend.ErrSymlink
	case unix.EXDEV:
		// RESOLVE_BENEATH answers EXDEV to a lookup that would leave the root.
		return backend.ErrOutside
	case unix.ENAMETOOLONG:
		return backend.ErrNameTooLong
	case unix.EILSEQ:
		// A file system that refuses the bytes of a name.
		return backend.ErrInvalidPath
	case unix.ENXIO:
		// Opening a socket, or a device without a driver.
		return backend.ErrNotRegular
	case unix.EMFILE, unix.ENFILE:
		return descriptorLimit{errno}
	}
	return errno
}

// descriptorLimit is the error of an open that found no descriptor left
// in the process (EMFILE) or the system (ENFILE). errors.Is matches the
// errno, but it does not unwrap to it: a bare errno passes for a network
// error (syscall.Errno has Timeout), and a full descriptor table is not
// an unreachable server.
type descriptorLimit struct{ errno syscall.Errno }

func (e descriptorLimit) Error() string {
	return "the server process has no file descriptor left (" + e.errno.Error() + ")"
}

func (e descriptorLimit) Is(target error) bool { return target == e.errno }

// notDirStat is Stat's error for a path that goes through a file: it is
// ErrNotDir, and also fs.ErrNotExist, since the path names nothing.
type notDirStat struct{}

func (notDirStat) Error() string { return backend.ErrNotDir.Error() }

func (notDirStat) Is(target error) bool {
	return target == backend.ErrNotDir || target == fs.ErrNotExist
}
