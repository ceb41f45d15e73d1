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
// Reads pass through. The wrapper is a Walker, SymlinkResolver,
// PathResolver or HostPathMapper only when b is, since callers choose
// their strategy or the meaning of paths by those. It is always a Stater
// and LocalPather, answering as the helpers of package backend would for
// b (Stat through listings, no local path) when b is not.
func ReadOnly(b backend.Backend) backend.Backend {
	r := &readOnly{b: b}
	w, hasW := b.(backend.Walker)
	l, hasL := b.(backend.SymlinkResolver)
	p, hasP := b.(backend.PathResolver)
	h, hasH := b.(backend.HostPathMapper)
	switch bit(hasW) | bit(hasL)<<1 | bit(hasP)<<2 | bit(hasH)<<3 {
	case 1:
		return roW{r, w}
	case 2:
		return roL{r, l}
	case 3:
		return roWL{r, w, l}
	case 4:
		return roP{r, p}
	case 5:
		return roWP{r, w, p}
	case 6:
		return roLP{r, l, p}
	case 7:
		return roWLP{r, w, l, p}
	case 8:
		return roH{r, h}
	case 9:
		return roWH{r, w, h}
	case 10:
		return roLH{r, l, h}
	case 11:
		return roWLH{r, w, l, h}
	case 12:
		return roPH{r, p, h}
	case 13:
		return roWPH{r, w, p, h}
	case 14:
		return roLPH{r, l, p, h}
	case 15:
		return roWLPH{r, w, l, p, h}
	}
	return r
}

// bit is 1 for true, to index the combinations of interfaces.
func bit(ok bool) int {
	if ok {
		return 1
	}
	return 0
}

// readOnly holds the methods every wrapper has. The variants below add
// the optional interfaces of the wrapped backend by embedding them; their
// names list them: W Walker, L SymlinkResolver, P PathResolver, H
// HostPathMapper.
type readOnly struct{ b backend.Backend }

type (
	roW struct {
		*readOnly
		backend.Walker
	}
	roL struct {
		*readOnly
		backend.SymlinkResolver
	}
	roWL struct {
		*readOnly
		backend.Walker
		backend.SymlinkResolver
	}
	roP struct {
		*readOnly
		backend.PathResolver
	}
	roWP struct {
		*readOnly
		backend.Walker
		backend.PathResolver
	}
	roLP struct {
		*readOnly
		backend.SymlinkResolver
		backend.PathResolver
	}
	roWLP struct {
		*readOnly
		backend.Walker
		backend.SymlinkResolver
		backend.PathResolver
	}
	roH struct {
		*readOnly
		backend.HostPathMapper
	}
	roWH struct {
		*readOnly
		backend.Walker
		backend.HostPathMapper
	}
	roLH struct {
		*readOnly
		backend.SymlinkResolver
		backend.HostPathMapper
	}
	roWLH struct {
		*readOnly
		backend.Walker
		backend.SymlinkResolver
		backend.HostPathMapper
	}
	roPH struct {
		*readOnly
		backend.PathResolver
		backend.HostPathMapper
	}
	roWPH struct {
		*readOnly
		backend.Walker
		backend.PathResolver
		backend.HostPathMapper
	}
	roLPH struct {
		*readOnly
		backend.SymlinkResolver
		backend.PathResolver
		backend.HostPathMapper
	}
	roWLPH struct {
		*readOnly
		backend.Walker
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

// ListTypes passes through, to List where the wrapped backend has no
// TypeLister.
func (r *readOnly) ListTypes(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	return backend.ListTypes(ctx, r.b, dir)
}

// Stat uses the wrapped backend's Stater or the listing fallback.
func (r *readOnly) Stat(ctx context.Context, name string) (backend.FileInfo, error) {
	return backend.Stat(ctx, r.b, name)
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
	_ backend.LocalPather        = (*readOnly)(nil)
	_ backend.Writer             = (*readOnly)(nil)
	_ backend.DirMaker           = (*readOnly)(nil)
	_ backend.CapabilityReporter = (*readOnly)(nil)
	_ backend.Walker             = roWLPH{}
	_ backend.SymlinkResolver    = roWLPH{}
	_ backend.PathResolver       = roWLPH{}
	_ backend.HostPathMapper     = roWLPH{}
)
