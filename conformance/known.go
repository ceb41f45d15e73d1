package conformance

import (
	"context"

	"github.com/fencefs/fencefs/backend"
)

// staleKnown returns the test's context claiming that the storage path
// name was just seen as a regular file of version (an invented one when
// empty), a claim that no longer holds: a backend that takes the word of
// backend.WithKnownFile must still serve what is there, or refuse a
// directory or a missing file as it would without the claim.
func (e *env) staleKnown(name, version string) context.Context {
	if version == "" {
		version = `"stale-version"`
	}
	_, base := backend.Split(name)
	return backend.WithKnownFile(e.ctx, name, backend.FileInfo{Name: base, Size: -1, Version: version})
}
