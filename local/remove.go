//go:build linux

package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fencefs/fencefs/backend"
)

// dirFlags open a parent directory for unlinkat, renameat2 and flock.
const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NONBLOCK

// Remove removes the file, symlink (the link itself), special file or empty
// directory name. It works on descriptors only: the parent directory is
// opened without following any symlink (as every open of this backend),
// and the entry is unlinked relative to it. The precondition is checked
// and the entry removed while holding the lock that writes to the same
// directory take, so a MatchHash removal and a concurrent fencefs write
// cannot both succeed. MatchVersion gives errors.ErrUnsupported.
func (f *FS) Remove(ctx context.Context, name string, opts backend.RemoveOptions) error {
	const op = "remove"
	if err := backend.CheckRemove(name, opts); err != nil {
		return err
	}
	if err := begin(ctx, op, name); err != nil {
		return err
	}
	if opts.Precondition.MatchVersion != "" {
		return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("version precondition: %w", errors.ErrUnsupported)}
	}
	dir, base := backend.Split(name)
	dirfd, err := f.open(dir, dirFlags)
	if err != nil {
		return pathError(op, name, err)
	}
	defer unix.Close(dirfd)
	unlock, err := lockDirs(ctx, dirfd, dirfd)
	if err != nil {
		return pathError(op, name, err)
	}
	defer unlock()
	if err := removeAt(ctx, dirfd, base, opts.Precondition); err != nil {
		return removeError(op, name, err)
	}
	if err := ignoringEINTR(func() error { return unix.Fsync(dirfd) }); err != nil {
		return pathError(op, name, err)
	}
	return nil
}

// removeAt checks pre against base in dirfd and unlinks it, unless ctx
// ended meanwhile (hashing a large file takes a while). The caller holds
// the directory's lock.
func removeAt(ctx context.Context, dirfd int, base string, pre backend.Precondition) error {
	var st unix.Stat_t
	if err := fstatat(dirfd, base, &st); err != nil {
		return err
	}
	isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
	if err := matchAt(dirfd, base, &st, pre); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	flags := 0
	if isDir {
		flags = unix.AT_REMOVEDIR
	}
	return unix.Unlinkat(dirfd, base, flags)
}

// matchAt checks a MatchHash precondition against the entry base of
// dirfd, whose lstat is st: only a regular file with that content matches.
func matchAt(dirfd int, base string, st *unix.Stat_t, pre backend.Precondition) error {
	if pre.MatchHash == "" {
		return nil
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFDIR:
		return backend.ErrIsDir
	default:
		return backend.ErrNotRegular
	}
	sum, err := hashAt(dirfd, base)
	if err != nil {
		return err
	}
	if sum != strings.ToLower(pre.MatchHash) {
		return backend.ErrPrecondition
	}
	return nil
}

// removeError maps the errors of a removal; ENOTEMPTY (and EEXIST, which
// some file systems answer instead) is ErrNotEmpty.
func removeError(op, name string, err error) error {
	if err == unix.ENOTEMPTY || err == unix.EEXIST {
		return &fs.PathError{Op: op, Path: name, Err: backend.ErrNotEmpty}
	}
	return pathError(op, name, err)
}

// lockDirs takes the exclusive flock that commits take on a target's
// directory (lockDir, waiting until ctx ends), on one or two directories. Two different directories are
// locked in the order of their device and inode numbers, so two renames
// between the same directories in opposite directions cannot deadlock.
func lockDirs(ctx context.Context, a, b int) (unlock func(), err error) {
	fds := []int{a}
	if a != b {
		var sa, sb unix.Stat_t
		if err := unix.Fstat(a, &sa); err != nil {
			return nil, err
		}
		if err := unix.Fstat(b, &sb); err != nil {
			return nil, err
		}
		switch {
		case sa.Dev == sb.Dev && sa.Ino == sb.Ino:
		case sa.Dev < sb.Dev || sa.Dev == sb.Dev && sa.Ino < sb.Ino:
			fds = []int{a, b}
		default:
			fds = []int{b, a}
		}
	}
	held := make([]*heldLock, 0, len(fds))
	for _, fd := range fds {
		h, err := lockDir(ctx, fd)
		if err != nil {
			for _, h := range slices.Backward(held) {
				h.release()
			}
			return nil, err
		}
		held = append(held, h)
	}
	return func() {
		for _, h := range slices.Backward(held) {
			h.release()
		}
	}, nil
}

// Compile-time checks of the changing operations.
var (
	_ backend.Remover = (*FS)(nil)
	_ backend.Renamer = (*FS)(nil)
)
