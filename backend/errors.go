package backend

import (
	"errors"
	"io/fs"
)

// Sentinel errors of fencefs backends. Each is returned wrapped in an
// *fs.PathError naming the storage path. Some also match an io/fs sentinel
// with errors.Is, as noted.
var (
	// ErrInvalidPath: the path is not canonical or not acceptable
	// (matches fs.ErrInvalid).
	ErrInvalidPath = &sentinel{"invalid path", fs.ErrInvalid}
	// ErrIsDir: a file operation named a directory.
	ErrIsDir = &sentinel{"is a directory", nil}
	// ErrNotDir: a directory operation named a file, or a path goes through
	// a file.
	ErrNotDir = &sentinel{"not a directory", nil}
	// ErrNotRegular: the path is a FIFO, socket, device or symlink where a
	// regular file is needed.
	ErrNotRegular = &sentinel{"not a regular file", nil}
	// ErrPrecondition: a write's precondition no longer holds.
	ErrPrecondition = &sentinel{"precondition failed", nil}
	// ErrOutside: the path resolves outside the root (matches
	// fs.ErrPermission).
	ErrOutside = &sentinel{"resolves outside the root", fs.ErrPermission}
	// ErrLoop: the path resolves through a symlink loop.
	ErrLoop = &sentinel{"symlink loop", nil}
	// ErrSymlink: a backend operation met a symlink it does not follow.
	ErrSymlink = &sentinel{"symlink in path", nil}
	// ErrNameTooLong: a component or the whole path is too long
	// (matches fs.ErrInvalid).
	ErrNameTooLong = &sentinel{"file name too long", fs.ErrInvalid}
	// ErrReadOnly: the backend or mount refuses writes (matches
	// fs.ErrPermission).
	ErrReadOnly = &sentinel{"read-only", fs.ErrPermission}
	// ErrNoSpace: the storage is full or a quota is reached (ENOSPC,
	// EDQUOT). Nothing the caller does to its path helps, so tools treat
	// it as fatal.
	ErrNoSpace = &sentinel{"no space left on storage", nil}
	// ErrReadOnlyStorage: the storage itself cannot be written (a
	// read-only file system, EROFS), unlike ErrReadOnly, which is a
	// backend or mount configured not to write. Fatal for tools.
	ErrReadOnlyStorage = &sentinel{"storage is read-only", nil}
	// ErrIO: the storage failed to read or write (EIO). Fatal for tools.
	ErrIO = &sentinel{"storage input/output error", nil}
	// ErrFileTooLarge: the storage refuses a file of this size (EFBIG: a
	// file size limit of the file system or the process; an object over
	// the store's largest size). Fatal for tools.
	ErrFileTooLarge = &sentinel{"file too large for the storage", nil}
	// ErrUnsupported: a behaviour method declined at run time, so the
	// caller takes its fallback (see the package doc). It is
	// errors.ErrUnsupported itself, so either name matches.
	ErrUnsupported = errors.ErrUnsupported
)

// unsupported is the error with which a method declines op on name.
func unsupported(op, name string) error {
	return &fs.PathError{Op: op, Path: name, Err: ErrUnsupported}
}

// declined reports whether err is a decline (see ErrUnsupported).
func declined(err error) bool { return err != nil && errors.Is(err, ErrUnsupported) }

// sentinel is an error value that may also match a more general io/fs
// sentinel, so callers can test either.
type sentinel struct {
	msg    string
	parent error
}

func (e *sentinel) Error() string { return e.msg }

func (e *sentinel) Is(target error) bool { return e.parent != nil && target == e.parent }

// PathError returns err as an *fs.PathError naming the storage path name.
// An err that already is an *fs.PathError is returned with its path
// replaced, so host paths never leak through.
func PathError(op, name string, err error) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: op, Path: name, Err: pe.Err}
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}
