package tools

import (
	"context"

	"github.com/fencefs/fencefs/backend"
)

// knownFile tells the backend, for the operations on name under the
// returned context, that name was just seen as the regular file of this
// version (backend.WithKnownFile), so a backend that pays a request to
// learn what a name is (S3: whether a directory shadows the object) need
// not ask again. Without a version (local disk lists none) ctx is
// returned as it is, at no cost.
func knownFile(ctx context.Context, name string, size int64, version string) context.Context {
	if version == "" {
		return ctx
	}
	return backend.WithKnownFile(ctx, name, backend.FileInfo{Size: size, Version: version})
}

// commitContext is the context of a change's commit: the read it was
// built from, in the same call, saw the target as the version the
// commit's precondition names, or saw it missing in a directory, unless a
// listener was asked first, whose answer may come long after that read.
func (s *Set) commitContext(ctx context.Context, c *change) context.Context {
	switch {
	case s.changeListener(ctx) != nil:
		return ctx
	case c.old.seenMissing:
		// The read found nothing there and the parent a directory: a
		// create need not ask again (S3: two listings one level down).
		return backend.WithKnownMissing(ctx, c.t.resolved)
	case !c.old.exists:
		return ctx
	}
	return knownFile(ctx, c.t.resolved, -1, c.old.version)
}
