package tools

import (
	"context"
	"io/fs"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/memfs"
)

// memFS is the reference in-memory backend with the switches tools'
// tests need: readOnly refuses every change with backend.ErrReadOnly,
// beforeCommit runs inside Commit before the write lands (to stand for a
// concurrent writer), and commitErr, when set, is what every Commit
// returns instead of committing (a misbehaving storage).
type memFS struct {
	*memfs.FS
	readOnly     bool
	beforeCommit func()
	commitErr    error
}

func newMemFS() *memFS {
	return &memFS{FS: memfs.New()}
}

func (m *memFS) Capabilities() backend.Capabilities {
	c := m.FS.Capabilities()
	c.ReadOnly = m.readOnly
	return c
}

func (m *memFS) MkdirAll(ctx context.Context, dir string) error {
	if m.readOnly {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: backend.ErrReadOnly}
	}
	return m.FS.MkdirAll(ctx, dir)
}

func (m *memFS) OpenWrite(ctx context.Context, name string, opts backend.WriteOptions) (backend.FileWriter, error) {
	if m.readOnly {
		return nil, &fs.PathError{Op: "write", Path: name, Err: backend.ErrReadOnly}
	}
	fw, err := m.FS.OpenWrite(ctx, name, opts)
	if err != nil {
		return nil, err
	}
	return hookedWriter{fw, m}, nil
}

// hookedWriter runs the backend's beforeCommit hook first in Commit.
type hookedWriter struct {
	backend.FileWriter
	m *memFS
}

func (w hookedWriter) Commit() error {
	if hook := w.m.beforeCommit; hook != nil {
		hook()
	}
	if err := w.m.commitErr; err != nil {
		w.FileWriter.Close()
		return err
	}
	return w.FileWriter.Commit()
}

// put stores a file directly (test set-up), creating its parents.
func (m *memFS) put(name, data string) {
	if err := backend.WriteFile(context.Background(), m.FS, name, []byte(data), backend.WriteOptions{}); err != nil {
		panic(err)
	}
}

// get returns a file's content directly.
func (m *memFS) get(name string) (string, bool) {
	data, err := backend.ReadFile(context.Background(), m.FS, name)
	return string(data), err == nil
}

// memRooted is memFS seen as a rooted namespace, as a mount table is.
type memRooted struct{ *memFS }

func (r memRooted) Capabilities() backend.Capabilities {
	c := r.memFS.Capabilities()
	c.Rooted = true
	return c
}
