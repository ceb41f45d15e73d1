package conformance_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fencefs/fencefs/backend"
)

// memBackend is a small in-memory reference backend. It keeps the suite
// honest on its own: every test must pass against it.
type memBackend struct {
	readOnly bool
	bug      string // a deliberate defect, for TestSuiteCatchesBugs

	mu        sync.Mutex
	files     map[string]*memFile
	dirs      map[string]time.Time
	leftovers []string // what the "temp-left" bug leaves in raw storage
}

type memFile struct {
	data  []byte // never modified in place, so readers keep a stable copy
	mode  fs.FileMode
	mtime time.Time
}

func newMem(readOnly bool, bug string) *memBackend {
	return &memBackend{
		readOnly: readOnly,
		bug:      bug,
		files:    map[string]*memFile{},
		dirs:     map[string]time.Time{".": time.Now()},
	}
}

func (m *memBackend) Capabilities() backend.Capabilities {
	return backend.Capabilities{
		Name: "mem", ReadOnly: m.readOnly, ModeBits: true, ModTimes: true, EmptyDirs: true,
		AtomicPreconditions: true, MaxNameBytes: 255,
	}
}

// check refuses non-canonical and over-long paths. With the "lax-paths"
// bug it cleans them instead, like a careless backend would.
func (m *memBackend) check(op string, name *string) error {
	if m.bug == "lax-paths" {
		*name = strings.TrimPrefix(path.Clean("/"+*name), "/")
		if *name == "" {
			*name = "."
		}
	}
	return check(op, *name)
}

func check(op, name string) error {
	if err := backend.CheckPath(op, name); err != nil {
		return err
	}
	for c := range strings.SplitSeq(name, "/") {
		if len(c) > 255 {
			return &fs.PathError{Op: op, Path: name, Err: backend.ErrNameTooLong}
		}
	}
	return nil
}

// missing explains why name is absent: a parent that is a file, or not
// there at all. The caller holds mu.
func (m *memBackend) missing(op, name string) error {
	for d := name; d != "."; {
		d, _ = backend.Split(d)
		if _, ok := m.files[d]; ok {
			return &fs.PathError{Op: op, Path: name, Err: backend.ErrNotDir}
		}
	}
	return &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
}

func (m *memBackend) OpenRead(ctx context.Context, name string) (io.ReadCloser, error) {
	if err := m.check("open", &name); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.dirs[name]; ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: backend.ErrIsDir}
	}
	f, ok := m.files[name]
	if !ok {
		return nil, m.missing("open", name)
	}
	return io.NopCloser(bytes.NewReader(f.data)), nil
}

func (m *memBackend) List(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	if err := m.check("list", &dir); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.files[dir]; ok {
		if m.bug == "list-file-notexist" {
			return nil, &fs.PathError{Op: "list", Path: dir, Err: fs.ErrNotExist}
		}
		return nil, &fs.PathError{Op: "list", Path: dir, Err: backend.ErrNotDir}
	}
	if _, ok := m.dirs[dir]; !ok {
		return nil, m.missing("list", dir)
	}
	entries := []backend.DirEntry{}
	for n, f := range m.files {
		if d, base := backend.Split(n); d == dir {
			entries = append(entries, backend.DirEntry{Name: base, Size: int64(len(f.data)), ModTime: f.mtime})
		}
	}
	for n, mt := range m.dirs {
		if d, base := backend.Split(n); n != "." && d == dir {
			entries = append(entries, backend.DirEntry{Name: base, Type: fs.ModeDir, Size: -1, ModTime: mt})
			if m.bug == "list-dup" {
				entries = append(entries, backend.DirEntry{Name: base, Type: fs.ModeDir, Size: -1, ModTime: mt})
			}
		}
	}
	return entries, nil
}

