package objstore

import (
	"context"
	"io/fs"
	"sync"

	"github.com/fencefs/fencefs/backend"
)

// Kind is what a storage path turned out to be in a listing of the keys
// that start with its key.
type Kind uint8

// The kinds of a storage path.
const (
	// Missing is neither an object nor a prefix.
	Missing Kind = iota
	// File is an object with no key below it.
	File
	// Dir has a key below it (or a marker), whether or not an object of
	// its name exists too: the directory wins.
	Dir
)

// KindOf is the kind of a storage path with a key below it (hasBelow) or
// not, and an object of its name (isObject) or not: the directory wins.
func KindOf(hasBelow, isObject bool) Kind {
	switch {
	case hasBelow:
		return Dir
	case isObject:
		return File
	}
	return Missing
}

// A SettleFunc finds out what the storage path name is, with one listing
// of the keys that start with its key, and for a file what the listing
// says of it (its FileInfo, whose Version a [GetFunc] can ask for). Its
// errors are returned inside an *fs.PathError, so it maps them to the
// backend sentinels.
type SettleFunc func(ctx context.Context, name string) (Kind, backend.FileInfo, error)

// Settle finds out what the storage path name is, as a [SettleFunc]
// does, from first, a listing delimited by "/" of the keys that start
// with name's key, of which it reads one page: a directory when the common
// prefix (or marker) name+"/" is listed, whether or not the object name
// is listed too, and otherwise the object, or nothing. Only when the keys
// between the object and its directory ("f.txt.bak" between "f.txt" and
// "f.txt/") fill that page does it ask hasBelow whether keys lie below
// name. Errors of first and hasBelow are returned as they are.
func (k Keys) Settle(ctx context.Context, name string, first Lister, hasBelow HasBelowFunc) (Kind, backend.FileInfo, error) {
	key := k.Key(name)
	page, err := first.NextPage(ctx)
	if err != nil {
		return Missing, backend.FileInfo{}, err
	}
	var obj *Object
	for i := range page {
		switch page[i].Key {
		case key + "/":
			return Dir, backend.FileInfo{}, nil
		case key:
			obj = &page[i]
		}
	}
	if first.More() {
		below, err := hasBelow(ctx, name)
		if err != nil {
			return Missing, backend.FileInfo{}, err
		}
		if below {
			return Dir, backend.FileInfo{}, nil
		}
	}
	if obj == nil {
		return Missing, backend.FileInfo{}, nil
	}
	e := obj.Entry
	_, e.Name = backend.Split(name)
	e.Type = 0
	return File, e.Info(), nil
}

// A HasBelowFunc reports whether some key lies below the directory name,
// its marker included, with a one-key listing. Its errors are returned
// inside an *fs.PathError, so it maps them to the backend sentinels.
type HasBelowFunc func(ctx context.Context, name string) (bool, error)

// CheckWritable refuses, as an *fs.PathError with op "write", a write
// onto a directory (backend.ErrIsDir) or below a file (backend.ErrNotDir).
// The listings below name and below its parent are sent concurrently;
// only when the parent has nothing below it are its ancestors examined
// ([CheckAncestors]).
func CheckWritable(ctx context.Context, name string, hasBelow HasBelowFunc, settle SettleFunc) error {
	parent, _ := backend.Split(name)
	var (
		parentOK  = parent == "."
		parentErr error
		wg        sync.WaitGroup
	)
	if !parentOK {
		wg.Go(func() { parentOK, parentErr = hasBelow(ctx, parent) })
	}
	isDir, err := hasBelow(ctx, name)
	wg.Wait()
	switch {
	case err != nil:
		return &fs.PathError{Op: "write", Path: name, Err: err}
	case isDir:
		return &fs.PathError{Op: "write", Path: name, Err: backend.ErrIsDir}
	case parentErr != nil:
		return &fs.PathError{Op: "write", Path: name, Err: parentErr}
	case parentOK:
		return nil
	}
	return CheckAncestors(ctx, "write", name, parent, settle)
}

// CheckParent refuses, as an *fs.PathError with op "write", a write below
// a file (backend.ErrNotDir): one listing below the parent shows it is a
// directory; only when nothing lies below it are its ancestors examined
// ([CheckAncestors]).
func CheckParent(ctx context.Context, name string, hasBelow HasBelowFunc, settle SettleFunc) error {
	parent, _ := backend.Split(name)
	if parent == "." {
		return nil
	}
	ok, err := hasBelow(ctx, parent)
	switch {
	case err != nil:
		return &fs.PathError{Op: "write", Path: name, Err: err}
	case ok:
		return nil
	}
	return CheckAncestors(ctx, "write", name, parent, settle)
}

// CheckAncestors walks down to dir (itself included) and fails with
// backend.ErrNotDir, as an *fs.PathError naming name, at the first level
// that is a file, with one settle per level. It is what a write below dir
// checks when dir's own listing showed nothing below it.
func CheckAncestors(ctx context.Context, op, name, dir string, settle SettleFunc) error {
	for _, level := range Levels(dir) {
		kind, _, err := settle(ctx, level)
		switch {
		case err != nil:
			return &fs.PathError{Op: op, Path: name, Err: err}
		case kind == File:
			return &fs.PathError{Op: op, Path: name, Err: backend.ErrNotDir}
		}
	}
	return nil
}

// MissingDirs returns, top down, the levels of the directory dir (not
// ".") whose markers MkdirAll must write: none when dir is a directory,
// and otherwise the levels from the first missing one down. A file at dir
// is fs.ErrExist and a file above it backend.ErrNotDir, each as an
// *fs.PathError naming dir. It settles dir, then the levels from the top
// down to the first missing one, below which nothing exists.
func MissingDirs(ctx context.Context, dir string, settle SettleFunc) ([]string, error) {
	kind, _, err := settle(ctx, dir)
	switch {
	case err != nil:
		return nil, &fs.PathError{Op: "mkdir", Path: dir, Err: err}
	case kind == Dir:
		return nil, nil
	case kind == File:
		return nil, &fs.PathError{Op: "mkdir", Path: dir, Err: fs.ErrExist}
	}
	levels := Levels(dir)
	for i, level := range levels[:len(levels)-1] {
		kind, _, err := settle(ctx, level)
		switch {
		case err != nil:
			return nil, &fs.PathError{Op: "mkdir", Path: dir, Err: err}
		case kind == Dir:
			continue
		case kind == File:
			return nil, &fs.PathError{Op: "mkdir", Path: dir, Err: backend.ErrNotDir}
		}
		return levels[i:], nil
	}
	return levels[len(levels)-1:], nil
}

// Levels returns the storage path dir and its ancestors, top down ("a",
// "a/b", ...).
func Levels(dir string) []string {
	var out []string
	for i := 0; i <= len(dir); i++ {
		if i == len(dir) || dir[i] == '/' {
			out = append(out, dir[:i])
		}
	}
	return out
}

// KnownTarget reports whether a change of name under the precondition pre
// needs no check that name is not a directory: the caller has just seen
// it as the object of the version the change must still find
// (backend.WithKnownFile), and the store's condition on that version
// proves the object's parents are directories.
func KnownTarget(ctx context.Context, name string, pre backend.Precondition) bool {
	known, ok := backend.KnownFile(ctx, name)
	return ok && known.Version != "" && pre.MatchVersion == known.Version && pre.MatchHash == ""
}
