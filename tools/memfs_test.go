package tools

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"sort"
	"strings"
	"sync"

	"github.com/fencefs/fencefs/backend"
)

// memFS is a small in-memory backend for tests that need a backend
// without symlinks or host paths, or a rooted namespace (memRooted).
type memFS struct {
	mu    sync.Mutex
	files map[string][]byte
	dirs  map[string]bool
	// readOnly makes every write fail with backend.ErrReadOnly.
	readOnly bool
	// reads counts bytes handed out by OpenRead streams.
	reads int64
	// beforeCommit, when set, runs inside Commit before the precondition
	// is checked (to simulate a concurrent writer).
	beforeCommit func()
}

func newMemFS() *memFS {
	return &memFS{files: map[string][]byte{}, dirs: map[string]bool{".": true}}
}

func (m *memFS) Capabilities() backend.Capabilities {
	return backend.Capabilities{Name: "mem", EmptyDirs: true, AtomicPreconditions: true, ReadOnly: m.readOnly}
}

func (m *memFS) OpenRead(ctx context.Context, name string) (io.ReadCloser, error) {
	if err := backend.CheckPath("open", name); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dirs[name] {
		return nil, &fs.PathError{Op: "open", Path: name, Err: backend.ErrIsDir}
	}
	data, ok := m.files[name]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return io.NopCloser(&countReader{m: m, r: bytes.NewReader(data)}), nil
}

type countReader struct {
	m *memFS
	r io.Reader
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.m.mu.Lock()
	c.m.reads += int64(n)
	c.m.mu.Unlock()
	return n, err
}

func (m *memFS) List(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	if err := backend.CheckPath("list", dir); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.files[dir]; ok {
		return nil, &fs.PathError{Op: "list", Path: dir, Err: backend.ErrNotDir}
	}
	if !m.dirs[dir] {
		return nil, &fs.PathError{Op: "list", Path: dir, Err: fs.ErrNotExist}
	}
	var out []backend.DirEntry
	for d := range m.dirs {
		if p, base := backend.Split(d); d != "." && p == dir {
			out = append(out, backend.DirEntry{Name: base, Type: fs.ModeDir, Size: -1})
		}
	}
	for f, data := range m.files {
		if p, base := backend.Split(f); p == dir {
			out = append(out, backend.DirEntry{Name: base, Size: int64(len(data))})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name > out[j].Name }) // any order
	return out, nil
}

func (m *memFS) Stat(ctx context.Context, name string) (backend.FileInfo, error) {
	if err := backend.CheckPath("stat", name); err != nil {
		return backend.FileInfo{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	_, base := backend.Split(name)
	if m.dirs[name] {
		return backend.FileInfo{Name: base, Mode: fs.ModeDir, Size: -1}, nil
	}
	if data, ok := m.files[name]; ok {
		return backend.FileInfo{Name: base, Size: int64(len(data))}, nil
	}
	for d := name; d != "."; {
		d, _ = backend.Split(d)
		if _, ok := m.files[d]; ok {
			return backend.FileInfo{}, &fs.PathError{Op: "stat", Path: name, Err: backend.ErrNotDir}
		}
	}
	return backend.FileInfo{}, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
}

func (m *memFS) MkdirAll(ctx context.Context, dir string) error {
	if err := backend.CheckPath("mkdir", dir); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.readOnly {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: backend.ErrReadOnly}
	}
	return m.mkdirLocked(dir)
}

func (m *memFS) mkdirLocked(dir string) error {
	var chain []string
	for d := dir; d != "."; d, _ = backend.Split(d) {
		if _, ok := m.files[d]; ok {
			if d == dir {
				return &fs.PathError{Op: "mkdir", Path: dir, Err: fs.ErrExist}
			}
			return &fs.PathError{Op: "mkdir", Path: dir, Err: backend.ErrNotDir}
		}
		chain = append(chain, d)
	}
	for _, d := range chain {
		m.dirs[d] = true
	}
	return nil
}

func (m *memFS) OpenWrite(ctx context.Context, name string, opts backend.WriteOptions) (backend.FileWriter, error) {
	if err := backend.CheckPath("write", name); err != nil {
		return nil, err
	}
	if m.readOnly {
		return nil, &fs.PathError{Op: "write", Path: name, Err: backend.ErrReadOnly}
	}
	return &memWriter{m: m, name: name, pre: opts.Precondition}, nil
}

type memWriter struct {
	m    *memFS
	name string
	pre  backend.Precondition
	buf  bytes.Buffer
	done bool
}

func (w *memWriter) Write(p []byte) (int, error) { return w.buf.Write(p) }

func (w *memWriter) Commit() error {
	if w.m.beforeCommit != nil {
		w.m.beforeCommit()
	}
	m := w.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dirs[w.name] {
		return &fs.PathError{Op: "write", Path: w.name, Err: backend.ErrIsDir}
	}
	old, exists := m.files[w.name]
	if w.pre.CreateOnly && exists {
		return &fs.PathError{Op: "write", Path: w.name, Err: fs.ErrExist}
	}
	if w.pre.MatchHash != "" {
		sum := sha256.Sum256(old)
		if !exists || hex.EncodeToString(sum[:]) != w.pre.MatchHash {
			return &fs.PathError{Op: "write", Path: w.name, Err: backend.ErrPrecondition}
		}
	}
	if parent, _ := backend.Split(w.name); parent != "." {
		if err := m.mkdirLocked(parent); err != nil {
			return err
		}
	}
	m.files[w.name] = bytes.Clone(w.buf.Bytes())
	w.done = true
	return nil
}

func (w *memWriter) Close() error { return nil }

// put stores a file directly (test set-up), creating its parents.
func (m *memFS) put(name, data string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if parent, _ := backend.Split(name); parent != "." {
		if err := m.mkdirLocked(parent); err != nil {
			panic(err)
		}
	}
	m.files[name] = []byte(data)
}

// get returns a file's content directly.
func (m *memFS) get(name string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.files[name]
	return string(d), ok
}

// memRooted is memFS seen as a rooted namespace, as a mount table is.
type memRooted struct{ *memFS }

func (memRooted) ResolvePath(p, cwd string) (string, error) {
	if strings.HasPrefix(p, "/") {
		return backend.CleanVirtual(p, "/")
	}
	return backend.CleanVirtual(p, cwd)
}
