package objstore

import (
	"context"
	"errors"
	"io/fs"
	"strings"

	"github.com/fencefs/fencefs/backend"
)

// An Object is one key of a listing.
type Object struct {
	// Key is the full key, the prefix included. In a delimited listing
	// a common prefix is a Key ending in the delimiter "/".
	Key string
	// Entry is what the listing says of the object: its Size, ModTime
	// and Version. Its Name and Type are set from Key.
	Entry backend.DirEntry
}

// A Lister is one listing of the keys below a prefix, in ascending byte
// order, page by page: the shape of the SDKs' pagers. NextPage may return
// an empty page. Its errors are returned as they are, inside an
// *fs.PathError, so a Lister maps them to the backend sentinels.
type Lister interface {
	// More reports whether another page remains.
	More() bool
	// NextPage fetches the next page.
	NextPage(ctx context.Context) ([]Object, error)
}

// A Seeker is a Lister that can skip: after Seek, the next page starts
// after key, or at it. A walk seeks past a directory fn skipped instead of
// paging through its keys.
type Seeker interface {
	Lister
	Seek(key string)
}

// skipPast follows a directory's key prefix to make a key that sorts
// after (nearly) every key below it: U+10FFFF is the greatest code point.
// Keys below it that sort even later are still skipped, one by one.
const skipPast = "\U0010FFFF"

// errWalkFunc stops a walk because the WalkFunc returned an error, which
// the walker keeps in fnErr.
var errWalkFunc = errors.New("objstore: walk function returned an error")

// Walk calls fn for every entry below the directory dir, whose keys l
// lists flat (without a delimiter), and reports whether l listed any key.
// It follows the rules of the package documentation: keys that k cannot
// address are skipped, and a key that is also a prefix is a directory.
// Entries come in key order, except that a file is reported once the
// listing has shown it is not also a directory; every directory is
// reported once, before its contents. fs.SkipDir from fn for a directory
// skips its contents (without further pages when l is a [Seeker]),
// fs.SkipAll ends the walk without error, and any other error from fn
// ends the walk and is returned as it is. An error of l is returned as an
// *fs.PathError naming dir.
func (k Keys) Walk(ctx context.Context, l Lister, dir string, fn backend.WalkFunc) (found bool, err error) {
	prefix := k.DirPrefix(dir)
	w := &walker{root: dir, fn: fn, valid: k.Valid}
	err = w.run(ctx, l, prefix, &found)
	switch {
	case err == errWalkFunc && w.fnErr == fs.SkipAll:
		return found, nil
	case err == errWalkFunc:
		return found, w.fnErr
	case err != nil:
		return found, &fs.PathError{Op: "walk", Path: dir, Err: err}
	}
	return found, nil
}

// run feeds the walker the pages of l.
func (w *walker) run(ctx context.Context, l Lister, prefix string, found *bool) error {
	for l.More() {
		page, err := l.NextPage(ctx)
		if err != nil {
			return err
		}
		*found = *found || len(page) > 0
		last := ""
		for _, o := range page {
			last = strings.TrimPrefix(o.Key, prefix)
			if err := w.add(last, o.Entry); err != nil {
				return err
			}
		}
		// Still inside a skipped directory: jump past it rather than
		// page through its keys.
		if s, ok := l.(Seeker); ok && w.skip != "" && strings.HasPrefix(last, w.skip) && l.More() {
			s.Seek(prefix + w.skip + skipPast)
		}
	}
	return w.finish()
}

// walker turns the keys of a flat listing, in ascending byte order, into
// the entries of backend.Walker. It reports each directory once, when the
// first key below it arrives, which is before its contents because every
// key below "d/" sorts after "d/". A key "f" may turn out to be a
// directory too (a later key "f/..." makes it one, and the directory
// wins), so files wait in pending until a key past "f/" proves otherwise.
// Keys between "f" and "f/" start with "f" and a byte below '/', so the
// pending files form a chain of prefixes, never longer than a key.
type walker struct {
	// root is the storage path of the walked directory; keys are given
	// relative to it.
	root string
	fn   backend.WalkFunc
	// valid reports whether a storage path can be named by the backend;
	// keys through other paths are skipped.
	valid func(string) bool
	// dirs holds the reported directories on the path to the current
	// key, each the parent of the next (relative to root).
	dirs []string
	// pending holds the files not yet known not to be directories.
	pending []pendingFile
	// skip is the relative prefix ("d/") of a directory whose contents
	// fn asked to skip.
	skip string
	// fnErr is the error fn returned, when it stopped the walk.
	fnErr error
}

