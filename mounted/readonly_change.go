package mounted

import (
	"context"
	"io/fs"

	"github.com/fencefs/fencefs/backend"
)

// Remove refuses with backend.ErrReadOnly.
func (r *readOnly) Remove(ctx context.Context, name string, opts backend.RemoveOptions) error {
	return refuse("remove", name)
}

// RemoveFiles refuses with backend.ErrReadOnly.
func (r *readOnly) RemoveFiles(ctx context.Context, names []string) error {
	if len(names) == 0 {
		return nil
	}
	return refuse("remove", names[0])
}

// Rename refuses with backend.ErrReadOnly.
func (r *readOnly) Rename(ctx context.Context, from, to string, opts backend.RenameOptions) error {
	if err := backend.CheckPath("rename", to); err != nil {
		return err
	}
	return refuse("rename", from)
}

// Copy refuses with backend.ErrReadOnly.
func (r *readOnly) Copy(ctx context.Context, from, to string, opts backend.CopyOptions) error {
	if err := backend.CheckPath("copy", from); err != nil {
		return err
	}
	return refuse("copy", to)
}

// refuse checks name and refuses the change op with backend.ErrReadOnly.
func refuse(op, name string) error {
	if err := backend.CheckPath(op, name); err != nil {
		return err
	}
	return &fs.PathError{Op: op, Path: name, Err: backend.ErrReadOnly}
}

// Interface checks.
var (
	_ backend.Remover      = (*readOnly)(nil)
	_ backend.BatchRemover = (*readOnly)(nil)
	_ backend.Renamer      = (*readOnly)(nil)
	_ backend.Copier       = (*readOnly)(nil)
)
