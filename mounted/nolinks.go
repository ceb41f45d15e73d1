package mounted

import (
	"context"
	"io/fs"

	"github.com/fencefs/fencefs/backend"
)

// OpenReadNoLinks implements backend.NoLinksReader: a file of a mount
// whose backend can open it proving that no component is a link. The
// mount's name itself is never a link.
func (m *FS) OpenReadNoLinks(ctx context.Context, name string) (backend.FileReader, error) {
	t, err := m.route("open", name)
	if err != nil {
		return nil, err
	}
	if t.isRoot() || t.isMountRoot() {
		return nil, &fs.PathError{Op: "open", Path: name, Err: backend.ErrIsDir}
	}
	r, ok := backend.OpenReadNoLinks(backend.ForwardKnownFile(ctx, name, t.rest), t.child, t.rest)
	if !ok {
		// The child cannot prove it, or the open failed: the caller
		// resolves and opens the path the other way, and hears why then.
		return nil, &fs.PathError{Op: "open", Path: name, Err: backend.ErrUnsupported}
	}
	return &reader{r: r, mount: t.mount}, nil
}

// NoLinksBackend implements backend.NoLinksReader: the promise is m's.
func (m *FS) NoLinksBackend() backend.Backend { return m }
