package memfs

import (
	"context"
	"io/fs"
	"slices"
	"time"

	"github.com/fencefs/fencefs/backend"
)

// Remove removes the file or empty directory name (see backend.Remover).
// The precondition is checked under the lock that commits, so a removal
// and a write presenting the same hash cannot both succeed.
func (f *FS) Remove(ctx context.Context, name string, opts backend.RemoveOptions) error {
	const op = "remove"
	if err := begin(ctx, op, name); err != nil {
		return err
	}
	if err := backend.CheckRemove(name, opts); err != nil {
		return err
	}
	s := f.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.dirs[name]; ok {
		switch {
		case opts.Precondition.MatchHash != "" || opts.Precondition.MatchVersion != "":
			return &fs.PathError{Op: op, Path: name, Err: backend.ErrIsDir}
		case len(s.below(name)) > 0:
			return &fs.PathError{Op: op, Path: name, Err: backend.ErrNotEmpty}
		}
		delete(s.dirs, name)
		return nil
	}
	old, ok := s.files[name]
	if !ok {
		return s.missing(op, name)
	}
	if err := checkPrecondition(old, opts.Precondition); err != nil {
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	delete(s.files, name)
	return nil
}

// below returns every stored path strictly inside the directory dir. The
// caller holds mu.
func (s *store) below(dir string) []string {
	var out []string
	for name := range s.files {
		if backend.IsWithin(name, dir) {
			out = append(out, name)
		}
	}
	for name := range s.dirs {
		if name != dir && backend.IsWithin(name, dir) {
			out = append(out, name)
		}
	}
	return out
}

// Rename moves from to to in one step under the lock that commits (see
// backend.Renamer): observers see the source or the target, never both or
// neither. A moved file keeps its permission bits and gets a new version
// at its new path.
func (f *FS) Rename(ctx context.Context, from, to string, opts backend.RenameOptions) error {
	const op = "rename"
	if err := f.beginMove(ctx, op, from, to, opts); err != nil {
		return err
	}
	s := f.s
	s.mu.Lock()
	defer s.mu.Unlock()
	src, isDir, err := s.source(op, from, opts.Source)
	if err != nil {
		return err
	}
	if err := s.checkTarget(op, to, isDir, from == to, opts.Precondition); err != nil {
		return err
	}
	if from == to {
		return nil
	}
	dir, _ := backend.Split(to)
	if err := s.mkdirAll(op, dir); err != nil {
		return &fs.PathError{Op: op, Path: to, Err: backend.ErrNotDir}
	}
	if !isDir {
		moved := *src
		moved.version = s.nextVersion()
		delete(s.files, from)
		s.files[to] = &moved
		return nil
	}
	inside := s.below(from)
	slices.Sort(inside)
	s.dirs[to] = s.dirs[from]
	delete(s.dirs, from)
	for _, name := range inside {
		dest := to + name[len(from):]
		if fl, ok := s.files[name]; ok {
			delete(s.files, name)
			s.files[dest] = fl
		} else {
			s.dirs[dest] = s.dirs[name]
			delete(s.dirs, name)
		}
	}
	return nil
}

// Copy copies the regular file from to to in one step (see
// backend.Copier); the target appears whole, as a write's commit makes it,
// and keeps its permission bits when it existed.
func (f *FS) Copy(ctx context.Context, from, to string, opts backend.CopyOptions) error {
	const op = "copy"
	if err := f.beginMove(ctx, op, from, to, opts); err != nil {
		return err
	}
	s := f.s
	s.mu.Lock()
	defer s.mu.Unlock()
	src, isDir, err := s.source(op, from, opts.Source)
	if err != nil {
		return err
	}
	if isDir {
		return &fs.PathError{Op: op, Path: from, Err: backend.ErrIsDir}
	}
	if err := s.checkTarget(op, to, false, from == to, opts.Precondition); err != nil {
		return err
	}
	dir, _ := backend.Split(to)
	if err := s.mkdirAll(op, dir); err != nil {
		return &fs.PathError{Op: op, Path: to, Err: backend.ErrNotDir}
	}
	perm := fs.FileMode(0o644)
	if old, ok := s.files[to]; ok {
		perm = old.perm
	}
	s.files[to] = &file{data: src.data, perm: perm, mtime: time.Now(), version: s.nextVersion()}
	return nil
}

// beginMove checks what every rename and copy checks first.
func (f *FS) beginMove(ctx context.Context, op, from, to string, opts backend.RenameOptions) error {
	if err := begin(ctx, op, from); err != nil {
		return err
	}
	if err := begin(ctx, op, to); err != nil {
		return err
	}
	return backend.CheckRename(op, from, to, opts)
}

// source returns the file at from (nil for a directory) after checking
// the source precondition pre: only a regular file can hold the content
// it names. The caller holds mu.
func (s *store) source(op, from string, pre backend.Precondition) (*file, bool, error) {
	if _, ok := s.dirs[from]; ok {
		if pre.MatchHash != "" || pre.MatchVersion != "" {
			return nil, true, &fs.PathError{Op: op, Path: from, Err: backend.ErrIsDir}
		}
		return nil, true, nil
	}
	src, ok := s.files[from]
	if !ok {
		return nil, false, s.missing(op, from)
	}
	if err := checkPrecondition(src, pre); err != nil {
		return nil, false, &fs.PathError{Op: op, Path: from, Err: err}
	}
	return src, false, nil
}

// checkTarget judges the target to of a rename or copy: a directory
// source needs a missing target, a file replaces only a regular file that
// pre accepts, and no target lies below a file. The caller holds mu.
func (s *store) checkTarget(op, to string, srcDir, same bool, pre backend.Precondition) error {
	if s.fileAbove(to) {
		return &fs.PathError{Op: op, Path: to, Err: backend.ErrNotDir}
	}
	_, isDir := s.dirs[to]
	old, isFile := s.files[to]
	var err error
	switch {
	case srcDir && (isDir || isFile) && !same:
		err = fs.ErrExist
	case isDir && !srcDir:
		err = backend.ErrIsDir
	case isDir:
	default:
		err = checkPrecondition(old, pre)
	}
	if err != nil {
		return &fs.PathError{Op: op, Path: to, Err: err}
	}
	return nil
}

var (
	_ backend.Remover = (*FS)(nil)
	_ backend.Renamer = (*FS)(nil)
	_ backend.Copier  = (*FS)(nil)
)
