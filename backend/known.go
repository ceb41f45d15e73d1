package backend

import "context"

// knownKey is the context key of WithKnownFile.
type knownKey struct{}

// knownFile is what WithKnownFile (or WithKnownMissing, with missing
// set) attached.
type knownFile struct {
	name    string
	info    FileInfo
	missing bool
}

// WithKnownFile returns a context telling the backend that the caller has
// just seen the storage path name as the regular file info, in a listing,
// a Stat or a read of the same backend, so that an adapter whose own check
// of what a name is costs a request (S3 asks whether a directory shadows
// the object) may take it instead. Adapters may ignore it; one that uses it
// must still act only on name, and only on info.Version where that is set
// (a read serves that version or checks afresh, a write trusts it only
// under MatchVersion of that version). Only the latest name is kept. A
// caller attaches it only right after seeing the file, since a check
// skipped on old news is a check not made.
func WithKnownFile(ctx context.Context, name string, info FileInfo) context.Context {
	return context.WithValue(ctx, knownKey{}, knownFile{name: name, info: info})
}

// KnownFile returns what WithKnownFile told about name under ctx.
func KnownFile(ctx context.Context, name string) (FileInfo, bool) {
	k, ok := ctx.Value(knownKey{}).(knownFile)
	if !ok || k.name != name || k.missing || !k.info.IsRegular() {
		return FileInfo{}, false
	}
	return k.info, true
}

// WithKnownMissing returns a context telling the backend that the caller
// has just seen nothing at the storage path name, no file and nothing
// below it, and its parent directory as a directory, in a Stat or an
// OpenRead of the same backend, so that an adapter whose check that a
// create lands in a directory and not onto one costs requests (S3 lists
// the name and its parent) may take it instead. Adapters may ignore it;
// one that uses it must act only on name, and only for a write under
// Precondition.CreateOnly, which still refuses an object created since.
// It replaces what WithKnownFile attached, and the same rule holds: a
// caller attaches it only right after seeing the name missing.
func WithKnownMissing(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, knownKey{}, knownFile{name: name, missing: true})
}

// KnownMissing reports whether WithKnownMissing told that name was just
// seen missing, its parent a directory.
func KnownMissing(ctx context.Context, name string) bool {
	k, ok := ctx.Value(knownKey{}).(knownFile)
	return ok && k.missing && k.name == name
}

// ForwardKnownFile returns ctx with what WithKnownFile or WithKnownMissing
// told about name told about to instead, for a wrapper that serves name as its child's
// path to (a mount's path below the mount point).
// A claim about another name is dropped rather than passed on, since the
// child could hold that name under its own path.
func ForwardKnownFile(ctx context.Context, name, to string) context.Context {
	k, has := ctx.Value(knownKey{}).(knownFile)
	if !has {
		return ctx
	}
	if k.name != name || (!k.missing && !k.info.IsRegular()) {
		return context.WithValue(ctx, knownKey{}, knownFile{})
	}
	if name == to {
		return ctx
	}
	if k.missing {
		if to == "." {
			// A mount's root is a directory, never missing.
			return context.WithValue(ctx, knownKey{}, knownFile{})
		}
		return WithKnownMissing(ctx, to)
	}
	return WithKnownFile(ctx, to, k.info)
}
