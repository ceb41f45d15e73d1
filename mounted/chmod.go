package mounted

import (
	"context"
	"errors"
	"io/fs"

	"github.com/fencefs/fencefs/backend"
)

// Chmod sets the permission bits of the regular file name on its mount,
// where the mount's backend has a Chmod method of this signature (local
// disk, memfs); elsewhere it declines with errors.ErrUnsupported. It is
// not part of the backend contract: a checkpoint restore uses it to give
// a re-created file its mode.
func (m *FS) Chmod(ctx context.Context, name string, perm fs.FileMode) error {
	t, err := m.changeTarget("chmod", name)
	if err != nil {
		return err
	}
	c, ok := t.child.(interface {
		Chmod(ctx context.Context, name string, perm fs.FileMode) error
	})
	if !ok || backend.CapabilitiesOf(t.child).ReadOnly {
		return &fs.PathError{Op: "chmod", Path: name, Err: errors.ErrUnsupported}
	}
	return rewrite(t.mount, c.Chmod(ctx, t.rest, perm))
}
