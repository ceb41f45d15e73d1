package sftpadapter

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/pkg/sftp"

	"github.com/fencefs/fencefs/backend"
)

// errNoVersionChange answers a MatchVersion precondition of a change.
var errNoVersionChange = fmt.Errorf("version precondition: %w", errors.ErrUnsupported)

// Remove removes the file, symlink (the link itself) or empty directory
// name. Its ancestors are checked for symlinks first, as every path is.
// The precondition is checked and the entry removed under the mutex
// commits hold, so they are one step between writers sharing this FS, but
// not between different clients of the server
// (Capabilities.AtomicRemove is false).
func (f *FS) Remove(ctx context.Context, name string, opts backend.RemoveOptions) error {
	if err := backend.CheckRemove(name, opts); err != nil {
		return err
	}
	if err := checkChange("remove", name, opts.Precondition); err != nil {
		return err
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
		if err := f.match(s.client, name, fi, opts.Precondition); err != nil {
			return err
		}
		if !fi.IsDir() {
			return s.client.Remove(f.remote(name))
		}
		return f.removeDir(s.client, name)
	})
	return pathErr("remove", name, err)
}

// removeDir removes the directory name, telling a directory that is not
// empty (which SFTP reports as a bare failure) from other failures.
func (f *FS) removeDir(c *sftp.Client, name string) error {
	err := c.RemoveDirectory(f.remote(name))
	if err == nil {
		return nil
	}
	if entries, lerr := c.ReadDir(f.remote(name)); lerr == nil && len(entries) > 0 {
		return backend.ErrNotEmpty
	}
	return err
}

// Rename moves from to to. A replacement uses posix-rename@openssh.com,
// which is rename(2) on the server and so atomic; a target that must not
// exist (CreateOnly, a directory source, or none found) uses the plain
// SFTP rename, which refuses an existing target: OpenSSH links a file into
// place, so that refusal holds even against other clients. The
// preconditions are checked under the mutex commits hold (see Remove).
func (f *FS) Rename(ctx context.Context, from, to string, opts backend.RenameOptions) error {
	const op = "rename"
	if err := backend.CheckRename(op, from, to, opts); err != nil {
		return err
	}
	if err := checkChange(op, from, opts.Source); err != nil {
		return err
	}
	if err := checkChange(op, to, opts.Precondition); err != nil {
		return err
	}
	ctx, cancel := f.opContext(ctx)
	defer cancel()
	f.commitMu.Lock()
	defer f.commitMu.Unlock()
	var srcErr error
	err := f.do(ctx, false, func(s *session) error {
		src, err := f.lstatPath(s.client, from)
		if err == nil {
			err = f.match(s.client, from, src, opts.Source)
		}
		if err != nil {
			srcErr = err
			return err
		}
		return f.renameChecked(s.client, from, to, src.IsDir(), opts.Precondition)
	})
	if err != nil && err == srcErr {
		return pathErr(op, from, err)
	}
	return pathErr(op, to, err)
}

// renameChecked checks the target of a rename and moves from there.
func (f *FS) renameChecked(c *sftp.Client, from, to string, srcDir bool, pre backend.Precondition) error {
	dir, _ := backend.Split(to)
	if dir != "." {
		if err := f.mkdirAll(c, dir, backend.ErrNotDir); err != nil {
			return err
		}
	}
	fi, err := c.Lstat(f.remote(to))
	exists := err == nil
	switch {
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return err
	case !exists && pre.MatchHash != "":
		return backend.ErrPrecondition
	case !exists:
		return f.renameNoReplace(c, from, to)
	case srcDir:
		return fs.ErrExist
	case fi.IsDir():
		return backend.ErrIsDir
	case pre.CreateOnly:
		return fs.ErrExist
	case from == to:
		return f.match(c, to, fi, pre)
	}
	if err := checkTarget(fi); err != nil {
		return err
	}
	if err := f.match(c, to, fi, pre); err != nil {
		return err
	}
	return c.PosixRename(f.remote(from), f.remote(to))
}

// renameNoReplace renames with the plain SFTP rename, which fails when the
// target exists; that failure is fs.ErrExist.
func (f *FS) renameNoReplace(c *sftp.Client, from, to string) error {
	err := c.Rename(f.remote(from), f.remote(to))
	if err != nil {
		if _, lerr := c.Lstat(f.remote(to)); lerr == nil {
			return fs.ErrExist
		}
	}
	return err
}

// match checks a MatchHash precondition against name, whose LSTAT is fi:
// only a regular file with that content matches.
func (f *FS) match(c *sftp.Client, name string, fi os.FileInfo, pre backend.Precondition) error {
	if pre.MatchHash == "" {
		return nil
	}
	if err := checkTarget(fi); err != nil {
		return err
	}
	sum, err := f.hashFile(c, name)
	if err != nil {
		return err
	}
	if sum != strings.ToLower(pre.MatchHash) {
		return backend.ErrPrecondition
	}
	return nil
}

// checkChange checks a path and refuses a version precondition: the
// server keeps no versions.
func checkChange(op, name string, pre backend.Precondition) error {
	if err := checkPath(op, name); err != nil {
		return err
	}
	if pre.MatchVersion != "" {
		return backend.PathError(op, name, errNoVersionChange)
	}
	return nil
}

// Compile-time checks of the changing operations.
var (
	_ backend.Remover = (*FS)(nil)
	_ backend.Renamer = (*FS)(nil)
)
