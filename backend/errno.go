package backend

import (
	"errors"
	"syscall"
)

// FatalErrno returns the fatal sentinel an errno in err's chain stands for
// (ENOSPC and EDQUOT: ErrNoSpace; EROFS: ErrReadOnlyStorage; EIO: ErrIO;
// EFBIG: ErrFileTooLarge),
// as an error matching both the sentinel and the errno, or nil when err
// holds none of them. Adapters over host file systems use it so that no
// caller has to know errnos.
func FatalErrno(err error) error {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return nil
	}
	var s error
	switch errno {
	case syscall.ENOSPC, syscall.EDQUOT:
		s = ErrNoSpace
	case syscall.EROFS:
		s = ErrReadOnlyStorage
	case syscall.EIO:
		s = ErrIO
	case syscall.EFBIG:
		s = ErrFileTooLarge
	default:
		return nil
	}
	return &errnoError{sentinel: s, errno: errno}
}

// errnoError is a sentinel that keeps the errno it was made from, for
// hosts that log or test it.
type errnoError struct {
	sentinel error
	errno    syscall.Errno
}

func (e *errnoError) Error() string   { return e.errno.Error() }
func (e *errnoError) Unwrap() []error { return []error{e.sentinel, e.errno} }
