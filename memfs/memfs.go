// Package memfs is an in-memory fencefs backend: the reference every
// adapter is measured against, and a ready backend for tests, examples and
// scratch space that needs no disk.
//
// An [FS] passes the whole conformance suite (conformance.Run) and the
// tool-level suite (conformance.RunTools). It stores regular files with
// permission bits, modification times and versions, and directories that
// may be empty; it has no symbolic links and no special files. Writes are
// atomic and their preconditions are checked under the same lock as the
// commit, so of several writers presenting the same precondition at most
// one commits. Every method honours its context: a cancelled context fails
// the call with context.Canceled before anything is read or changed.
//
// Two FS values may share one store (see [FS.Reopen]), the way two servers
// share a bucket: what one commits, the other reads, and preconditions
// hold across both.
package memfs

import (
	"context"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fencefs/fencefs/backend"
)

// MaxNameBytes is the longest name component an FS accepts, as on most
// disk file systems.
const MaxNameBytes = 255

// FS is an in-memory backend. Its zero value is not usable; call [New].
// An FS is safe for concurrent use.
type FS struct {
	s *store
}

// store is the storage one or more FS values share.
type store struct {
	mu    sync.Mutex
	files map[string]*file
	dirs  map[string]time.Time
	// seq numbers commits, so every committed content has its own version.
	seq uint64
}

// file is one committed content. It is never modified in place, so a
// reader that holds it keeps a stable copy while writers replace it.
type file struct {
	data    []byte
	perm    fs.FileMode
	mtime   time.Time
	version string
}

// New returns an empty in-memory backend.
func New() *FS {
	return &FS{s: &store{
		files: map[string]*file{},
		dirs:  map[string]time.Time{".": time.Now()},
	}}
}

// Reopen returns a second backend value over the same storage, as a
// second server over the same bucket would be: each sees what the other
// commits, and preconditions are enforced across both.
func (f *FS) Reopen() *FS {
	return &FS{s: f.s}
}

// Capabilities reports what an FS stores and guarantees.
func (f *FS) Capabilities() backend.Capabilities {
	return backend.Capabilities{
		Name:                "memfs",
		ModeBits:            true,
		ModTimes:            true,
		EmptyDirs:           true,
		AtomicPreconditions: true,
		AtomicRemove:        true,
		AtomicRename:        true,
		Versions:            true,
		MaxNameBytes:        MaxNameBytes,
	}
}

// begin refuses a call whose context is done or whose path is not a
// canonical storage path with components of at most MaxNameBytes.
func begin(ctx context.Context, op, name string) error {
	if err := ctx.Err(); err != nil {
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	if err := backend.CheckPath(op, name); err != nil {
		return err
	}
	for c := range strings.SplitSeq(name, "/") {
		if len(c) > MaxNameBytes {
			return &fs.PathError{Op: op, Path: name, Err: backend.ErrNameTooLong}
		}
	}
	return nil
}

// missing explains why name is absent: a parent that is a file, or
// nothing there. The caller holds mu.
func (s *store) missing(op, name string) error {
	if s.fileAbove(name) {
		return &fs.PathError{Op: op, Path: name, Err: backend.ErrNotDir}
	}
	return &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
}

// fileAbove reports whether a proper parent of name is a file. The caller
// holds mu.
func (s *store) fileAbove(name string) bool {
	for d := name; d != "."; {
		d, _ = backend.Split(d)
		if _, ok := s.files[d]; ok {
			return true
		}
	}
	return false
}

// mkdirAll creates dir and its missing parents. The caller holds mu.
func (s *store) mkdirAll(op, dir string) error {
	if _, ok := s.files[dir]; ok {
		return &fs.PathError{Op: op, Path: dir, Err: fs.ErrExist}
	}
	if s.fileAbove(dir) {
		return &fs.PathError{Op: op, Path: dir, Err: backend.ErrNotDir}
	}
	now := time.Now()
	for d := dir; d != "."; d, _ = backend.Split(d) {
		if _, ok := s.dirs[d]; ok {
			break
		}
		s.dirs[d] = now
	}
	return nil
}

// nextVersion returns a version token no earlier commit had. The caller
// holds mu.
func (s *store) nextVersion() string {
	s.seq++
	return "v" + strconv.FormatUint(s.seq, 10)
}

var (
	_ backend.Backend            = (*FS)(nil)
	_ backend.Stater             = (*FS)(nil)
	_ backend.Writer             = (*FS)(nil)
	_ backend.DirMaker           = (*FS)(nil)
	_ backend.CapabilityReporter = (*FS)(nil)
)
