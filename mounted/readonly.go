package mounted

import (
	"context"
	"io"
	"io/fs"

	"github.com/fencefs/fencefs/backend"
)

// ReadOnly returns b wrapped so that it refuses every write: OpenWrite
// and MkdirAll fail with an *fs.PathError wrapping backend.ErrReadOnly
// (which matches fs.ErrPermission), and Capabilities reports ReadOnly.
// It works on any backend, not only mounts.
//
// Reads pass through. The wrapper is a Stater, Walker and LocalPather
// whatever b is, using b's method when it has one and otherwise the
// fallback of package backend (Stat and Walk through listings, no local
// path), which is what a caller would get from b itself. It is a
// SymlinkResolver, PathResolver or HostPathMapper only when b is, since
// those change what paths mean.
func ReadOnly(b backend.Backend) backend.Backend {
	r := &readOnly{b: b}
	l, links := b.(backend.SymlinkResolver)
	p, rooted := b.(backend.PathResolver)
	h, host := b.(backend.HostPathMapper)
	switch {
	case links && rooted && host:
		return roLPH{r, l, p, h}
	case links && rooted:
		return roLP{r, l, p}
	case links && host:
		return roLH{r, l, h}
	case rooted && host:
		return roPH{r, p, h}
	case links:
		return roL{r, l}
	case rooted:
		return roP{r, p}
	case host:
		return roH{r, h}
	}
	return r
}

// readOnly holds the methods every wrapper has. The variants below add
// the optional interfaces of the wrapped backend by embedding them.
type readOnly struct{ b backend.Backend }

type (
	roL struct {
		*readOnly
		backend.SymlinkResolver
	}
	roP struct {
		*readOnly
		backend.PathResolver
	}
	roH struct {
		*readOnly
		backend.HostPathMapper
	}
	roLP struct {
		*readOnly
		backend.SymlinkResolver
		backend.PathResolver
	}
	roLH struct {
		*readOnly
		backend.SymlinkResolver
		backend.HostPathMapper
	}
	roPH struct {
		*readOnly
		backend.PathResolver
		backend.HostPathMapper
	}
	roLPH struct {
		*readOnly
		backend.SymlinkResolver
		backend.PathResolver
		backend.HostPathMapper
	}
)

// OpenRead passes through.
func (r *readOnly) OpenRead(ctx context.Context, name string) (io.ReadCloser, error) {
	return r.b.OpenRead(ctx, name)
}

// List passes through.
func (r *readOnly) List(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	return r.b.List(ctx, dir)
}

// Stat uses the wrapped backend's Stater or the listing fallback.
func (r *readOnly) Stat(ctx context.Context, name string) (backend.FileInfo, error) {
	return backend.Stat(ctx, r.b, name)
}

// Walk uses the wrapped backend's Walker or the listing fallback.
func (r *readOnly) Walk(ctx context.Context, dir string, fn backend.WalkFunc) error {
	return backend.Walk(ctx, r.b, dir, fn)
}

// LocalPath passes through when the wrapped backend is on local disk.
func (r *readOnly) LocalPath(name string) (string, bool) {
	if lp, ok := r.b.(backend.LocalPather); ok {
		return lp.LocalPath(name)
	}
	return "", false
}

// OpenWrite refuses with backend.ErrReadOnly.
func (r *readOnly) OpenWrite(ctx context.Context, name string, opts backend.WriteOptions) (backend.FileWriter, error) {
	if err := backend.CheckPath("write", name); err != nil {
		return nil, err
	}
	return nil, &fs.PathError{Op: "write", Path: name, Err: backend.ErrReadOnly}
}

// MkdirAll refuses with backend.ErrReadOnly.
func (r *readOnly) MkdirAll(ctx context.Context, dir string) error {
	if err := backend.CheckPath("mkdir", dir); err != nil {
		return err
	}
	return &fs.PathError{Op: "mkdir", Path: dir, Err: backend.ErrReadOnly}
}

// Capabilities are the wrapped backend's, read-only.
func (r *readOnly) Capabilities() backend.Capabilities {
	c := backend.CapabilitiesOf(r.b)
	c.ReadOnly = true
	return c
}

// Interface checks.
var (
	_ backend.Stater             = (*readOnly)(nil)
	_ backend.Walker             = (*readOnly)(nil)
	_ backend.LocalPather        = (*readOnly)(nil)
	_ backend.Writer             = (*readOnly)(nil)
	_ backend.DirMaker           = (*readOnly)(nil)
	_ backend.CapabilityReporter = (*readOnly)(nil)
	_ backend.SymlinkResolver    = roLPH{}
	_ backend.PathResolver       = roLPH{}
	_ backend.HostPathMapper     = roLPH{}
)
