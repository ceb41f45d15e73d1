package memfs

import (
	"bytes"
	"context"

	"io/fs"

	"github.com/fencefs/fencefs/backend"
)

// OpenRead opens the file name for reading. The stream serves the content
// committed when it was opened, whatever is committed later, and fails
// with the context's error once ctx is done. A directory gives
// backend.ErrIsDir, a missing file fs.ErrNotExist, and a path through a
// file backend.ErrNotDir.
func (f *FS) OpenRead(ctx context.Context, name string) (backend.FileReader, error) {
	const op = "open"
	if err := begin(ctx, op, name); err != nil {
		return nil, err
	}
	s := f.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.dirs[name]; ok {
		return nil, &fs.PathError{Op: op, Path: name, Err: backend.ErrIsDir}
	}
	fl, ok := s.files[name]
	if !ok {
		return nil, s.missing(op, name)
	}
	_, base := backend.Split(name)
	return &reader{ctx: ctx, name: name, r: bytes.NewReader(fl.data), info: fl.info(base)}, nil
}

// reader streams one committed content.
type reader struct {
	ctx  context.Context
	name string
	r    *bytes.Reader
	info backend.FileInfo
}

// Info describes the content the stream serves.
func (r *reader) Info() backend.FileInfo { return r.info }

func (r *reader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, &fs.PathError{Op: "read", Path: r.name, Err: err}
	}
	return r.r.Read(p)
}

func (r *reader) Close() error { return nil }

// List returns the children of dir. A missing dir gives fs.ErrNotExist,
// a file backend.ErrNotDir, and a path through a file backend.ErrNotDir.
func (f *FS) List(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	const op = "list"
	if err := begin(ctx, op, dir); err != nil {
		return nil, err
	}
	s := f.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.files[dir]; ok {
		return nil, &fs.PathError{Op: op, Path: dir, Err: backend.ErrNotDir}
	}
	if _, ok := s.dirs[dir]; !ok {
		return nil, s.missing(op, dir)
	}
	entries := []backend.DirEntry{}
	for n, fl := range s.files {
		if d, base := backend.Split(n); d == dir {
			entries = append(entries, backend.DirEntry{Name: base, Size: int64(len(fl.data)), ModTime: fl.mtime})
		}
	}
	for n, mtime := range s.dirs {
		if d, base := backend.Split(n); n != "." && d == dir {
			entries = append(entries, backend.DirEntry{Name: base, Type: fs.ModeDir, Size: -1, ModTime: mtime})
		}
	}
	return entries, nil
}

// Stat returns the metadata of name; a file's Version changes with every
// commit. A missing path gives fs.ErrNotExist and a path through a file
// backend.ErrNotDir.
func (f *FS) Stat(ctx context.Context, name string) (backend.FileInfo, error) {
	const op = "stat"
	if err := begin(ctx, op, name); err != nil {
		return backend.FileInfo{}, err
	}
	s := f.s
	s.mu.Lock()
	defer s.mu.Unlock()
	_, base := backend.Split(name)
	if mtime, ok := s.dirs[name]; ok {
		return backend.FileInfo{Name: base, Size: -1, Mode: fs.ModeDir | 0o755, ModTime: mtime}, nil
	}
	if fl, ok := s.files[name]; ok {
		return fl.info(base), nil
	}
	return backend.FileInfo{}, s.missing(op, name)
}

// info describes fl under the name base.
func (fl *file) info(base string) backend.FileInfo {
	return backend.FileInfo{Name: base, Size: int64(len(fl.data)), Mode: fl.perm, ModTime: fl.mtime, Version: fl.version}
}
