//go:build linux

package local

import (
	"context"
	"io"
	"io/fs"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fencefs/fencefs/backend"
)

// OpenRead opens the regular file name for reading. The file is opened
// non-blocking and checked with fstat before it is returned, so a FIFO,
// socket or device gives ErrNotRegular without blocking, and a directory
// ErrIsDir. A symlink as the final component gives ErrNotRegular, one on
// the way ErrSymlink. The stream's Info is the fstat of the descriptor it
// reads, so it describes exactly the file served, whatever was renamed
// over the path since.
func (f *FS) OpenRead(ctx context.Context, name string) (backend.FileReader, error) {
	const op = "open"
	if err := begin(ctx, op, name); err != nil {
		return nil, err
	}
	fd, err := f.open(name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY)
	if err != nil {
		return nil, f.openError(op, name, err, backend.ErrNotRegular)
	}
	st, err := requireRegular(fd)
	if err != nil {
		unix.Close(fd)
		return nil, pathError(op, name, err)
	}
	return &fdReader{fd: fd, name: name, st: statOf(&st)}, nil
}

// fdReader reads a regular file by its descriptor with plain read calls;
// an *os.File would first ask for the descriptor's flags and try to add
// it to the network poller, two system calls per file that a search over
// many small files pays for.
type fdReader struct {
	fd   int
	name string
	// st is what Info needs of the descriptor's fstat; Info is built from
	// it only when asked, so a search that never asks pays nothing for the
	// version string.
	st readStat
}

// readStat is the part of a Stat_t that infoOf reads: a search opens
// thousands of files, and the whole Stat_t (144 bytes) made each reader
// seven times bigger.
type readStat struct {
	ino  uint64
	size int64
	mtim unix.Timespec
	mode uint32
}

func statOf(st *unix.Stat_t) readStat {
	return readStat{ino: st.Ino, size: st.Size, mtim: st.Mtim, mode: st.Mode}
}

// Info describes the file the descriptor reads.
func (r *fdReader) Info() backend.FileInfo {
	st := unix.Stat_t{Ino: r.st.ino, Size: r.st.size, Mtim: r.st.mtim, Mode: r.st.mode}
	return infoOf(r.name, &st)
}

func (r *fdReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := unix.Read(r.fd, p)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

func (r *fdReader) Close() error {
	if r.fd < 0 {
		return fs.ErrClosed
	}
	fd := r.fd
	r.fd = -1
	return unix.Close(fd)
}

// requireRegular fails unless fd is a regular file, whose stat it returns.
func requireRegular(fd int) (unix.Stat_t, error) {
	var st unix.Stat_t
	if err := ignoringEINTR(func() error { return unix.Fstat(fd, &st) }); err != nil {
		return st, err
	}
	return st, regularOnly(&st)
}

// regularOnly fails unless st describes a regular file: ErrIsDir for a
// directory, ErrNotRegular for anything else.
func regularOnly(st *unix.Stat_t) error {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return nil
	case unix.S_IFDIR:
		return backend.ErrIsDir
	}
	return backend.ErrNotRegular
}

// openError classifies an error of f.open(name): ELOOP means a symlink on
// the way (ErrSymlink) or as the final component, which gives finalLink.
func (f *FS) openError(op, name string, err error, finalLink error) error {
	if err == unix.ELOOP && f.finalIsSymlink(name) {
		return &fs.PathError{Op: op, Path: name, Err: finalLink}
	}
	return pathError(op, name, err)
}

// finalIsSymlink reports whether the parent of name opens without meeting
// a symlink and name itself is one.
func (f *FS) finalIsSymlink(name string) bool {
	if name == "." {
		return false
	}
	dir, base := backend.Split(name)
	st, err := f.lstatIn(dir, base)
	return err == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}

// lstatIn lstats the component base of the directory dir.
func (f *FS) lstatIn(dir, base string) (unix.Stat_t, error) {
	var st unix.Stat_t
	if dir == "." {
		// A single component below the root needs no lookup to check.
		return st, f.fstatatRoot(base, &st)
	}
	pfd, err := f.open(dir, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return st, err
	}
	defer unix.Close(pfd)
	err = fstatat(pfd, base, &st)
	return st, err
}

// Stat returns the metadata of name without following a final symlink
// (like lstat). A path through a file gives an error matching both
// ErrNotDir and fs.ErrNotExist.
func (f *FS) Stat(ctx context.Context, name string) (backend.FileInfo, error) {
	const op = "stat"
	if err := begin(ctx, op, name); err != nil {
		return backend.FileInfo{}, err
	}
	var st unix.Stat_t
	var err error
	if name == "." {
		err = f.fstatRoot(&st)
	} else {
		dir, base := backend.Split(name)
		st, err = f.lstatIn(dir, base)
	}
	if err == unix.ENOTDIR {
		return backend.FileInfo{}, &fs.PathError{Op: op, Path: name, Err: notDirStat{}}
	}
	if err != nil {
		return backend.FileInfo{}, pathError(op, name, err)
	}
	return infoOf(name, &st), nil
}

// infoOf describes the storage path name from its stat. A regular file's
// Version is its inode, modification time and size: a replacement (a new
// inode) or an edit in place changes it.
func infoOf(name string, st *unix.Stat_t) backend.FileInfo {
	_, base := backend.Split(name)
	fi := backend.FileInfo{Name: base, Size: sizeOf(st), Mode: fileMode(st), ModTime: modTime(st)}
	if st.Mode&unix.S_IFMT == unix.S_IFREG {
		fi.Version = strconv.FormatUint(st.Ino, 16) + "-" + strconv.FormatInt(st.Mtim.Nano(), 16) + "-" + strconv.FormatInt(st.Size, 16)
	}
	return fi
}

// fstatat lstats the single component name of dirfd.
func fstatat(dirfd int, name string, st *unix.Stat_t) error {
	return ignoringEINTR(func() error { return unix.Fstatat(dirfd, name, st, unix.AT_SYMLINK_NOFOLLOW) })
}

// fileMode converts a stat mode to an fs.FileMode, as os does.
func fileMode(st *unix.Stat_t) fs.FileMode {
	m := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// sizeOf is the size of a regular file, the length of a symlink's target,
// or a directory's size as the host reports it (what stat and ls show);
// -1 (unknown) for special files, whose st_size means nothing.
func sizeOf(st *unix.Stat_t) int64 {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG, unix.S_IFLNK, unix.S_IFDIR:
		return st.Size
	}
	return -1
}

func modTime(st *unix.Stat_t) time.Time {
	return time.Unix(st.Mtim.Unix())
}
