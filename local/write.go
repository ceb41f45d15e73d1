//go:build linux

package local

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fencefs/fencefs/backend"
)

// MkdirAll creates dir and any missing parents with mode 0777 less the
// umask, without following symlinks. An existing directory is not an
// error; a file on the way gives ErrNotDir, a symlink on the way
// ErrSymlink, and a non-directory (symlinks included) at dir itself
// fs.ErrExist.
func (f *FS) MkdirAll(ctx context.Context, dir string) error {
	const op = "mkdir"
	if err := begin(ctx, op, dir); err != nil {
		return err
	}
	if err := f.mkdirAll(dir); err != nil {
		return &fs.PathError{Op: op, Path: dir, Err: err}
	}
	return nil
}

// mkdirAll is MkdirAll; it returns sentinel errors.
func (f *FS) mkdirAll(dir string) error {
	if fd, err := f.open(dir, unix.O_PATH|unix.O_DIRECTORY); err == nil {
		unix.Close(fd)
		return nil
	}
	parts := strings.Split(dir, "/")
	for i, c := range parts {
		parent := "."
		if i > 0 {
			parent = strings.Join(parts[:i], "/")
		}
		if err := f.mkdirIn(parent, c, i == len(parts)-1); err != nil {
			return err
		}
	}
	return nil
}

// mkdirIn creates the directory c in the directory parent unless it
// exists; last tells whether c is the directory asked for.
func (f *FS) mkdirIn(parent, c string, last bool) error {
	pfd, err := f.open(parent, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return mapErrno(err)
	}
	defer unix.Close(pfd)
	err = unix.Mkdirat(pfd, c, 0o777)
	if err != unix.EEXIST {
		return mapErrno(err) // nil when created
	}
	var st unix.Stat_t
	if err := fstatat(pfd, c, &st); err != nil {
		return mapErrno(err)
	}
	switch typ := st.Mode & unix.S_IFMT; {
	case typ == unix.S_IFDIR:
		return nil
	case last:
		return fs.ErrExist
	case typ == unix.S_IFLNK:
		return backend.ErrSymlink
	}
	return backend.ErrNotDir
}

// CommitHooks marks FS as a [backend.CommitHooker]: Commit calls
// WriteOptions.BeforeCommit while it syncs the temporary file (on another
// goroutine, so that the hook's own sync, a checkpoint record's, goes to
// the disk with the file's) and waits for both before the rename.
func (f *FS) CommitHooks() {}

// OpenWrite starts an atomic write of the regular file name. Missing
// parent directories are created now (without following symlinks); the
// data goes to a temporary file beside the target, which Commit renames
// over it. An existing directory at name gives ErrIsDir and any other
// non-regular file (symlinks included) ErrNotRegular, here and again at
// Commit. An existing target's permission bits are kept; a new file gets
// 0666 less the umask. Precondition.MatchVersion is not supported (the
// local disk has no versions) and gives errors.ErrUnsupported.
func (f *FS) OpenWrite(ctx context.Context, name string, opts backend.WriteOptions) (backend.FileWriter, error) {
	const op = "write"
	if err := begin(ctx, op, name); err != nil {
		return nil, err
	}
	if name == "." {
		return nil, &fs.PathError{Op: op, Path: name, Err: backend.ErrIsDir}
	}
	if opts.Precondition.MatchVersion != "" {
		return nil, &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("version precondition: %w", errors.ErrUnsupported)}
	}
	dir, base := backend.Split(name)
	dirfd, err := f.openParent(dir)
	if err != nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: err}
	}
	w, err := newFileWriter(ctx, dirfd, name, base, opts.Precondition)
	if err != nil {
		unix.Close(dirfd)
		return nil, pathError(op, name, err)
	}
	w.hook = opts.BeforeCommit
	return w, nil
}

// openParent opens the directory dir for reading, creating it first if it
// is missing. Every component of dir is a middle component of the path
// written, so a symlink anywhere in it is ErrSymlink.
func (f *FS) openParent(dir string) (int, error) {
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NONBLOCK
	fd, err := f.open(dir, flags)
	if err == unix.ENOENT {
		if err := f.mkdirAll(dir); err != nil {
			return -1, err
		}
		fd, err = f.open(dir, flags)
	}
	if err != nil {
		return -1, mapErrno(err)
	}
	return fd, nil
}

