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
	nl, ok := t.child.(backend.NoLinksReader)
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: backend.ErrUnsupported}
	}
	r, err := nl.OpenReadNoLinks(backend.ForwardKnownFile(ctx, name, t.rest), t.rest)
	if err != nil {
		return nil, rewrite(t.mount, err)
	}
	return &reader{r: r, mount: t.mount}, nil
}
