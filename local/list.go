//go:build linux

package local

import (
	"context"
	"encoding/binary"
	"errors"
	"io/fs"

	"golang.org/x/sys/unix"

	"github.com/fencefs/fencefs/backend"
)

// direntBufSize is the getdents buffer: about 1000 typical entries per call.
const direntBufSize = 32 << 10

// List returns the direct children of dir, each with its type, size and
// modification time from an lstat relative to the open directory. A
// symlink is reported as such, never followed; listing a symlink gives
// ErrNotDir, as does listing a file.
func (f *FS) List(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	const op = "list"
	if err := begin(ctx, op, dir); err != nil {
		return nil, err
	}
	fd, err := f.openDir(op, dir)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	entries, err := readDir(fd)
	if err != nil {
		return nil, pathError(op, dir, err)
	}
	return entries, nil
}

// Walk calls fn for every entry below dir, depth first with each
// directory's entries sorted by name, every directory before its contents.
// Symlinks are reported, never followed. fs.SkipDir returned for a
// directory skips its contents; any other error stops the walk and is
// returned. A directory that vanishes or is replaced by a non-directory
// while the walk runs is skipped.
func (f *FS) Walk(ctx context.Context, dir string, fn backend.WalkFunc) error {
	const op = "walk"
	if err := begin(ctx, op, dir); err != nil {
		return err
	}
	entries, err := f.readDirAt(op, dir)
	if err != nil {
		return err
	}
	return f.walk(ctx, dir, entries, fn)
}

// walk reports entries, the listing of dir, and descends into directories.
func (f *FS) walk(ctx context.Context, dir string, entries []backend.DirEntry, fn backend.WalkFunc) error {
	backend.SortEntries(entries)
	for _, e := range entries {
		name := backend.Join(dir, e.Name)
		if err := fn(name, e); err != nil {
			if err == fs.SkipDir && e.IsDir() {
				continue
			}
			return err
		}
		if !e.IsDir() {
			continue
		}
		if err := ctx.Err(); err != nil {
			return &fs.PathError{Op: "walk", Path: name, Err: err}
		}
		children, err := f.readDirAt("walk", name)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, backend.ErrNotDir) || errors.Is(err, backend.ErrSymlink) {
			continue // changed since its parent was read
		}
		if err != nil {
			return err
		}
		if err := f.walk(ctx, name, children, fn); err != nil {
			return err
		}
	}
	return nil
}

// readDirAt lists the directory dir.
func (f *FS) readDirAt(op, dir string) ([]backend.DirEntry, error) {
	fd, err := f.openDir(op, dir)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	entries, err := readDir(fd)
	if err != nil {
		return nil, pathError(op, dir, err)
	}
	return entries, nil
}

// openDir opens the directory dir for reading its entries. A final
// symlink is not a directory (ErrNotDir); one on the way is ErrSymlink.
func (f *FS) openDir(op, dir string) (int, error) {
	fd, err := f.open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK)
	if err != nil {
		return -1, f.openError(op, dir, err, backend.ErrNotDir)
	}
	return fd, nil
}

// readDir reads the open directory fd in one pass and lstats each entry
// relative to it. Entries removed in between are left out.
func readDir(fd int) ([]backend.DirEntry, error) {
	buf := make([]byte, direntBufSize)
	var entries []backend.DirEntry
	var names []string
	for {
		var n int
		err := ignoringEINTR(func() (err error) {
			n, err = unix.Getdents(fd, buf)
			return err
		})
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return entries, nil
		}
		names = parseDirents(buf[:n], names[:0])
		for _, name := range names {
			if isPendingName(name) {
				continue // another writer's uncommitted content
			}
			var st unix.Stat_t
			switch err := fstatat(fd, name, &st); err {
			case nil:
				entries = append(entries, backend.DirEntry{
					Name: name, Type: fileMode(&st).Type(), Size: sizeOf(&st), ModTime: modTime(&st),
				})
			case unix.ENOENT:
			default:
				return nil, err
			}
		}
	}
}

// Offsets in struct linux_dirent64: d_ino (8 bytes), d_off (8), d_reclen
// (2), d_type (1), then the NUL-terminated name.
const (
	direntReclen = 16
	direntName   = 19
)

// parseDirents appends to names the names of the linux_dirent64 records in
// buf, without "." and "..", and stops at the first malformed record.
func parseDirents(buf []byte, names []string) []string {
	for len(buf) >= direntName {
		reclen := int(binary.NativeEndian.Uint16(buf[direntReclen:]))
		if reclen < direntName || reclen > len(buf) {
			break
		}
		name := buf[direntName:reclen]
		for i, b := range name {
			if b == 0 {
				name = name[:i]
				break
			}
		}
		buf = buf[reclen:]
		if s := string(name); s != "" && s != "." && s != ".." {
			names = append(names, s)
		}
	}
	return names
}
