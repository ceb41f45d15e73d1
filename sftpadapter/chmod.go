package sftpadapter

import (
	"context"
	"io/fs"

	"github.com/fencefs/fencefs/backend"
)

// Chmod sets the permission bits of the regular file name, which later
// replacements keep. It is not part of the backend contract (no tool
// changes a mode); a checkpoint restore uses it to give a re-created file
// the mode it had. The path is checked component by component as every
// operation of this backend checks it (no symlink on the way, the final
// component a regular file) under the FS's commit mutex, then SETSTAT
// sets the bits.
func (f *FS) Chmod(ctx context.Context, name string, perm fs.FileMode) error {
	const op = "chmod"
	if err := checkChange(op, name, backend.Precondition{}); err != nil {
		return err
	}
	if f.Capabilities().ReadOnly {
		return &fs.PathError{Op: op, Path: name, Err: backend.ErrReadOnly}
	}
	ctx, cancel := f.opContext(ctx)
	defer cancel()
	f.commitMu.Lock()
	defer f.commitMu.Unlock()
	err := f.do(ctx, false, func(s *session) error {
		fi, err := f.lstatPath(s.client, name)
		if err != nil {
			return err
		}
		switch {
		case fi.IsDir():
			return backend.ErrIsDir
		case !fi.Mode().IsRegular():
			return backend.ErrNotRegular
		}
		return s.client.Chmod(f.remote(name), perm.Perm())
	})
	return pathErr(op, name, err)
}
