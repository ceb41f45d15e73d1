package objstore

import (
	"context"
	"errors"
	"io/fs"

	"github.com/fencefs/fencefs/backend"
)

// A GetFunc opens the object name for reading. When listed.Version is not
// empty, it serves only that version and fails with
// backend.ErrPrecondition or fs.ErrNotExist when the object is another or
// gone; listed is what a listing or the caller ([backend.KnownFile]) said
// of the object. Its errors are returned as they are.
type GetFunc func(ctx context.Context, name string, listed backend.FileInfo) (backend.FileReader, error)

// settleAttempts bounds how often a read lists again because the object
// was replaced between its listing and its GET.
const settleAttempts = 3

// Stat returns the metadata of the checked storage path name from one
// settle: a directory when keys lie below it, whatever object has its
// name, and otherwise the object, or fs.ErrNotExist.
func Stat(ctx context.Context, name string, settle SettleFunc) (backend.FileInfo, error) {
	if name == "." {
		return DirInfo(name), nil
	}
	kind, info, err := settle(ctx, name)
	switch {
	case err != nil:
		return backend.FileInfo{}, &fs.PathError{Op: "stat", Path: name, Err: err}
	case kind == Dir:
		return DirInfo(name), nil
	case kind == Missing:
		return backend.FileInfo{}, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
	}
	return info, nil
}

// OpenRead opens the checked storage path name for reading. A directory
// gives backend.ErrIsDir and a missing object fs.ErrNotExist, each from
// one settle, which also shows that no directory shadows the object. The
// GET that follows asks for the listed version, so it serves exactly the
// object the listing judged; a replacement in between makes the read
// settle again, and the last time the GET takes what is there. Under
// [backend.WithKnownFile] naming name with a version, the settle is
// skipped: the GET asks for that version, and only when the object has
// changed since does the read settle.
func OpenRead(ctx context.Context, name string, settle SettleFunc, get GetFunc) (backend.FileReader, error) {
	if name == "." {
		return nil, &fs.PathError{Op: "open", Path: name, Err: backend.ErrIsDir}
	}
	if known, ok := backend.KnownFile(ctx, name); ok && known.Version != "" {
		// The caller has just seen name as this object (a walk, a Stat
		// or a read settled that no directory shadows it): the GET alone
		// serves it, if it is still that version.
		r, err := get(ctx, name, known)
		if !replaced(err) {
			return r, err
		}
	}
	var last error
	for attempt := range settleAttempts {
		kind, info, err := settle(ctx, name)
		switch {
		case err != nil:
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		case kind == Dir:
			return nil, &fs.PathError{Op: "open", Path: name, Err: backend.ErrIsDir}
		case kind == Missing:
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		if attempt == settleAttempts-1 {
			// An object replaced faster than it can be listed and read
			// is still not shadowed: the last listing said so.
			info.Version = ""
		}
		r, err := get(ctx, name, info)
		if !replaced(err) {
			return r, err
		}
		last = err
	}
	return nil, last
}

// replaced reports whether a GET of a version failed because the object
// is another version now, or gone.
func replaced(err error) bool {
	return errors.Is(err, backend.ErrPrecondition) || errors.Is(err, fs.ErrNotExist)
}

// DirInfo describes the directory name.
func DirInfo(name string) backend.FileInfo {
	_, base := backend.Split(name)
	if name == "." {
		base = "."
	}
	return backend.FileInfo{Name: base, Mode: fs.ModeDir}
}
