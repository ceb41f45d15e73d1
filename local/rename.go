//go:build linux

package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"

	"github.com/fencefs/fencefs/backend"
)

// Rename moves from to to with renameat2, relative to descriptors of both
// parent directories, each opened without following any symlink; missing
// parents of to are created the same way. A final symlink is moved as the
// link itself. The preconditions are checked and the entry renamed while
// holding the lock that writes to both directories take (see Remove). When
// the target must not exist (CreateOnly, a directory source, or no target
// found under the lock) the rename uses RENAME_NOREPLACE, so a target that
// another program created meanwhile is never replaced either. MatchVersion
// gives errors.ErrUnsupported.
func (f *FS) Rename(ctx context.Context, from, to string, opts backend.RenameOptions) error {
	const op = "rename"
	if err := backend.CheckRename(op, from, to, opts); err != nil {
		return err
	}
	if err := begin(ctx, op, from); err != nil {
		return err
	}
	if err := checkPath(op, to); err != nil {
		return err
	}
	if opts.Precondition.MatchVersion != "" || opts.Source.MatchVersion != "" {
		return &fs.PathError{Op: op, Path: from, Err: fmt.Errorf("version precondition: %w", errors.ErrUnsupported)}
	}
	sdir, sbase := backend.Split(from)
	sfd, err := f.open(sdir, dirFlags)
	if err != nil {
		return pathError(op, from, err)
	}
	defer unix.Close(sfd)
	var sst unix.Stat_t
	if err := fstatat(sfd, sbase, &sst); err != nil {
		return pathError(op, from, err)
	}
	tdir, tbase := backend.Split(to)
	tfd, err := f.openParent(tdir)
	if err != nil {
		return pathError(op, to, err)
	}
	defer unix.Close(tfd)
	unlock, err := lockDirs(ctx, sfd, tfd)
	if err != nil {
		return pathError(op, from, err)
	}
	defer unlock()
	if err := renameAt(ctx, sfd, sbase, tfd, tbase, opts, from == to); err != nil {
		if se, ok := err.(sourceError); ok {
			return pathError(op, from, se.err)
		}
		return pathError(op, to, err)
	}
	err = ignoringEINTR(func() error { return unix.Fsync(tfd) })
	if err == nil && sdir != tdir {
		err = ignoringEINTR(func() error { return unix.Fsync(sfd) })
	}
	if err != nil {
		return pathError(op, to, err)
	}
	return nil
}

// renameAt checks both preconditions and renames, unless ctx ended
// meanwhile. The caller holds the locks of both directories. Errors about the source come as an
// *fs.PathError naming it; the others are bare, about the target.
func renameAt(ctx context.Context, sfd int, sbase string, tfd int, tbase string, opts backend.RenameOptions, same bool) error {
	var sst unix.Stat_t
	if err := fstatat(sfd, sbase, &sst); err != nil {
		return sourceError{err}
	}
	srcDir := sst.Mode&unix.S_IFMT == unix.S_IFDIR
	if err := matchAt(sfd, sbase, &sst, opts.Source); err != nil {
		return sourceError{err}
	}
	var tst unix.Stat_t
	exists := true
	switch err := fstatat(tfd, tbase, &tst); err {
	case nil:
	case unix.ENOENT:
		exists = false
	default:
		return err
	}
	pre := opts.Precondition
	switch {
	case !exists && (pre.MatchHash != ""):
		return backend.ErrPrecondition
	case !exists:
	case srcDir:
		return fs.ErrExist
	case tst.Mode&unix.S_IFMT == unix.S_IFDIR:
		return backend.ErrIsDir
	case pre.CreateOnly:
		return fs.ErrExist
	case same:
		return matchAt(tfd, tbase, &tst, pre)
	default:
		if err := regularOnly(&tst); err != nil {
			return err
		}
		if err := matchAt(tfd, tbase, &tst, pre); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if exists {
		return unix.Renameat(sfd, sbase, tfd, tbase)
	}
	err := unix.Renameat2(sfd, sbase, tfd, tbase, unix.RENAME_NOREPLACE)
	if err == unix.EINVAL || err == unix.ENOSYS {
		// File systems without RENAME_NOREPLACE: the lock still excludes
		// every fencefs writer.
		err = unix.Renameat(sfd, sbase, tfd, tbase)
	}
	return err
}

// sourceError marks an error of renameAt that is about the source.
type sourceError struct{ err error }

func (e sourceError) Error() string { return e.err.Error() }
