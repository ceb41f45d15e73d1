//go:build unix

package tools

import (
	"golang.org/x/sys/unix"

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
	var st unix.Stat_t
	if err := unix.Lstat(host, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink <= 1 {
		return 0
	}
	return int(st.Nlink - 1)
}
