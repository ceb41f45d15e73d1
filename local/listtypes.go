//go:build linux

package local

import (
	"bytes"
	"context"
	"encoding/binary"
	"io/fs"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/fencefs/fencefs/backend"
)

// ListTypes returns the direct children of dir with their types, read from
// the directory entries themselves (d_type); only an entry whose file
// system does not record types is lstat-ed.
func (f *FS) ListTypes(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	const op = "list"
	if err := begin(ctx, op, dir); err != nil {
		return nil, err
	}
	fd, err := f.openDir(op, dir)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	bp := f.direntBuf()
	defer f.direntBufs.Put(bp)
	buf := *bp
	// Sized from the records each read returns, so a walk over many small
	// directories allocates no more entries than it lists; never nil, as
	// an empty directory's listing was not before.
	entries := []backend.DirEntry{}
	for {
		var n int
		err := ignoringEINTR(func() (err error) {
			n, err = unix.Getdents(fd, buf)
			return err
		})
		if err != nil {
			return nil, pathError(op, dir, err)
		}
		if n <= 0 {
			return entries, nil
		}
		b := buf[:n]
		entries = slices.Grow(entries, countDirents(b))
		// The names of one read share one string (one allocation, not
		// one per entry: a walk lists a hundred thousand names), copied
		// once they are gathered at the front of buf, each where a record
		// already read stood.
		names := 0
		first := len(entries)
		for len(b) >= direntName {
			reclen := int(binary.NativeEndian.Uint16(b[direntReclen:]))
			if reclen < direntName || reclen > len(b) {
				break
			}
			typ := b[direntName-1]
			name := b[direntName:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			b = b[reclen:]
			if len(name) == 0 || name[0] == '.' && (len(name) == 1 || len(name) == 2 && name[1] == '.') || len(name) == pendingNameLen && isPendingName(string(name)) {
				continue
			}
			var mode fs.FileMode
			switch typ {
			case unix.DT_REG:
			case unix.DT_DIR:
				mode = fs.ModeDir
			case unix.DT_LNK:
				mode = fs.ModeSymlink
			case unix.DT_FIFO:
				mode = fs.ModeNamedPipe
			case unix.DT_SOCK:
				mode = fs.ModeSocket
			case unix.DT_CHR:
				mode = fs.ModeDevice | fs.ModeCharDevice
			case unix.DT_BLK:
				mode = fs.ModeDevice
			default:
				var st unix.Stat_t
				if err := fstatat(fd, string(name), &st); err != nil {
					continue
				}
				mode = fileMode(&st).Type()
			}
			names += copy(buf[names:], name)
			// Size holds where the name ends until all is made.
			entries = append(entries, backend.DirEntry{Type: mode, Size: int64(names)})
		}
		all := string(buf[:names])
		start := 0
		for i := first; i < len(entries); i++ {
			end := int(entries[i].Size)
			entries[i].Name, entries[i].Size = all[start:end], -1
			start = end
		}
	}
}

// pendingNameLen is the length of every name isPendingName accepts.
const pendingNameLen = len(tempPrefix) + 8 + len(tempSuffix)

// direntBuf returns a getdents buffer from f's pool: a walk lists
// thousands of directories, and a fresh 32 KiB buffer for each was most of
// the bytes it allocated.
func (f *FS) direntBuf() *[]byte {
	if bp, ok := f.direntBufs.Get().(*[]byte); ok {
		return bp
	}
	buf := make([]byte, direntBufSize)
	return &buf
}

// countDirents returns the number of records in b, a getdents result
// (with "." and "..", so at most two more than the entries they give).
func countDirents(b []byte) int {
	n := 0
	for len(b) >= direntName {
		reclen := int(binary.NativeEndian.Uint16(b[direntReclen:]))
		if reclen < direntName || reclen > len(b) {
			break
		}
		n++
		b = b[reclen:]
	}
	return n
}
