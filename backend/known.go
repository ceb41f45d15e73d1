package backend

import "context"

// knownKey is the context key of WithKnownFile.
type knownKey struct{}

// knownFile is what WithKnownFile attached.
type knownFile struct {
	name string
	info FileInfo
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
	if !ok || k.name != name || !k.info.IsRegular() {
		return FileInfo{}, false
	}
	return k.info, true
}

// ForwardKnownFile returns ctx with what WithKnownFile told about name
// told about to instead, for a wrapper that serves name as its child's
// path to (a mount's path below the mount point).
// A claim about another name is dropped rather than passed on, since the
// child could hold that name under its own path.
func ForwardKnownFile(ctx context.Context, name, to string) context.Context {
	k, has := ctx.Value(knownKey{}).(knownFile)
	if !has {
		return ctx
	}
	if k.name != name || !k.info.IsRegular() {
		return context.WithValue(ctx, knownKey{}, knownFile{})
	}
	if name == to {
		return ctx
	}
	return WithKnownFile(ctx, to, k.info)
}
