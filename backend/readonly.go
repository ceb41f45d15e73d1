package backend

import (
	"context"
	"io/fs"
)

// ReadOnlyFS is a backend wrapped so that it refuses every change; see
// [ReadOnly]. It is one type whatever the wrapped backend implements:
// every behaviour interface is there, forwarding to the wrapped backend's
// or declining with ErrUnsupported where it has none.
type ReadOnlyFS struct{ b Backend }

// ReadOnly returns b wrapped so that it refuses every change: OpenWrite,
// MkdirAll, Remove, Rename and Copy fail with an *fs.PathError wrapping
// ErrReadOnly (which
// matches fs.ErrPermission), and Capabilities reports ReadOnly. Reads,
// listings, stats, walks, symlink resolution and host paths pass through.
// It works on any backend, a mount or not.
func ReadOnly(b Backend) *ReadOnlyFS { return &ReadOnlyFS{b: b} }

// OpenRead passes through.
func (r *ReadOnlyFS) OpenRead(ctx context.Context, name string) (FileReader, error) {
	return r.b.OpenRead(ctx, name)
}

// List passes through.
func (r *ReadOnlyFS) List(ctx context.Context, dir string) ([]DirEntry, error) {
	return r.b.List(ctx, dir)
}

// ListTypes passes through, to List where the wrapped backend has no
// TypeLister.
func (r *ReadOnlyFS) ListTypes(ctx context.Context, dir string) ([]DirEntry, error) {
	return ListTypes(ctx, r.b, dir)
}

// Stat uses the wrapped backend's Stater or the listing fallback.
func (r *ReadOnlyFS) Stat(ctx context.Context, name string) (FileInfo, error) {
	return Stat(ctx, r.b, name)
}

// Walk passes through to the wrapped backend's Walker, and declines
// without one so that callers choose their own listing strategy.
func (r *ReadOnlyFS) Walk(ctx context.Context, dir string, fn WalkFunc) error {
	if w, ok := r.b.(Walker); ok {
		return w.Walk(ctx, dir, fn)
	}
	if err := CheckPath("walk", dir); err != nil {
		return err
	}
	return unsupported("walk", dir)
}

// ResolveSymlinks passes through, and declines on a backend without links.
func (r *ReadOnlyFS) ResolveSymlinks(ctx context.Context, name string) (string, error) {
	if l, ok := r.b.(SymlinkResolver); ok {
		return l.ResolveSymlinks(ctx, name)
	}
	if err := CheckPath("resolve", name); err != nil {
		return "", err
	}
	return "", unsupported("resolve", name)
}

// TraceSymlinks passes through, and declines on a backend without links.
func (r *ReadOnlyFS) TraceSymlinks(ctx context.Context, name string, visit func(string) error) (string, error) {
	if l, ok := r.b.(SymlinkResolver); ok {
		return l.TraceSymlinks(ctx, name, visit)
	}
	if err := CheckPath("resolve", name); err != nil {
		return "", err
	}
	return "", unsupported("resolve", name)
}

// Readlink passes through, and declines on a backend without links.
func (r *ReadOnlyFS) Readlink(ctx context.Context, name string) (string, error) {
	if err := CheckPath("readlink", name); err != nil {
		return "", err
	}
	return Readlink(ctx, r.b, name)
}

// LocalPath passes through when the wrapped backend is on local disk.
func (r *ReadOnlyFS) LocalPath(name string) (string, bool) { return LocalPath(r.b, name) }

// MapHostPath passes through, and declines when the wrapped backend
// accepts no host paths.
func (r *ReadOnlyFS) MapHostPath(hostPath string) (string, error) {
	return MapHostPath(r.b, hostPath)
}

// OpenWrite refuses with ErrReadOnly.
func (r *ReadOnlyFS) OpenWrite(ctx context.Context, name string, opts WriteOptions) (FileWriter, error) {
	return nil, refuseChange("write", name)
}

// MkdirAll refuses with ErrReadOnly.
func (r *ReadOnlyFS) MkdirAll(ctx context.Context, dir string) error {
	return refuseChange("mkdir", dir)
}

// Remove refuses with ErrReadOnly.
func (r *ReadOnlyFS) Remove(ctx context.Context, name string, opts RemoveOptions) error {
	return refuseChange("remove", name)
}

// RemoveFiles refuses with ErrReadOnly.
func (r *ReadOnlyFS) RemoveFiles(ctx context.Context, names []string) error {
	if len(names) == 0 {
		return nil
	}
	return refuseChange("remove", names[0])
}

// Rename refuses with ErrReadOnly.
func (r *ReadOnlyFS) Rename(ctx context.Context, from, to string, opts RenameOptions) error {
	if err := CheckPath("rename", to); err != nil {
		return err
	}
	return refuseChange("rename", from)
}

// Copy refuses with ErrReadOnly.
func (r *ReadOnlyFS) Copy(ctx context.Context, from, to string, opts CopyOptions) error {
	if err := CheckPath("copy", from); err != nil {
		return err
	}
	return refuseChange("copy", to)
}

// refuseChange checks name and refuses the change op with ErrReadOnly.
func refuseChange(op, name string) error {
	if err := CheckPath(op, name); err != nil {
		return err
	}
	return &fs.PathError{Op: op, Path: name, Err: ErrReadOnly}
}

// Capabilities are the wrapped backend's, read-only.
func (r *ReadOnlyFS) Capabilities() Capabilities {
	c := Unrestricted("")
	c.ReadOnly = true
	return c.Mask(CapabilitiesOf(r.b))
}

// Interface checks.
var (
	_ Backend            = (*ReadOnlyFS)(nil)
	_ Stater             = (*ReadOnlyFS)(nil)
	_ Writer             = (*ReadOnlyFS)(nil)
	_ DirMaker           = (*ReadOnlyFS)(nil)
	_ SymlinkResolver    = (*ReadOnlyFS)(nil)
	_ Walker             = (*ReadOnlyFS)(nil)
	_ TypeLister         = (*ReadOnlyFS)(nil)
	_ LocalPather        = (*ReadOnlyFS)(nil)
	_ HostPathMapper     = (*ReadOnlyFS)(nil)
	_ CapabilityReporter = (*ReadOnlyFS)(nil)
	_ Remover            = (*ReadOnlyFS)(nil)
	_ BatchRemover       = (*ReadOnlyFS)(nil)
	_ Renamer            = (*ReadOnlyFS)(nil)
	_ Copier             = (*ReadOnlyFS)(nil)
)
