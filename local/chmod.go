//go:build linux

package local

import (
	"context"
	"io/fs"

	"golang.org/x/sys/unix"

	"github.com/fencefs/fencefs/backend"
)

// Chmod sets the permission bits of the regular file name, which later
// replacements keep. It is not part of the backend contract (no tool
// changes a mode); a checkpoint restore uses it to give a re-created file
// the mode it had. It works on a descriptor: the file is opened without
// following any symlink, as every open of this backend, and must be a
// regular file (backend.ErrNotRegular otherwise, backend.ErrIsDir for a
// directory).
func (f *FS) Chmod(ctx context.Context, name string, perm fs.FileMode) error {
	const op = "chmod"
	if err := begin(ctx, op, name); err != nil {
		return err
	}
	fd, err := f.open(name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY)
	if err != nil {
		return pathError(op, name, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := ignoringEINTR(func() error { return unix.Fstat(fd, &st) }); err != nil {
		return pathError(op, name, err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFDIR:
		return &fs.PathError{Op: op, Path: name, Err: backend.ErrIsDir}
	default:
		return &fs.PathError{Op: op, Path: name, Err: backend.ErrNotRegular}
	}
	if err := ignoringEINTR(func() error { return unix.Fchmod(fd, uint32(perm.Perm())) }); err != nil {
		return pathError(op, name, err)
	}
	return nil
}
