package aferoadapter

import (
	"errors"
	"io/fs"

	"github.com/fencefs/fencefs/backend"
)

// Remove removes the file or empty directory name; a final symlink is
// removed itself, as os.Remove does.
func (v *view) Remove(name string) error {
	p, err := v.storage("remove", name)
	if err != nil {
		return err
	}
	return backend.PathError("remove", name, backend.Remove(v.ctx, v.b, p, backend.RemoveOptions{}))
}

// RemoveAll removes name and everything below it; a missing name is not
// an error, as with os.RemoveAll.
func (v *view) RemoveAll(name string) error {
	p, err := v.storage("remove", name)
	if err != nil {
		return err
	}
	err = backend.RemoveAll(v.ctx, v.b, p, backend.RemoveAllOptions{})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return backend.PathError("remove", name, err)
}

// Rename moves oldname to newname, replacing an existing file there.
func (v *view) Rename(oldname, newname string) error {
	from, err := v.storage("rename", oldname)
	if err != nil {
		return err
	}
	to, err := v.storage("rename", newname)
	if err != nil {
		return err
	}
	return backend.PathError("rename", oldname, backend.Rename(v.ctx, v.b, from, to, backend.RenameOptions{}))
}
