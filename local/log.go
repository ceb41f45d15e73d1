//go:build linux

package local

import (
	"context"
	"io"
	"io/fs"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/fencefs/fencefs/backend"
)

// OpenLog opens the regular file name for reading and writing in place
// ([backend.LogOpener]), through the same no-follow resolution as every
// other method: a symlink anywhere gives ErrSymlink or ErrNotRegular.
// With create, the file is created exclusively (fs.ErrExist when it
// exists) with mode 0666 less the umask, with any missing parent
// directories, and the file, its directory and each directory above it up
// to the root are synced before it returns.
func (f *FS) OpenLog(ctx context.Context, name string, create bool) (backend.LogFile, error) {
	const op = "open"
	if err := begin(ctx, op, name); err != nil {
		return nil, err
	}
	if name == "." {
		return nil, &fs.PathError{Op: op, Path: name, Err: backend.ErrIsDir}
	}
	if !create {
		fd, err := f.open(name, unix.O_RDWR|unix.O_NONBLOCK|unix.O_NOCTTY)
		if err != nil {
			return nil, f.openError(op, name, err, backend.ErrNotRegular)
		}
		if _, err := requireRegular(fd); err != nil {
			unix.Close(fd)
			return nil, pathError(op, name, err)
		}
		return f.track(&logFile{fd: fd, name: name})
	}
	dir, base := backend.Split(name)
	dirfd, err := f.openParent(dir)
	if err != nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: err}
	}
	defer unix.Close(dirfd)
	const flags = unix.O_RDWR | unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(dirfd, base, flags, 0o666)
	if err != nil {
		return nil, pathError(op, name, err)
	}
	if err := f.syncCreated(fd, dirfd, dir); err != nil {
		unix.Unlinkat(dirfd, base, 0)
		unix.Close(fd)
		return nil, pathError(op, name, err)
	}
	return f.track(&logFile{fd: fd, name: name})
}

// track registers l for Close to close, or closes it if f is closed.
func (f *FS) track(l *logFile) (backend.LogFile, error) {
	f.logsMu.Lock()
	defer f.logsMu.Unlock()
	if f.logsClosed {
		unix.Close(l.fd)
		return nil, &fs.PathError{Op: "open", Path: l.name, Err: fs.ErrClosed}
	}
	if f.logs == nil {
		f.logs = map[*logFile]struct{}{}
	}
	f.logs[l] = struct{}{}
	l.fs = f
	return l, nil
}

// closeLogs closes every file OpenLog opened, for Close.
func (f *FS) closeLogs() {
	f.logsMu.Lock()
	logs := f.logs
	f.logs, f.logsClosed = nil, true
	f.logsMu.Unlock()
	for l := range logs {
		l.close()
	}
}

// syncCreated syncs a file just created (fd), its directory (dirfd, the
// storage path dir) and every directory above it up to the root, some
// of which may have been created with it.
func (f *FS) syncCreated(fd, dirfd int, dir string) error {
	if err := ignoringEINTR(func() error { return unix.Fsync(fd) }); err != nil {
		return err
	}
	if err := ignoringEINTR(func() error { return unix.Fsync(dirfd) }); err != nil {
		return err
	}
	for dir != "." {
		dir, _ = backend.Split(dir)
		pfd, err := f.open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK)
		if err != nil {
			return err
		}
		err = ignoringEINTR(func() error { return unix.Fsync(pfd) })
		unix.Close(pfd)
		if err != nil {
			return err
		}
	}
	return nil
}

// logFile is the backend.LogFile of a local file: plain pread, pwrite,
// fdatasync and flock on its descriptor. Every method holds mu for
// reading while it uses the descriptor, and Close (of the file or of its
// FS) holds it for writing, so that no call reaches a descriptor number
// closed and reused meanwhile: calls after Close fail with fs.ErrClosed.
type logFile struct {
	fd     int
	name   string
	fs     *FS          // the FS that tracks it
	mu     sync.RWMutex // guards closed
	closed bool
}

// use runs fn with the descriptor, unless the file is closed.
func (l *logFile) use(op string, fn func(fd int) error) error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return &fs.PathError{Op: op, Path: l.name, Err: fs.ErrClosed}
	}
	if err := fn(l.fd); err != nil {
		return pathError(op, l.name, err)
	}
	return nil
}

func (l *logFile) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	eof := false
	err := l.use("read", func(fd int) error {
		for n < len(p) {
			m, err := unix.Pread(fd, p[n:], off+int64(n))
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return err
			}
			if m == 0 {
				eof = true
				return nil
			}
			n += m
		}
		return nil
	})
	if err == nil && eof {
		err = io.EOF
	}
	return n, err
}

func (l *logFile) WriteAt(p []byte, off int64) (int, error) {
	n := 0
	err := l.use("write", func(fd int) error {
		for n < len(p) {
			m, err := unix.Pwrite(fd, p[n:], off+int64(n))
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return err
			}
			n += m
		}
		return nil
	})
	return n, err
}

func (l *logFile) Sync() error {
	return l.use("sync", func(fd int) error {
		return ignoringEINTR(func() error { return unix.Fdatasync(fd) })
	})
}

func (l *logFile) stat(op string) (unix.Stat_t, error) {
	var st unix.Stat_t
	err := l.use(op, func(fd int) error {
		return ignoringEINTR(func() error { return unix.Fstat(fd, &st) })
	})
	return st, err
}

func (l *logFile) Size() (int64, error) {
	st, err := l.stat("stat")
	return st.Size, err
}

func (l *logFile) Removed() (bool, error) {
	st, err := l.stat("stat")
	return err == nil && st.Nlink == 0, err
}

// Lock waits for the lock on a duplicate of the descriptor (one open file
// description, so one lock), holding no mu while it waits: a Close (of
// the file or its FS) meanwhile does not wait for the lock, and the lock,
// once taken, goes with the duplicate's close.
func (l *logFile) Lock() error {
	var dup int
	if err := l.use("lock", func(fd int) error {
		var err error
		dup, err = unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
		return err
	}); err != nil {
		return err
	}
	err := ignoringEINTR(func() error { return unix.Flock(dup, unix.LOCK_EX) })
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		unix.Close(dup) // the last descriptor of the description: the lock goes with it
		return &fs.PathError{Op: "lock", Path: l.name, Err: fs.ErrClosed}
	}
	unix.Close(dup)
	if err != nil {
		return pathError("lock", l.name, err)
	}
	return nil
}

func (l *logFile) TryLock() (bool, error) {
	busy := false
	err := l.use("lock", func(fd int) error {
		err := ignoringEINTR(func() error { return unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) })
		if err == unix.EWOULDBLOCK {
			busy = true
			return nil
		}
		return err
	})
	return err == nil && !busy, err
}

func (l *logFile) Unlock() error {
	return l.use("unlock", func(fd int) error { return unix.Flock(fd, unix.LOCK_UN) })
}

func (l *logFile) Close() error {
	l.fs.logsMu.Lock()
	delete(l.fs.logs, l)
	l.fs.logsMu.Unlock()
	return l.close()
}

// close closes the descriptor once.
func (l *logFile) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	if err := unix.Close(l.fd); err != nil {
		return pathError("close", l.name, err)
	}
	return nil
}
