package backend

import "context"

// NoLinksReader is implemented by backends that can open a file for
// reading in one step that proves the path holds no symbolic link: local
// disk, whose every open refuses a link on any component (openat2's
// RESOLVE_NO_SYMLINKS, or a no-follow walk). A reader it returns reads
// the very file TraceSymlinks would resolve name to, which is name
// itself, so a caller that would resolve a path and then open it may
// open it first, and resolve only when this fails.
type NoLinksReader interface {
	// OpenReadNoLinks opens name as OpenRead does, but only when no
	// component of name is a symbolic link; otherwise, or when the
	// backend cannot tell (a mount of another kind), it fails. Its errors
	// say nothing to rely on: a caller that gets one resolves and opens
	// the path as it would have without this method.
	OpenReadNoLinks(ctx context.Context, name string) (FileReader, error)
	// NoLinksBackend returns the backend the promise is made for: the
	// receiver itself. A type that embeds a NoLinksReader inherits both
	// methods, and this one then names the embedded backend, not the
	// wrapper, so OpenReadNoLinks (the function) passes the wrapper by and
	// its own OpenRead is never bypassed; a wrapper that keeps the
	// embedded OpenRead may declare itself by returning itself.
	NoLinksBackend() Backend
}

// OpenReadNoLinks opens name on b when b can prove in one step that no
// component of name is a symbolic link (see NoLinksReader) and makes that
// promise for itself, not for a backend it embeds; ok is false, with
// nothing open, in every other case.
func OpenReadNoLinks(ctx context.Context, b Backend, name string) (r FileReader, ok bool) {
	nl, can := b.(NoLinksReader)
	if !can || nl.NoLinksBackend() != b {
		return nil, false
	}
	r, err := nl.OpenReadNoLinks(ctx, name)
	if err != nil {
		return nil, false
	}
	return r, true
}
