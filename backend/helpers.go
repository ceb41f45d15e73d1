package backend

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"sort"
)

// Stat returns the metadata of name on b, using b's Stater when it has one
// (and does not decline) and otherwise the listing of the parent directory.
func Stat(ctx context.Context, b Backend, name string) (FileInfo, error) {
	if s, ok := b.(Stater); ok {
		if fi, err := s.Stat(ctx, name); !declined(err) {
			return fi, err
		}
	}
	return StatByList(ctx, b, name)
}

// StatByList returns the metadata of name from the listing of its parent
// directory: the fallback of [Stat], for a backend (or a wrapper) with no
// Stater of its own.
func StatByList(ctx context.Context, b Lister, name string) (FileInfo, error) {
	if err := CheckPath("stat", name); err != nil {
		return FileInfo{}, err
	}
	if name == "." {
		if _, err := b.List(ctx, "."); err != nil {
			return FileInfo{}, PathError("stat", name, err)
		}
		return FileInfo{Name: ".", Mode: fs.ModeDir, Size: -1}, nil
	}
	dir, base := Split(name)
	entries, err := b.List(ctx, dir)
	if err != nil {
		if errors.Is(err, ErrNotDir) {
			err = fs.ErrNotExist
		}
		return FileInfo{}, PathError("stat", name, err)
	}
	for _, e := range entries {
		if e.Name == base {
			return e.Info(), nil
		}
	}
	return FileInfo{}, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
}

// OpenWrite opens name on b for writing, or fails with ErrReadOnly when b
// cannot write. opts.BeforeCommit is left to b when b is a
// [CommitHooker]; for any other backend the returned writer's Commit
// calls it first.
func OpenWrite(ctx context.Context, b Backend, name string, opts WriteOptions) (FileWriter, error) {
	w, ok := b.(Writer)
	if !ok || CapabilitiesOf(b).ReadOnly {
		return nil, &fs.PathError{Op: "write", Path: name, Err: ErrReadOnly}
	}
	hook := opts.BeforeCommit
	if _, ok := b.(CommitHooker); ok || hook == nil {
		return w.OpenWrite(ctx, name, opts)
	}
	opts.BeforeCommit = nil
	fw, err := w.OpenWrite(ctx, name, opts)
	if err != nil {
		return nil, err
	}
	return &hookedWriter{FileWriter: fw, hook: hook}, nil
}

// hookedWriter calls WriteOptions.BeforeCommit at the start of Commit,
// for a backend that does not call it itself.
type hookedWriter struct {
	FileWriter
	hook func() error
}

// Commit calls the hook, then, unless it failed, commits.
func (h *hookedWriter) Commit() error {
	if err := h.hook(); err != nil {
		return err
	}
	return h.FileWriter.Commit()
}

// MkdirAll creates dir and its parents on b, or fails with ErrReadOnly
// when b cannot create directories.
func MkdirAll(ctx context.Context, b Backend, dir string) error {
	m, ok := b.(DirMaker)
	if !ok || CapabilitiesOf(b).ReadOnly {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: ErrReadOnly}
	}
	return m.MkdirAll(ctx, dir)
}

// ResolveSymlinks returns the canonical path name leads to on b (see
// [SymlinkResolver]); on a backend without links, name itself once it is
// known to be canonical. A decline counts as "no links" only from a
// backend whose Capabilities say it holds none, so storage that has links
// but refused an operation never resolves a path to itself unchecked.
func ResolveSymlinks(ctx context.Context, b Backend, name string) (string, error) {
	return TraceSymlinks(ctx, b, name, nil)
}

// TraceSymlinks resolves name on b as [ResolveSymlinks] does, calling
// visit with every path the resolution steps on (see
// [SymlinkResolver.TraceSymlinks]); an error from visit is returned as it
// is. On a backend without links nothing is visited.
func TraceSymlinks(ctx context.Context, b Backend, name string, visit func(path string) error) (string, error) {
	if r, ok := b.(SymlinkResolver); ok {
		resolved, err := r.TraceSymlinks(ctx, name, visit)
		if !declined(err) || CapabilitiesOf(b).Symlinks {
			return resolved, err
		}
	}
	if err := CheckPath("resolve", name); err != nil {
		return "", err
	}
	return name, nil
}

// Readlink returns the stored target of the symlink name on b (see
// [SymlinkResolver]), or an error wrapping ErrUnsupported on a backend
// without links.
func Readlink(ctx context.Context, b Backend, name string) (string, error) {
	if r, ok := b.(SymlinkResolver); ok {
		return r.Readlink(ctx, name)
	}
	return "", unsupported("readlink", name)
}

// LocalPath returns the host path of name on b when b is on local disk
// (see [LocalPather]).
func LocalPath(b Backend, name string) (string, bool) {
	if lp, ok := b.(LocalPather); ok {
		return lp.LocalPath(name)
	}
	return "", false
}

// MapHostPath maps the absolute host path p onto b's namespace (see
// [HostPathMapper]), or fails with an error wrapping ErrUnsupported when b
// accepts no host paths.
func MapHostPath(b Backend, p string) (string, error) {
	if h, ok := b.(HostPathMapper); ok {
		return h.MapHostPath(p)
	}
	return "", unsupported("maphostpath", p)
}

// ReadFile reads the whole file name from b.
func ReadFile(ctx context.Context, b Reader, name string) ([]byte, error) {
	r, err := b.OpenRead(ctx, name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, PathError("read", name, err)
	}
	return data, nil
}

// WriteFile writes data to name on b atomically, with opts.
func WriteFile(ctx context.Context, b Backend, name string, data []byte, opts WriteOptions) error {
	w, err := OpenWrite(ctx, b, name, opts)
	if err != nil {
		return err
	}
	defer w.Close()
	if _, err := io.Copy(w, bytes.NewReader(data)); err != nil {
		return PathError("write", name, err)
	}
	return w.Commit()
}

// Walk calls fn for every entry below dir on b. It uses b's Walker when b
// has one that does not decline (in the walker's order) and otherwise
// lists directory by directory (see [WalkByList]).
func Walk(ctx context.Context, b Backend, dir string, fn WalkFunc) error {
	if w, ok := b.(Walker); ok {
		if err := w.Walk(ctx, dir, fn); !declined(err) {
			return err
		}
	}
	return WalkByList(ctx, b, dir, fn)
}

// WalkByList calls fn for every entry below dir on b, listing directory
// by directory, depth first with each directory's entries sorted by name.
// Symlinks are reported, never followed. fs.SkipDir returned for a
// directory skips its contents. It never uses b's Walker, so an adapter's
// own Walk may fall back to it without recursing into itself.
func WalkByList(ctx context.Context, b Lister, dir string, fn WalkFunc) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := b.List(ctx, dir)
	if err != nil {
		return err
	}
	SortEntries(entries)
	for _, e := range entries {
		name := Join(dir, e.Name)
		if err := fn(name, e); err != nil {
			if err == fs.SkipDir && e.IsDir() {
				continue
			}
			return err
		}
		if e.IsDir() {
			if err := WalkByList(ctx, b, name, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// SortEntries sorts entries by name, bytewise.
func SortEntries(entries []DirEntry) {
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
}
