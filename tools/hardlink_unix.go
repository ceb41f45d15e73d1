//go:build unix

package tools

import (
	"os"
	"syscall"

	"github.com/fencefs/fencefs/backend"
)

// otherLinks returns how many other hard links the regular file name has
// on local disk (0 elsewhere, or when it cannot tell). It only words a
// result: the edit itself never opens the file by this host path.
func (s *Set) otherLinks(name string) int {
	host, ok := backend.LocalPath(s.b, name)
	if !ok {
		return 0
	}
	fi, err := os.Lstat(host)
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
		return int(st.Nlink - 1)
	}
	return 0
}