func (m *memBackend) Stat(ctx context.Context, name string) (backend.FileInfo, error) {
	if err := m.check("stat", &name); err != nil {
		return backend.FileInfo{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	_, base := backend.Split(name)
	if mt, ok := m.dirs[name]; ok {
		return backend.FileInfo{Name: base, Size: -1, Mode: fs.ModeDir | 0o755, ModTime: mt}, nil
	}
	if f, ok := m.files[name]; ok {
		return backend.FileInfo{Name: base, Size: int64(len(f.data)), Mode: f.mode, ModTime: f.mtime}, nil
	}
	return backend.FileInfo{}, m.missing("stat", name)
}

func (m *memBackend) MkdirAll(ctx context.Context, dir string) error {
	if err := m.check("mkdir", &dir); err != nil {
		return err
	}
	if m.readOnly {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: backend.ErrReadOnly}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mkdirAll(dir)
}

// mkdirAll creates dir and its parents. The caller holds mu.
func (m *memBackend) mkdirAll(dir string) error {
	if _, ok := m.files[dir]; ok {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: fs.ErrExist}
	}
	var todo []string
	for d := dir; d != "."; d, _ = backend.Split(d) {
		if _, ok := m.files[d]; ok {
			return &fs.PathError{Op: "mkdir", Path: dir, Err: backend.ErrNotDir}
		}
		todo = append(todo, d)
	}
	for _, d := range todo {
		if _, ok := m.dirs[d]; !ok {
			m.dirs[d] = time.Now()
		}
	}
	return nil
}

func (m *memBackend) OpenWrite(ctx context.Context, name string, opts backend.WriteOptions) (backend.FileWriter, error) {
	if err := m.check("write", &name); err != nil {
		return nil, err
	}
	if m.readOnly {
		return nil, &fs.PathError{Op: "write", Path: name, Err: backend.ErrReadOnly}
	}
	if name == "." {
		return nil, &fs.PathError{Op: "write", Path: name, Err: backend.ErrIsDir}
	}
	w := &memWriter{ctx: ctx, m: m, name: name, opts: opts}
	if m.bug == "hash-at-open" {
		m.mu.Lock()
		w.preErr = m.precondition(name, opts.Precondition)
		m.mu.Unlock()
	}
	return w, nil
}

type memWriter struct {
	ctx  context.Context
	m    *memBackend
	name string
	opts backend.WriteOptions
	buf  bytes.Buffer
	done bool

	preErr error // the precondition as checked at OpenWrite by the "hash-at-open" bug
}

func (w *memWriter) Write(p []byte) (int, error) {
	if w.m.bug == "write-through" {
		w.m.mu.Lock()
		defer w.m.mu.Unlock()
		f := w.m.files[w.name]
		if f == nil {
			f = &memFile{mode: 0o644}
		}
		w.m.files[w.name] = &memFile{data: append(bytes.Clone(f.data), p...), mode: f.mode, mtime: time.Now()}
	}
	return w.buf.Write(p)
}

func (w *memWriter) Close() error {
	if w.m.bug == "close-commits" && !w.done {
		return w.Commit()
	}
	w.done = true
	return nil
}

func (w *memWriter) Commit() error {
	if w.done {
		return &fs.PathError{Op: "commit", Path: w.name, Err: fs.ErrClosed}
	}
	w.done = true
	if err := w.ctx.Err(); err != nil && w.m.bug != "ignore-cancel" {
		return &fs.PathError{Op: "commit", Path: w.name, Err: err}
	}
	m := w.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.dirs[w.name]; ok {
		return &fs.PathError{Op: "commit", Path: w.name, Err: backend.ErrIsDir}
	}
	old, exists := m.files[w.name]
	err := m.precondition(w.name, w.opts.Precondition)
	if m.bug == "hash-at-open" {
		err = w.preErr
	}
	if err != nil {
		return err
	}
	dir, _ := backend.Split(w.name)
	if err := m.mkdirAll(dir); err != nil {
		return &fs.PathError{Op: "commit", Path: w.name, Err: backend.ErrNotDir}
	}
	f := &memFile{data: bytes.Clone(w.buf.Bytes()), mode: 0o644, mtime: time.Now()}
	if exists && m.bug != "mode-reset" {
		f.mode = old.mode
	}
	m.files[w.name] = f
	if m.bug == "temp-left" {
		m.leftovers = append(m.leftovers, w.name+".tmp")
	}
	return nil
}

// precondition checks pre against the current state of name. The caller
// holds mu.
func (m *memBackend) precondition(name string, pre backend.Precondition) error {
	old, exists := m.files[name]
	switch {
	case pre.CreateOnly && exists:
		return &fs.PathError{Op: "commit", Path: name, Err: fs.ErrExist}
	case pre.MatchVersion != "":
		// It keeps no versions, so no version can match.
		return &fs.PathError{Op: "commit", Path: name, Err: backend.ErrPrecondition}
	case m.bug == "ignore-hash":
	case pre.MatchHash != "" && (!exists || hashOf(old.data) != pre.MatchHash):
		return &fs.PathError{Op: "commit", Path: name, Err: backend.ErrPrecondition}
	}
	return nil
}

func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// memHarness makes memBackends and has every optional harness ability
// that makes sense for them.
type memHarness struct {
	readOnly bool
	bug      string
}

func (h memHarness) MakeBackend(ctx context.Context, t *testing.T) backend.Backend {
	return newMem(h.readOnly, h.bug)
}

func (memHarness) ListRaw(ctx context.Context, t *testing.T, b backend.Backend) []string {
	m := b.(*memBackend)
	m.mu.Lock()
	defer m.mu.Unlock()
	out := slices.Clone(m.leftovers)
	for n := range m.files {
		out = append(out, n)
	}
	return out
}

func (memHarness) Chmod(ctx context.Context, t *testing.T, b backend.Backend, name string, perm fs.FileMode) {
	m := b.(*memBackend)
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.files[name]
	if !ok {
		t.Fatalf("Chmod: no file %q", name)
	}
	m.files[name] = &memFile{data: f.data, mode: perm, mtime: f.mtime}
}

func (memHarness) Seed(ctx context.Context, t *testing.T, b backend.Backend, name string, data []byte) {
	m := b.(*memBackend)
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, _ := backend.Split(name)
	if err := m.mkdirAll(dir); err != nil {
		t.Fatalf("Seed(%q): %v", name, err)
	}
	m.files[name] = &memFile{data: bytes.Clone(data), mode: 0o644, mtime: time.Now()}
}

func (memHarness) SeedDir(ctx context.Context, t *testing.T, b backend.Backend, dir string) {
	m := b.(*memBackend)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.mkdirAll(dir); err != nil {
		t.Fatalf("SeedDir(%q): %v", dir, err)
	}
}
