package sftpadapter

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"

	"github.com/fencefs/fencefs/backend"
	"github.com/pkg/sftp"
)

// tempPrefix starts the names of temporary files; the rest is random, so
// the name stays short whatever the target's name.
const tempPrefix = ".fencefs-"

// errNoVersions is the answer to a MatchVersion precondition: SFTP servers
// keep no version tokens.
var errNoVersions = fmt.Errorf("%w: the sftp backend has no version tokens", backend.ErrPrecondition)

// MkdirAll creates dir and its missing parents. Existing components are
// checked without following links: a symlink gives ErrSymlink and a file
// ErrNotDir (fs.ErrExist when it is dir itself).
func (f *FS) MkdirAll(ctx context.Context, dir string) error {
	if err := checkPath("mkdir", dir); err != nil {
		return err
	}
	if dir == "." {
		return nil
	}
	ctx, cancel := f.opContext(ctx)
	defer cancel()
	err := f.do(ctx, true, func(s *session) error { return f.mkdirAll(s.client, dir, fs.ErrExist) })
	return pathErr("mkdir", dir, err)
}

// mkdirAll creates the missing components of dir, after checking the
// existing ones in one round trip. lastIsFile is the error when dir
// itself is an existing non-directory.
func (f *FS) mkdirAll(c *sftp.Client, dir string, lastIsFile error) error {
	parts := strings.Split(dir, "/")
	infos, errs := f.lstatChain(c, dir)
	for i, err := range errs {
		sub := strings.Join(parts[:i+1], "/")
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				return err
			}
			if err := f.mkdir(c, sub); err != nil {
				return err
			}
			continue
		}
		switch {
		case infos[i].Mode()&fs.ModeSymlink != 0:
			return backend.ErrSymlink
		case !infos[i].IsDir() && i == len(parts)-1:
			return lastIsFile
		case !infos[i].IsDir():
			return backend.ErrNotDir
		}
	}
	return nil
}

// mkdir creates one directory; losing a race to another creator of the
// same directory is not an error.
func (f *FS) mkdir(c *sftp.Client, name string) error {
	err := c.Mkdir(f.remote(name))
	if err == nil {
		return nil
	}
	fi, lerr := c.Lstat(f.remote(name))
	switch {
	case lerr != nil:
		dir, _ := backend.Split(name)
		return f.explainFailure(c, dir, 0, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return backend.ErrSymlink
	case !fi.IsDir():
		return backend.ErrNotDir
	}
	return nil
}

// OpenWrite starts an atomic write of name: the bytes go to a temporary
// file beside it, and Commit renames that file over name. Missing parents
// are created. A CreateOnly write to an existing file fails at once with
// fs.ErrExist; every precondition is checked again at Commit.
func (f *FS) OpenWrite(ctx context.Context, name string, opts backend.WriteOptions) (backend.FileWriter, error) {
	if err := checkPath("write", name); err != nil {
		return nil, err
	}
	if name == "." {
		return nil, backend.PathError("write", name, backend.ErrIsDir)
	}
	octx, cancel := f.opContext(ctx)
	defer cancel()
	var w *writer
	dir, _ := backend.Split(name)
	err := f.do(octx, true, func(s *session) error {
		tmp, file, err := f.createTemp(s.client, name, opts.Precondition)
		if err != nil {
			return f.explainFailure(s.client, dir, 0, err)
		}
		w = &writer{f: f, s: s, ctx: ctx, name: name, pre: opts.Precondition, tmp: tmp, file: file}
		return nil
	})
	if err != nil {
		return nil, pathErr("write", name, err)
	}
	return w, nil
}

// createTemp creates the parents of name, checks what name is now, and
// creates an empty temporary file beside it.
func (f *FS) createTemp(c *sftp.Client, name string, pre backend.Precondition) (string, *sftp.File, error) {
	dir, _ := backend.Split(name)
	if dir != "." {
		if err := f.mkdirAll(c, dir, backend.ErrNotDir); err != nil {
			return "", nil, err
		}
	}
	fi, err := c.Lstat(f.remote(name))
	switch {
	case err == nil:
		if err := checkTarget(fi); err != nil {
			return "", nil, err
		}
		if pre.CreateOnly {
			return "", nil, fs.ErrExist
		}
	case !errors.Is(err, os.ErrNotExist):
		return "", nil, err
	}
	tmp := f.remote(backend.Join(dir, tempName()))
	file, err := c.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return "", nil, err
	}
	return tmp, file, nil
}

// checkTarget refuses to replace anything but a regular file.
func checkTarget(fi os.FileInfo) error {
	switch {
	case fi.IsDir():
		return backend.ErrIsDir
	case !fi.Mode().IsRegular():
		return backend.ErrNotRegular
	}
	return nil
}

// tempName returns a fresh, short temporary file name.
func tempName() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return tempPrefix + hex.EncodeToString(b[:]) + ".tmp"
}

// writer is a pending write to a temporary file on the server.
type writer struct {
	f    *FS
	s    *session // carries file
	ctx  context.Context
	name string
	pre  backend.Precondition
	tmp  string
	file *sftp.File

	mu   sync.Mutex
	err  error // first write error; the write can no longer commit
	done bool  // committed or abandoned
}

