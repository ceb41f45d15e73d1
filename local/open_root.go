//go:build linux

package local

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// openFallbackRoot opens abs as an os.Root and checks that it is the very
// directory rootfd holds, so both name the same root even if abs was
// renamed in between.
func openFallbackRoot(abs string, rootfd int) (*os.Root, error) {
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, err
	}
	var want unix.Stat_t
	if err := unix.Fstat(rootfd, &want); err != nil {
		r.Close()
		return nil, err
	}
	got, err := r.Stat(".")
	if err != nil || !sameFile(uint64(want.Dev), want.Ino, got) {
		r.Close()
		return nil, errors.Join(err, fs.ErrNotExist)
	}
	return r, nil
}

// openInRoot opens name below r with the semantics of openat2 and
// resolveFlags, for kernels without openat2. os.Root never leaves the root
// but follows symlinks that stay inside it, on the final component too,
// whatever O_NOFOLLOW says; so every component is lstat-ed first, refused
// with ELOOP when it is a symlink, and the descriptor opened for it must
// be that very file. A symlink swapped in between makes the open fail
// with ELOOP instead of redirecting it.
func openInRoot(r *os.Root, name string, flags int) (int, error) {
	if name == "." {
		f, err := r.OpenFile(".", flags, 0)
		if err != nil {
			return -1, errnoOf(err)
		}
		return dupFile(f)
	}
	parts := strings.Split(name, "/")
	dir := r
	defer func() {
		if dir != r {
			dir.Close()
		}
	}()
	for _, c := range parts[:len(parts)-1] {
		sub, err := openSubRoot(dir, c)
		if err != nil {
			return -1, err
		}
		if dir != r {
			dir.Close()
		}
		dir = sub
	}
	return openLeaf(dir, parts[len(parts)-1], flags)
}

// openSubRoot opens the directory c of dir, refusing a symlink.
func openSubRoot(dir *os.Root, c string) (*os.Root, error) {
	want, err := lstatIn(dir, c)
	if err != nil {
		return nil, err
	}
	switch want.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
	case unix.S_IFLNK:
		return nil, unix.ELOOP
	default:
		return nil, unix.ENOTDIR
	}
	sub, err := dir.OpenRoot(c)
	if err != nil {
		return nil, swappedErr(err)
	}
	got, err := sub.Stat(".")
	if err != nil || !sameFile(uint64(want.Dev), want.Ino, got) {
		sub.Close()
		return nil, unix.ELOOP
	}
	return sub, nil
}

// openLeaf opens the final component c of dir, refusing a symlink.
func openLeaf(dir *os.Root, c string, flags int) (int, error) {
	want, err := lstatIn(dir, c)
	if err != nil {
		return -1, err
	}
	switch typ := want.Mode & unix.S_IFMT; {
	case typ == unix.S_IFLNK:
		return -1, unix.ELOOP
	case flags&unix.O_DIRECTORY != 0 && typ != unix.S_IFDIR:
		return -1, unix.ENOTDIR
	}
	file, err := dir.OpenFile(c, flags, 0)
	if err != nil {
		return -1, swappedErr(err)
	}
	fd, err := dupFile(file)
	if err != nil {
		return -1, err
	}
	var got unix.Stat_t
	if err := unix.Fstat(fd, &got); err != nil || uint64(got.Dev) != uint64(want.Dev) || got.Ino != want.Ino {
		unix.Close(fd)
		return -1, unix.ELOOP
	}
	return fd, nil
}

// lstatIn lstats the single component c of dir.
func lstatIn(dir *os.Root, c string) (*syscall.Stat_t, error) {
	fi, err := dir.Lstat(c)
	if err != nil {
		return nil, errnoOf(err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil, unix.EINVAL
	}
	return st, nil
}

// dupFile returns a descriptor of its own for f, leaving the file
// description's flags alone (os.File.Fd would make it blocking), and
// closes f.
func dupFile(f *os.File) (int, error) {
	defer f.Close()
	conn, err := f.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	cerr := conn.Control(func(sysfd uintptr) {
		fd, err = unix.FcntlInt(sysfd, unix.F_DUPFD_CLOEXEC, 0)
	})
	if cerr != nil {
		return -1, cerr
	}
	return fd, err
}

// sameFile reports whether got is the file with device dev and inode ino.
func sameFile(dev, ino uint64, got fs.FileInfo) bool {
	st, ok := got.Sys().(*syscall.Stat_t)
	return ok && uint64(st.Dev) == dev && st.Ino == ino
}

// swappedErr is errnoOf for an open made after lstat found no symlink. The
// only errors os.Root reports without an errno concern symlinks it
// followed and refused (one leading out of the root), so one of those
// means a symlink was swapped in: ELOOP, as openat2 would say.
func swappedErr(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return unix.ELOOP
}

// errnoOf unwraps the errno from an os error, so that both openers report
// errors the same way.
func errnoOf(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return err
}
