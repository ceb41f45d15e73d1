package memfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"sync"
	"time"

	"github.com/fencefs/fencefs/backend"
)

// OpenWrite starts writing the file name. The bytes are buffered and
// become the file's content at Commit, atomically, with the missing
// parent directories created then. ctx governs the whole write: once it
// is done, Write and Commit fail with its error and nothing changes. A
// directory at name gives backend.ErrIsDir and a path through a file
// backend.ErrNotDir, here and again at Commit; opts.Precondition is
// checked at Commit under the lock that commits. A replaced file keeps its
// permission bits; a new one gets 0644.
func (f *FS) OpenWrite(ctx context.Context, name string, opts backend.WriteOptions) (backend.FileWriter, error) {
	const op = "write"
	if err := begin(ctx, op, name); err != nil {
		return nil, err
	}
	if name == "." {
		return nil, &fs.PathError{Op: op, Path: name, Err: backend.ErrIsDir}
	}
	s := f.s
	s.mu.Lock()
	err := s.writable(op, name)
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return &writer{ctx: ctx, s: s, name: name, pre: opts.Precondition}, nil
}

// writable refuses a target that is a directory or lies below a file.
// The caller holds mu.
func (s *store) writable(op, name string) error {
	if _, ok := s.dirs[name]; ok {
		return &fs.PathError{Op: op, Path: name, Err: backend.ErrIsDir}
	}
	if s.fileAbove(name) {
		return &fs.PathError{Op: op, Path: name, Err: backend.ErrNotDir}
	}
	return nil
}

// writer is a pending write. Its methods may be called from several
// goroutines, so Close can abandon a write another goroutine is feeding.
type writer struct {
	ctx  context.Context
	s    *store
	name string
	pre  backend.Precondition

	mu   sync.Mutex
	buf  bytes.Buffer
	done bool // committed or abandoned
}

// Write buffers p.
func (w *writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return 0, &fs.PathError{Op: "write", Path: w.name, Err: fs.ErrClosed}
	}
	if err := w.ctx.Err(); err != nil {
		return 0, &fs.PathError{Op: "write", Path: w.name, Err: err}
	}
	return w.buf.Write(p)
}

// Commit makes the buffered bytes the file's content if the precondition
// holds. It may be called once.
func (w *writer) Commit() error {
	const op = "commit"
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return &fs.PathError{Op: op, Path: w.name, Err: fs.ErrClosed}
	}
	w.done = true
	if err := w.ctx.Err(); err != nil {
		return &fs.PathError{Op: op, Path: w.name, Err: err}
	}
	s := w.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.writable(op, w.name); err != nil {
		return err
	}
	old := s.files[w.name]
	if err := checkPrecondition(old, w.pre); err != nil {
		return &fs.PathError{Op: op, Path: w.name, Err: err}
	}
	dir, _ := backend.Split(w.name)
	if err := s.mkdirAll(op, dir); err != nil {
		return &fs.PathError{Op: op, Path: w.name, Err: backend.ErrNotDir}
	}
	perm := fs.FileMode(0o644)
	if old != nil {
		perm = old.perm
	}
	s.files[w.name] = &file{data: bytes.Clone(w.buf.Bytes()), perm: perm, mtime: time.Now(), version: s.nextVersion()}
	w.buf = bytes.Buffer{}
	return nil
}

// Close abandons the write unless it was committed.
func (w *writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
	w.buf = bytes.Buffer{}
	return nil
}

// checkPrecondition judges pre against the committed file old (nil when
// missing). A version or hash condition on a missing file fails, as the
// content it names is not there.
func checkPrecondition(old *file, pre backend.Precondition) error {
	switch {
	case pre.CreateOnly && old != nil:
		return fs.ErrExist
	case pre.MatchVersion != "" && (old == nil || old.version != pre.MatchVersion):
		return backend.ErrPrecondition
	case pre.MatchHash != "" && (old == nil || hashOf(old.data) != pre.MatchHash):
		return backend.ErrPrecondition
	}
	return nil
}

func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// MkdirAll creates dir and its missing parents. An existing directory is
// not an error; a file at dir gives fs.ErrExist and a file above it
// backend.ErrNotDir.
func (f *FS) MkdirAll(ctx context.Context, dir string) error {
	const op = "mkdir"
	if err := begin(ctx, op, dir); err != nil {
		return err
	}
	s := f.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mkdirAll(op, dir)
}

// Chmod sets the permission bits of the file name, which later
// replacements keep. It is how a test arranges a file's mode, since the
// backend contract has no such operation.
func (f *FS) Chmod(ctx context.Context, name string, perm fs.FileMode) error {
	const op = "chmod"
	if err := begin(ctx, op, name); err != nil {
		return err
	}
	s := f.s
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.files[name]
	if !ok {
		if _, ok := s.dirs[name]; ok {
			return &fs.PathError{Op: op, Path: name, Err: backend.ErrIsDir}
		}
		return s.missing(op, name)
	}
	nf := *old
	nf.perm = perm.Perm()
	s.files[name] = &nf
	return nil
}
