package sftpadapter

import (
	"errors"
	"fmt"

	"github.com/fencefs/fencefs/backend"
	"github.com/pkg/sftp"
)

// stRDOnly is statvfs@openssh.com's flag of a read-only file system.
const stRDOnly = 0x1

// explainFailure tells a full or read-only file system apart from other
// failures of a change under the storage directory dir. SFTP version 3 has
// no status for them: OpenSSH answers ENOSPC, EDQUOT and EROFS, as most
// errnos, with the generic SSH_FX_FAILURE. After such an answer it asks
// the server's statvfs@openssh.com extension about the file system and
// returns err wrapped in backend.ErrNoSpace when fewer than need bytes (at
// least one block) or no inodes are left, or in
// backend.ErrReadOnlyStorage when it is mounted read-only; otherwise, or
// when the server has no such extension, err as it is. A quota is not
// seen by statvfs, so a full quota stays a generic failure.
func (f *FS) explainFailure(c *sftp.Client, dir string, need int, err error) error {
	var st *sftp.StatusError
	if !errors.As(err, &st) || st.FxCode() != sftp.ErrSSHFxFailure {
		return err
	}
	if _, ok := c.HasExtension("statvfs@openssh.com"); !ok {
		return err
	}
	vfs, verr := c.StatVFS(f.remote(dir))
	if verr != nil {
		return err
	}
	block := vfs.Frsize
	if block == 0 {
		block = vfs.Bsize
	}
	free := vfs.Bavail * block
	switch {
	case vfs.Flag&stRDOnly != 0:
		return fmt.Errorf("%w: %v", backend.ErrReadOnlyStorage, err)
	case free < max(uint64(need), block, 1), vfs.Files > 0 && vfs.Favail == 0:
		return fmt.Errorf("%w: %v", backend.ErrNoSpace, err)
	}
	return err
}
