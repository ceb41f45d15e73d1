package local

import (
	"context"

	"github.com/fencefs/fencefs/backend"
)

// OpenReadNoLinks implements backend.NoLinksReader: every open of an FS
// refuses a symbolic link on any component of the path (openat2 with
// RESOLVE_NO_SYMLINKS, or the no-follow walk of the os.Root fallback),
// which is also what TraceSymlinks's one-open proof rests on, so
// OpenRead itself opens only paths without links.
func (f *FS) OpenReadNoLinks(ctx context.Context, name string) (backend.FileReader, error) {
	return f.OpenRead(ctx, name)
}

// NoLinksBackend implements backend.NoLinksReader: the promise is f's.
func (f *FS) NoLinksBackend() backend.Backend { return f }
