//go:build linux

package local

import (
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// realPath returns abs, the path of the directory open at fd whose stat is
// st, with its symlinks resolved. The kernel knows the path of an open
// directory (/proc/self/fd/N): asking it costs two system calls where
// resolving abs component by component costs one per component. Its
// answer is taken only when it names the very directory open at fd (same
// device and inode); otherwise (no /proc, a directory removed or out of
// the process's view) abs is resolved as filepath.EvalSymlinks does.
func realPath(abs string, fd int, st *unix.Stat_t) (string, error) {
	var buf [unix.PathMax]byte
	n, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf[:])
	if err == nil && n > 0 && n < len(buf) && buf[0] == '/' {
		p := string(buf[:n])
		var pst unix.Stat_t
		if p == filepath.Clean(p) && unix.Stat(p, &pst) == nil && pst.Dev == st.Dev && pst.Ino == st.Ino {
			return p, nil
		}
	}
	return filepath.EvalSymlinks(abs)
}