// fileWriter is the pending write returned by OpenWrite. It is not safe
// for concurrent use.
type fileWriter struct {
	ctx   context.Context
	name  string   // storage path of the target, for errors
	base  string   // final component of the target, in dirfd
	dirfd int      // the target's directory: lock, rename, fsync
	tmp   string   // the temporary file's name in dirfd
	file  *os.File // the temporary file
	pre   backend.Precondition
	hook  func() error // WriteOptions.BeforeCommit
	done  bool         // committed or abandoned; the descriptors are closed
}

// newFileWriter checks the target name in dirfd and creates the
// temporary file beside it.
func newFileWriter(ctx context.Context, dirfd int, name, base string, pre backend.Precondition) (*fileWriter, error) {
	st, exists, err := statTarget(dirfd, base)
	if err != nil {
		return nil, err
	}
	fd, tmp, err := createTemp(dirfd)
	if err != nil {
		return nil, err
	}
	w := &fileWriter{ctx: ctx, name: name, base: base, dirfd: dirfd, tmp: tmp, file: os.NewFile(uintptr(fd), name), pre: pre}
	// Take the target's permissions before any byte is written, so the
	// new content is never more exposed than the old.
	if exists {
		if err := w.file.Chmod(fileMode(&st).Perm()); err != nil {
			w.removeTemp()
			w.file.Close()
			return nil, err
		}
	}
	return w, nil
}

// statTarget lstats base in dirfd and fails unless it is missing or a
// regular file.
func statTarget(dirfd int, base string) (st unix.Stat_t, exists bool, err error) {
	switch err := fstatat(dirfd, base, &st); err {
	case nil:
	case unix.ENOENT:
		return st, false, nil
	default:
		return st, false, err
	}
	return st, true, regularOnly(&st)
}

// The temporary name of a pending write: short, so that a target name of
// up to 255 bytes still leaves room for it, and recognisable, so that
// listings hide pending writes.
const (
	tempPrefix = ".fencefs-"
	tempSuffix = ".tmp"
)

// stagingPattern is what isPendingName recognises, as
// Capabilities.StagingPattern declares it.
const stagingPattern = `^\.fencefs-[0-9a-f]{8}\.tmp$`

