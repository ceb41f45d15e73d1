package mounted

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/fencefs/fencefs/backend"
)

// errNotLink is the Readlink error for anything but a symlink.
var errNotLink = fmt.Errorf("%w: not a symlink", fs.ErrInvalid)

// OpenRead opens a file on its mount. The root and the mount roots are
// directories.
func (m *FS) OpenRead(ctx context.Context, name string) (backend.FileReader, error) {
	t, err := m.route("open", name)
	if err != nil {
		return nil, err
	}
	if t.isRoot() || t.isMountRoot() {
		return nil, &fs.PathError{Op: "open", Path: name, Err: backend.ErrIsDir}
	}
	r, err := t.child.OpenRead(backend.ForwardKnownFile(ctx, name, t.rest), t.rest)
	if err != nil {
		return nil, rewrite(t.mount, err)
	}
	return &reader{r: r, mount: t.mount}, nil
}

// List lists a directory on its mount; the root lists the mount names,
// sorted, as directories.
func (m *FS) List(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	t, err := m.route("list", dir)
	if err != nil {
		return nil, err
	}
	if t.isRoot() {
		entries := make([]backend.DirEntry, len(m.names))
		for i, name := range m.names {
			entries[i] = mountEntry(name)
		}
		return entries, nil
	}
	entries, err := t.child.List(ctx, t.rest)
	return entries, rewrite(t.mount, err)
}

// Stat returns the metadata of name. The root and the mount roots are
// directories; a child without a Stater is stat-ed through its listings.
func (m *FS) Stat(ctx context.Context, name string) (backend.FileInfo, error) {
	t, err := m.route("stat", name)
	switch {
	case err != nil:
		return backend.FileInfo{}, err
	case t.isRoot():
		return rootInfo(), nil
	case t.isMountRoot():
		return m.mountInfo(t.mount), nil
	}
	fi, err := backend.Stat(ctx, t.child, t.rest)
	return fi, rewrite(t.mount, err)
}

// OpenWrite starts a write on the mount. The root and the mount roots
// are directories; a read-only mount refuses with backend.ErrReadOnly.
func (m *FS) OpenWrite(ctx context.Context, name string, opts backend.WriteOptions) (backend.FileWriter, error) {
	t, err := m.route("write", name)
	if err != nil {
		return nil, err
	}
	if t.isRoot() || t.isMountRoot() {
		return nil, &fs.PathError{Op: "write", Path: name, Err: backend.ErrIsDir}
	}
	w, err := backend.OpenWrite(backend.ForwardKnownFile(ctx, name, t.rest), t.child, t.rest, opts)
	if err != nil {
		return nil, rewrite(t.mount, err)
	}
	return &writer{w: w, mount: t.mount}, nil
}

// MkdirAll creates a directory on its mount. The root and the mount
// roots exist already, so creating them succeeds without a write.
func (m *FS) MkdirAll(ctx context.Context, dir string) error {
	t, err := m.route("mkdir", dir)
	if err != nil {
		return err
	}
	if t.isRoot() || t.isMountRoot() {
		return nil
	}
	return rewrite(t.mount, backend.MkdirAll(ctx, t.child, t.rest))
}

// Walk walks dir on its mount, with the child's Walker when it has one.
// Walking the root reports each mount root, sorted, then walks it.
func (m *FS) Walk(ctx context.Context, dir string, fn backend.WalkFunc) error {
	t, err := m.route("walk", dir)
	if err != nil {
		return err
	}
	if !t.isRoot() {
		return m.walkMount(ctx, t.mount, t.child, t.rest, fn)
	}
	for _, name := range m.names {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(name, mountEntry(name)); err != nil {
			if err == fs.SkipDir {
				continue
			}
			return err
		}
		if err := m.walkMount(ctx, name, m.mounts[name], ".", fn); err != nil {
			return err
		}
	}
	return nil
}

