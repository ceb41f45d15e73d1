package aferoadapter

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/backend"
)

// chmodBits are the mode bits a replacement keeps.
const chmodBits = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// OpenWrite starts writing name: the bytes go to a temporary file beside
// the target, created after any missing parent directories.
func (a *FS) OpenWrite(ctx context.Context, name string, opts backend.WriteOptions) (backend.FileWriter, error) {
	const op = "write"
	if err := a.begin(ctx, op, name); err != nil {
		return nil, err
	}
	if a.caps.ReadOnly {
		return nil, &fs.PathError{Op: op, Path: name, Err: backend.ErrReadOnly}
	}
	if name == "." {
		return nil, &fs.PathError{Op: op, Path: name, Err: backend.ErrIsDir}
	}
	if err := a.precheck(name, opts.Precondition); err != nil {
		return nil, pathErr(op, name, err)
	}
	dir, _ := backend.Split(name)
	if err := a.mkdirAll(dir, false); err != nil {
		return nil, pathErr(op, name, err)
	}
	f, tmp, err := a.createTemp(dir)
	if err != nil {
		return nil, pathErr(op, name, err)
	}
	return &writer{a: a, ctx: ctx, name: name, tmp: tmp, f: f, pre: opts.Precondition}, nil
}

// precheck refuses early what cannot succeed, before anything is
// created: a directory target, a path through a file or a symlink, and
// preconditions that already fail on the target's existence. Commit checks
// the preconditions again.
func (a *FS) precheck(name string, pre backend.Precondition) error {
	if pre.MatchVersion != "" {
		return fmt.Errorf("%w: afero files have no versions", backend.ErrPrecondition)
	}
	exist, err := a.checkParents(name)
	if err != nil {
		return err
	}
	var fi os.FileInfo
	if exist {
		if fi, err = a.lstatReal(name); err != nil && !isNotExist(err) {
			return err
		}
	}
	switch {
	case fi != nil && fi.IsDir():
		return backend.ErrIsDir
	case fi != nil && pre.CreateOnly:
		return fs.ErrExist
	case fi == nil && pre.MatchHash != "":
		return backend.ErrPrecondition
	}
	return nil
}

// createTemp creates an empty temporary file in dir, with a random name
// that listings hide.
func (a *FS) createTemp(dir string) (afero.File, string, error) {
	for range 100 {
		tmp := backend.Join(dir, fmt.Sprintf(".fencefs-%016x.tmp", rand.Uint64()))
		f, err := a.fsys.OpenFile(aferoPath(tmp), os.O_RDWR|os.O_CREATE|os.O_EXCL, a.filePerm)
		if err == nil {
			return f, tmp, nil
		}
		if !os.IsExist(err) {
			return nil, "", err
		}
	}
	return nil, "", fs.ErrExist
}

// MkdirAll creates dir and any missing parents.
func (a *FS) MkdirAll(ctx context.Context, dir string) error {
	const op = "mkdir"
	if err := a.begin(ctx, op, dir); err != nil {
		return err
	}
	if a.caps.ReadOnly {
		return &fs.PathError{Op: op, Path: dir, Err: backend.ErrReadOnly}
	}
	return pathErr(op, dir, a.mkdirAll(dir, true))
}

// mkdirAll creates the missing directories of dir, component by
// component so that no symlink is followed and no file is gone through.
// final tells whether dir itself is the target of MkdirAll, where an
// existing non-directory is fs.ErrExist rather than ErrNotDir.
func (a *FS) mkdirAll(dir string, final bool) error {
	parts := splitPath(dir)
	p := "."
	for i, c := range parts {
		p = backend.Join(p, c)
		fi, err := a.lstatReal(p)
		if isNotExist(err) {
			if err = a.fsys.Mkdir(aferoPath(p), a.dirPerm); err == nil {
				continue
			}
			// Another writer may have made it meanwhile.
			fi, err = a.lstatReal(p)
		}
		last := final && i == len(parts)-1
		switch {
		case err != nil:
			return mapErr(err)
		case fi.IsDir():
		case last:
			return fs.ErrExist
		case fi.Mode()&fs.ModeSymlink != 0:
			return backend.ErrSymlink
		default:
			return backend.ErrNotDir
		}
	}
	return nil
}