// isPendingName reports whether name has the shape of a pending write's
// temporary file (".fencefs-" + 8 hex digits + ".tmp").
func isPendingName(name string) bool {
	if len(name) != len(tempPrefix)+8+len(tempSuffix) || !strings.HasPrefix(name, tempPrefix) || !strings.HasSuffix(name, tempSuffix) {
		return false
	}
	for _, c := range name[len(tempPrefix) : len(tempPrefix)+8] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// createTemp creates a new empty file with a short random name in dirfd,
// exclusively, with mode 0666 for the kernel to reduce by the umask.
// The name stays short so that a target name of up to 255 bytes works.
func createTemp(dirfd int) (int, string, error) {
	const flags = unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW | unix.O_CLOEXEC
	for i := 0; ; i++ {
		tmp := fmt.Sprintf(tempPrefix+"%08x"+tempSuffix, rand.Uint32())
		fd, err := unix.Openat(dirfd, tmp, flags, 0o666)
		if err == unix.EEXIST && i < maxRetries {
			continue
		}
		return fd, tmp, err
	}
}

// Write appends p to the pending content.
func (w *fileWriter) Write(p []byte) (int, error) {
	if w.done {
		return 0, &fs.PathError{Op: "write", Path: w.name, Err: fs.ErrClosed}
	}
	if err := w.ctx.Err(); err != nil {
		return 0, &fs.PathError{Op: "write", Path: w.name, Err: err}
	}
	n, err := w.file.Write(p)
	if err != nil {
		return n, pathError("write", w.name, err)
	}
	return n, nil
}

// Commit makes the written bytes the target's content: it syncs the
// temporary file while WriteOptions.BeforeCommit runs (whose error fails
// the commit), then, holding an exclusive flock on the target's
// directory, checks the target and the precondition and renames the
// temporary file over the target, and finally syncs the directory. On
// failure the target is untouched and the temporary file removed. A
// cancelled context fails the commit before anything changes.
func (w *fileWriter) Commit() error {
	const op = "commit"
	if w.done {
		return &fs.PathError{Op: op, Path: w.name, Err: fs.ErrClosed}
	}
	renamed := false
	defer func() { w.finish(renamed) }()
	if err := w.ctx.Err(); err != nil {
		return &fs.PathError{Op: op, Path: w.name, Err: err}
	}
	var hookErr error
	hookDone := make(chan struct{})
	if w.hook != nil {
		go func() {
			defer close(hookDone)
			hookErr = w.hook()
		}()
	} else {
		close(hookDone)
	}
	syncErr := w.file.Sync()
	<-hookDone
	if syncErr != nil {
		return pathError(op, w.name, syncErr)
	}
	if hookErr != nil {
		return &fs.PathError{Op: op, Path: w.name, Err: hookErr}
	}
	if err := w.swap(); err != nil {
		return pathError(op, w.name, err)
	}
	renamed = true
	if err := ignoringEINTR(func() error { return unix.Fsync(w.dirfd) }); err != nil {
		return pathError(op, w.name, err)
	}
	return nil
}

// swap checks the target and renames the temporary file over it, under
// the directory lock that makes check and rename one step for every
// fencefs writer, in any process.
func (w *fileWriter) swap() error {
	lock, err := lockDir(w.ctx, w.dirfd)
	if err != nil {
		return err
	}
	defer lock.release()
	if err := w.checkTarget(); err != nil {
		return err
	}
	// The check may have taken a while (hashing a large target): a write
	// whose context ended meanwhile commits nothing.
	if err := w.ctx.Err(); err != nil {
		return err
	}
	if w.pre.CreateOnly {
		// NOREPLACE also stops writers that do not take the lock.
		err := unix.Renameat2(w.dirfd, w.tmp, w.dirfd, w.base, unix.RENAME_NOREPLACE)
		if err != unix.EINVAL && err != unix.ENOSYS {
			return err
		}
	}
	return unix.Renameat(w.dirfd, w.tmp, w.dirfd, w.base)
}

// checkTarget checks that the target is missing or a regular file and that
// the precondition holds, and gives the temporary file the target's
// current permissions.
func (w *fileWriter) checkTarget() error {
	st, exists, err := statTarget(w.dirfd, w.base)
	if err != nil {
		return err
	}
	if w.pre.CreateOnly && exists {
		return fs.ErrExist
	}
	if w.pre.MatchHash != "" {
		if !exists {
			return backend.ErrPrecondition
		}
		sum, err := hashAt(w.dirfd, w.base)
		if err != nil {
			return err
		}
		if sum != strings.ToLower(w.pre.MatchHash) {
			return backend.ErrPrecondition
		}
	}
	if exists {
		return w.file.Chmod(fileMode(&st).Perm())
	}
	return nil
}

// hashAt returns the lowercase hex SHA-256 of the regular file base in
// dirfd.
func hashAt(dirfd int, base string) (string, error) {
	fd, err := unix.Openat(dirfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	file := os.NewFile(uintptr(fd), base)
	defer file.Close()
	if _, err := requireRegular(fd); err != nil {
		return "", err
	}
	h := sha256.New()
	if _, err := io.Copy(h, file); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Close abandons the write unless it was committed: the temporary file is
// removed and the target left as it was. Close after Commit, or a second
// Close, does nothing.
func (w *fileWriter) Close() error {
	if w.done {
		return nil
	}
	return w.finish(false)
}

// finish closes the descriptors and, unless the temporary file was renamed
// over the target, removes it.
func (w *fileWriter) finish(renamed bool) error {
	w.done = true
	var err error
	if !renamed {
		err = w.removeTemp()
	}
	err = errors.Join(err, w.file.Close())
	unix.Close(w.dirfd)
	if err != nil {
		return pathError("close", w.name, err)
	}
	return nil
}

// removeTemp unlinks the temporary file.
func (w *fileWriter) removeTemp() error {
	err := unix.Unlinkat(w.dirfd, w.tmp, 0)
	if err == unix.ENOENT {
		return nil
	}
	return err
}