// walkMount walks dir on the child mounted as mount. An error of fn
// itself is returned as fn returned it; the child's errors name the
// namespace's paths.
func (m *FS) walkMount(ctx context.Context, mount string, child backend.Backend, dir string, fn backend.WalkFunc) error {
	var fnErr error
	err := backend.Walk(ctx, child, dir, func(name string, e backend.DirEntry) error {
		err := fn(join(mount, name), e)
		if err != nil && err != fs.SkipDir {
			fnErr = err
		}
		return err
	})
	if err != nil && err == fnErr {
		return err
	}
	return rewrite(mount, err)
}

// ResolveSymlinks resolves name on its mount. A child without symlinks
// (or one that declines) resolves lexically, to name itself.
func (m *FS) ResolveSymlinks(ctx context.Context, name string) (string, error) {
	return m.TraceSymlinks(ctx, name, nil)
}

// TraceSymlinks resolves name on its mount as ResolveSymlinks does,
// passing visit each path the mount's resolution steps on, in the
// namespace's terms (see [backend.SymlinkResolver]). An error from visit
// is returned as it is.
func (m *FS) TraceSymlinks(ctx context.Context, name string, visit func(string) error) (string, error) {
	t, err := m.route("resolve", name)
	switch {
	case err != nil:
		return "", err
	case t.isRoot():
		return ".", nil
	case t.isMountRoot():
		return t.mount, nil
	}
	var visitErr error
	var inMount func(string) error
	if visit != nil {
		inMount = func(p string) error {
			visitErr = visit(join(t.mount, p))
			return visitErr
		}
	}
	resolved, err := backend.TraceSymlinks(ctx, t.child, t.rest, inMount)
	if err != nil {
		if visitErr != nil && err == visitErr {
			return "", err
		}
		return "", rewrite(t.mount, err)
	}
	return join(t.mount, resolved), nil
}

// Readlink returns the target of the symlink name as its mount reports
// it (relative to the link, or to the mount's root).
func (m *FS) Readlink(ctx context.Context, name string) (string, error) {
	t, err := m.route("readlink", name)
	switch {
	case err != nil:
		return "", err
	case t.isRoot() || t.isMountRoot():
		return "", &fs.PathError{Op: "readlink", Path: name, Err: errNotLink}
	}
	target, err := backend.Readlink(ctx, t.child, t.rest)
	if !errors.Is(err, backend.ErrUnsupported) {
		return target, rewrite(t.mount, err)
	}
	// A child without symlinks has none to read.
	if _, err := backend.Stat(ctx, t.child, t.rest); err != nil {
		return "", rewrite(t.mount, err)
	}
	return "", &fs.PathError{Op: "readlink", Path: name, Err: errNotLink}
}

// LocalPath returns the host path of name when its mount is on local
// disk. The root, which is on no disk, has none.
func (m *FS) LocalPath(name string) (string, bool) {
	t, err := m.route("localpath", name)
	if err != nil || t.isRoot() {
		return "", false
	}
	return backend.LocalPath(t.child, t.rest)
}

// reader rewrites the paths in a child's read errors; its Info is the
// child's.
type reader struct {
	r     backend.FileReader
	mount string
}

// Info describes what the child's stream serves.
func (r *reader) Info() backend.FileInfo { return r.r.Info() }

func (r *reader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		err = rewrite(r.mount, err)
	}
	return n, err
}

func (r *reader) Close() error { return rewrite(r.mount, r.r.Close()) }

// writer rewrites the paths in a child's write errors.
type writer struct {
	w     backend.FileWriter
	mount string
}

func (w *writer) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	return n, rewrite(w.mount, err)
}

func (w *writer) Commit() error { return rewrite(w.mount, w.w.Commit()) }
func (w *writer) Close() error  { return rewrite(w.mount, w.w.Close()) }

// ListTypes lists a directory's names and types on its mount, without a
// stat per entry where the child can (backend.TypeLister); the root
// lists the mount names.
func (m *FS) ListTypes(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	t, err := m.route("list", dir)
	if err != nil {
		return nil, err
	}
	if t.isRoot() {
		return m.List(ctx, dir)
	}
	entries, err := backend.ListTypes(ctx, t.child, t.rest)
	return entries, rewrite(t.mount, err)
}