// Write appends p to the temporary file.
func (w *writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.done:
		return 0, backend.PathError("write", w.name, fs.ErrClosed)
	case w.err != nil:
		return 0, w.err
	}
	ctx, cancel := w.f.opContext(w.ctx)
	defer cancel()
	var n int
	err := w.s.run(ctx, func(s *session) error {
		var err error
		if n, err = w.file.Write(p); err != nil {
			dir, _ := backend.Split(w.name)
			err = w.f.explainFailure(s.client, dir, len(p)-n, err)
		}
		return err
	})
	if err != nil {
		if isTransportErr(err) {
			w.f.drop(w.s)
		}
		w.err = pathErr("write", w.name, err)
		return n, w.err
	}
	return n, nil
}

// Commit checks the precondition and renames the temporary file over the
// target. On any failure the temporary file is removed and the target is
// left as it was.
func (w *writer) Commit() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return backend.PathError("commit", w.name, fs.ErrClosed)
	}
	err := w.err
	if err == nil {
		err = w.commit()
	}
	if err != nil {
		w.abandon()
		return err
	}
	w.done = true
	return nil
}

// commit flushes the temporary file and puts it in place.
func (w *writer) commit() error {
	ctx, cancel := w.f.opContext(w.ctx)
	defer cancel()
	// On failure abandon closes the file again, which costs nothing when
	// the close reached the server and releases the handle when it did not.
	dir, _ := backend.Split(w.name)
	err := w.s.run(ctx, func(s *session) error {
		if err := w.file.Close(); err != nil {
			return w.f.explainFailure(s.client, dir, 0, err)
		}
		return nil
	})
	if err != nil {
		if isTransportErr(err) {
			w.f.drop(w.s)
		}
		return pathErr("commit", w.name, err)
	}
	w.f.commitMu.Lock()
	defer w.f.commitMu.Unlock()
	err = w.f.do(ctx, false, func(s *session) error {
		if err := w.f.place(s.client, w.tmp, w.name, w.pre); err != nil {
			return w.f.explainFailure(s.client, dir, 0, err)
		}
		return nil
	})
	return pathErr("commit", w.name, err)
}

// place checks the precondition against the current target and moves tmp
// over it, keeping the target's mode. The caller holds commitMu.
func (f *FS) place(c *sftp.Client, tmp, name string, pre backend.Precondition) error {
	fi, err := f.lstatPath(c, name)
	exists := err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if exists {
		if err := checkTarget(fi); err != nil {
			return err
		}
	}
	if err := f.checkPrecondition(c, name, exists, pre); err != nil {
		return err
	}
	if exists {
		if err := c.Chmod(tmp, fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)); err != nil {
			return err
		}
	}
	if pre.CreateOnly {
		if _, ok := c.HasExtension("hardlink@openssh.com"); ok {
			return f.linkInPlace(c, tmp, name)
		}
	}
	return c.PosixRename(tmp, f.remote(name))
}

// linkInPlace puts tmp at name with a hard link, which fails when name
// exists, even when another client created it a moment ago.
func (f *FS) linkInPlace(c *sftp.Client, tmp, name string) error {
	if err := c.Link(tmp, f.remote(name)); err != nil {
		if _, lerr := c.Lstat(f.remote(name)); lerr == nil {
			return fs.ErrExist
		}
		return err
	}
	if err := c.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		// The file is in place; only the second name is left over.
		f.addOrphan(tmp)
	}
	return nil
}

// checkPrecondition compares the current target with pre.
func (f *FS) checkPrecondition(c *sftp.Client, name string, exists bool, pre backend.Precondition) error {
	switch {
	case pre.CreateOnly && exists:
		return fs.ErrExist
	case pre.MatchVersion != "":
		return errNoVersions
	case pre.MatchHash == "":
		return nil
	case !exists:
		return backend.ErrPrecondition
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

// hashFile returns the lowercase hex SHA-256 of the regular file name.
func (f *FS) hashFile(c *sftp.Client, name string) (string, error) {
	file, _, err := f.openChecked(c, name)
	if err != nil {
		return "", err
	}
	defer file.Close()
	h := sha256.New()
	if _, err := file.WriteTo(h); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Close abandons the write unless it was committed.
func (w *writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.abandon()
	}
	return nil
}

// abandon closes and removes the temporary file. When its connection is
// gone, the file is left for the next connection to remove instead of
// waiting for the server here.
func (w *writer) abandon() {
	w.done = true
	if !w.s.alive() {
		w.f.addOrphan(w.tmp)
		return
	}
	ctx, cancel := cleanupContext(w.ctx)
	defer cancel()
	_ = w.s.run(ctx, func(*session) error { return w.file.Close() })
	err := w.s.run(ctx, func(s *session) error { return s.client.Remove(w.tmp) })
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		if isTransportErr(err) {
			w.f.drop(w.s)
		}
		w.f.addOrphan(w.tmp)
	}
}

// ReadFrom lets io.Copy hand the source to the writer; it copies in
// chunks so that memory stays bounded and each chunk honours the context.
func (w *writer) ReadFrom(r io.Reader) (int64, error) {
	buf := make([]byte, 256<<10)
	var total int64
	for {
		n, rerr := io.ReadFull(r, buf)
		if n > 0 {
			m, err := w.Write(buf[:n])
			total += int64(m)
			if err != nil {
				return total, err
			}
		}
		switch {
		case rerr == io.EOF || rerr == io.ErrUnexpectedEOF:
			return total, nil
		case rerr != nil:
			return total, rerr
		}
	}
}
