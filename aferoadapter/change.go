package aferoadapter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/fencefs/fencefs/backend"
)

// errNoVersions answers a MatchVersion precondition of a change: afero
// files have no versions.
var errNoVersions = fmt.Errorf("version precondition: %w", errors.ErrUnsupported)

// Remove removes the file or empty directory name. The check of the
// precondition and the removal hold the lock commits hold, so they are
// atomic between writers sharing this *FS, as writes are.
func (a *FS) Remove(ctx context.Context, name string, opts backend.RemoveOptions) error {
	const op = "remove"
	if err := backend.CheckRemove(name, opts); err != nil {
		return err
	}
	if err := a.beginChange(ctx, op, name, opts.Precondition); err != nil {
		return err
	}
	a.commitMu.Lock()
	defer a.commitMu.Unlock()
	fi, err := a.lookup(name, true)
	if err != nil {
		return pathErr(op, name, err)
	}
	if err := a.match(name, fi, opts.Precondition); err != nil {
		return pathErr(op, name, err)
	}
	if fi.IsDir() {
		if empty, err := a.isEmptyDir(name); err != nil || !empty {
			if err == nil {
				err = backend.ErrNotEmpty
			}
			return pathErr(op, name, err)
		}
	}
	return pathErr(op, name, a.fsys.Remove(aferoPath(name)))
}

// Rename moves from to to under the lock commits hold, after checking both
// preconditions (see backend.Renamer); missing parents of to are created.
// It is atomic when the Fs's Rename is (os.Rename, afero.MemMapFs).
func (a *FS) Rename(ctx context.Context, from, to string, opts backend.RenameOptions) error {
	const op = "rename"
	if err := backend.CheckRename(op, from, to, opts); err != nil {
		return err
	}
	if err := a.beginChange(ctx, op, from, opts.Source); err != nil {
		return err
	}
	if err := a.beginChange(ctx, op, to, opts.Precondition); err != nil {
		return err
	}
	a.commitMu.Lock()
	defer a.commitMu.Unlock()
	src, err := a.lookup(from, true)
	if err != nil {
		return pathErr(op, from, err)
	}
	if err := a.match(from, src, opts.Source); err != nil {
		return pathErr(op, from, err)
	}
	if err := a.checkRenameTarget(to, src.IsDir(), from == to, opts.Precondition); err != nil {
		return pathErr(op, to, err)
	}
	if from == to {
		return nil
	}
	dir, _ := backend.Split(to)
	if err := a.mkdirAll(dir, false); err != nil {
		return pathErr(op, to, err)
	}
	return pathErr(op, to, a.fsys.Rename(aferoPath(from), aferoPath(to)))
}

// checkRenameTarget judges the target of a rename: a directory source needs
// a missing target; a file source replaces only a regular file, and only
// one that pre accepts.
func (a *FS) checkRenameTarget(to string, srcDir, same bool, pre backend.Precondition) error {
	fi, err := a.lookup(to, true)
	switch {
	case isNotExist(err) && pre.MatchHash != "":
		return backend.ErrPrecondition
	case isNotExist(err):
		return nil
	case err != nil:
		return err
	case srcDir:
		return fs.ErrExist
	case fi.IsDir():
		return backend.ErrIsDir
	case pre.CreateOnly:
		return fs.ErrExist
	case !same && !fi.Mode().IsRegular():
		return backend.ErrNotRegular
	}
	return a.match(to, fi, pre)
}

// beginChange checks what every change checks first.
func (a *FS) beginChange(ctx context.Context, op, name string, pre backend.Precondition) error {
	if err := a.begin(ctx, op, name); err != nil {
		return err
	}
	if a.caps.ReadOnly {
		return &fs.PathError{Op: op, Path: name, Err: backend.ErrReadOnly}
	}
	if pre.MatchVersion != "" {
		return &fs.PathError{Op: op, Path: name, Err: errNoVersions}
	}
	return nil
}

// match checks a MatchHash precondition against name, whose metadata is
// fi: only a regular file holding that content matches.
func (a *FS) match(name string, fi os.FileInfo, pre backend.Precondition) error {
	if pre.MatchHash == "" {
		return nil
	}
	return a.checkPrecondition(name, fi, backend.Precondition{MatchHash: pre.MatchHash})
}

// isEmptyDir reports whether the directory name has no entries at all,
// hidden pending writes included.
func (a *FS) isEmptyDir(name string) (bool, error) {
	d, err := a.fsys.Open(aferoPath(name))
	if err != nil {
		return false, err
	}
	defer d.Close()
	names, err := d.Readdirnames(1)
	if err == io.EOF {
		return true, nil
	}
	return len(names) == 0, err
}

// Compile-time checks of the changing operations.
var (
	_ backend.Remover = (*FS)(nil)
	_ backend.Renamer = (*FS)(nil)
)