// writer is a pending write to a temporary file.
type writer struct {
	a    *FS
	ctx  context.Context
	name string
	tmp  string // the temporary file's storage path; "" once renamed or removed
	f    afero.File
	pre  backend.Precondition
	done bool // Commit was called, or the write abandoned
}

func (w *writer) Write(p []byte) (int, error) {
	if w.done {
		return 0, &fs.PathError{Op: "write", Path: w.name, Err: fs.ErrClosed}
	}
	if err := w.ctx.Err(); err != nil {
		return 0, &fs.PathError{Op: "write", Path: w.name, Err: err}
	}
	n, err := w.f.Write(p)
	return n, pathErr("write", w.name, err)
}

// Commit renames the temporary file over the target, after checking the
// precondition under the adapter's lock.
func (w *writer) Commit() error {
	if w.done {
		return &fs.PathError{Op: "commit", Path: w.name, Err: fs.ErrClosed}
	}
	w.done = true
	err := w.commit()
	if err != nil {
		w.abandon()
	}
	return err
}

func (w *writer) commit() error {
	const op = "commit"
	if err := w.f.Close(); err != nil {
		return pathErr(op, w.name, err)
	}
	if err := w.ctx.Err(); err != nil {
		return &fs.PathError{Op: op, Path: w.name, Err: err}
	}
	a := w.a
	a.commitMu.Lock()
	defer a.commitMu.Unlock()
	if a.lstat != nil {
		// A parent swapped for a symlink would redirect the rename.
		if _, err := a.checkParents(w.name); err != nil {
			return pathErr(op, w.name, err)
		}
	}
	fi, err := a.lstatReal(w.name)
	if err != nil && !isNotExist(err) {
		return pathErr(op, w.name, err)
	}
	if err != nil {
		fi = nil
	}
	if err := a.checkPrecondition(w.name, fi, w.pre); err != nil {
		return pathErr(op, w.name, err)
	}
	if fi != nil && fi.Mode().IsRegular() {
		// Best effort: an Fs that cannot chmod still gets the content.
		_ = a.fsys.Chmod(aferoPath(w.tmp), fi.Mode()&chmodBits)
	}
	if err := a.fsys.Rename(aferoPath(w.tmp), aferoPath(w.name)); err != nil {
		return pathErr(op, w.name, err)
	}
	w.tmp = ""
	return nil
}

// checkPrecondition judges pre against the target's current state fi
// (nil when missing).
func (a *FS) checkPrecondition(name string, fi os.FileInfo, pre backend.Precondition) error {
	switch {
	case fi != nil && fi.IsDir():
		return backend.ErrIsDir
	case pre.CreateOnly && fi != nil:
		return fs.ErrExist
	case pre.MatchVersion != "":
		return fmt.Errorf("%w: afero files have no versions", backend.ErrPrecondition)
	case pre.MatchHash == "":
		return nil
	case fi == nil || !fi.Mode().IsRegular():
		return backend.ErrPrecondition
	}
	sum, err := a.hash(name)
	if err != nil {
		return err
	}
	if !strings.EqualFold(sum, pre.MatchHash) {
		return backend.ErrPrecondition
	}
	return nil
}

// hash returns the lowercase hex SHA-256 of the file name.
func (a *FS) hash(name string) (string, error) {
	f, err := a.openFile(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Close abandons the write unless it was committed.
func (w *writer) Close() error {
	if w.done {
		return nil
	}
	w.done = true
	return w.abandon()
}

// abandon closes and removes the temporary file.
func (w *writer) abandon() error {
	if w.tmp == "" {
		return nil
	}
	w.f.Close()
	err := w.a.fsys.Remove(aferoPath(w.tmp))
	w.tmp = ""
	return pathErr("close", w.name, err)
}