type pendingFile struct {
	rel   string
	entry backend.DirEntry
}

// add takes the next key, relative to the walk root, with its entry
// (whose Name add sets).
func (w *walker) add(rel string, e backend.DirEntry) error {
	if err := w.resolve(rel); err != nil {
		return err
	}
	if w.skip != "" && strings.HasPrefix(rel, w.skip) {
		return nil
	}
	marker := strings.HasSuffix(rel, "/")
	path := strings.TrimSuffix(rel, "/")
	if path == "" {
		return nil // the walk root's own marker
	}
	parent := path
	if !marker {
		parent, _ = splitRel(path)
	}
	ok, err := w.enterDirs(parent)
	if err != nil || !ok || marker {
		return err
	}
	if !w.valid(backend.Join(w.root, path)) {
		return nil
	}
	_, e.Name = splitRel(path)
	e.Type = 0
	w.pending = append(w.pending, pendingFile{rel: path, entry: e})
	return nil
}

// finish reports the files still pending once the listing has ended.
func (w *walker) finish() error {
	for _, p := range w.pending {
		if err := w.call(p.rel, p.entry); err != nil {
			return err
		}
	}
	w.pending = nil
	return nil
}

// resolve decides the pending files that the key rel settles: a key
// below "f/" makes f a directory (reported as one by enterDirs), a key
// past every key below "f/" makes it a file.
func (w *walker) resolve(rel string) error {
	kept := w.pending[:0]
	for i, p := range w.pending {
		below := p.rel + "/"
		switch {
		case strings.HasPrefix(rel, below):
		case rel > below:
			if err := w.call(p.rel, p.entry); err != nil {
				w.pending = append(kept, w.pending[i+1:]...)
				return err
			}
		default:
			kept = append(kept, p)
		}
	}
	w.pending = kept
	return nil
}

// enterDirs reports the directory dir and its ancestors that were not
// reported yet, top down. It returns false when the key must be skipped:
// a component cannot be named, or fn skipped one of the directories.
func (w *walker) enterDirs(dir string) (bool, error) {
	for len(w.dirs) > 0 {
		top := w.dirs[len(w.dirs)-1]
		if dir == top || strings.HasPrefix(dir, top+"/") {
			break
		}
		w.dirs = w.dirs[:len(w.dirs)-1]
	}
	for dir != "" {
		start := 0
		if len(w.dirs) > 0 {
			top := w.dirs[len(w.dirs)-1]
			if top == dir {
				break
			}
			start = len(top) + 1
		}
		end := strings.IndexByte(dir[start:], '/')
		if end < 0 {
			end = len(dir)
		} else {
			end += start
		}
		d := dir[:end]
		if !w.valid(backend.Join(w.root, d)) {
			return false, nil
		}
		_, name := splitRel(d)
		err := w.call(d, backend.DirEntry{Name: name, Type: fs.ModeDir})
		if err == errWalkFunc && w.fnErr == fs.SkipDir {
			w.fnErr = nil
			w.skip = d + "/"
			return false, nil
		}
		if err != nil {
			return false, err
		}
		w.dirs = append(w.dirs, d)
	}
	return true, nil
}

// call passes one entry to fn.
func (w *walker) call(rel string, e backend.DirEntry) error {
	if err := w.fn(backend.Join(w.root, rel), e); err != nil {
		w.fnErr = err
		return errWalkFunc
	}
	return nil
}

// splitRel splits a relative path at its last slash ("" for no parent).
func splitRel(p string) (dir, base string) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", p
	}
	return p[:i], p[i+1:]
}
