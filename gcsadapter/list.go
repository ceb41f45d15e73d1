package gcsadapter

import (
	"context"

	"cloud.google.com/go/storage"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/objstore"
)

// List returns the direct children of dir with one delimited listing
// request per 1000 children, processing each page as it arrives. A
// directory marker or a name below a child makes it a directory, which
// hides an object of the same name.
func (f *FS) List(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	return f.keys.ListDir(ctx, dir, func(prefix string) objstore.Lister { return f.lister(prefix, "/", listPageSize) }, f.notDirError)
}

// Walk calls fn for every entry below dir with one recursive listing: one
// request per 1000 names, whatever the depth (a directory skipped with
// fs.SkipDir costs no further requests: the listing goes on after it with
// StartOffset). Entries come in name order, except that a file is
// reported once the listing has shown it is not also a directory (see the
// package documentation); every directory is reported once, before its
// contents. fs.SkipDir from fn for a directory skips its contents,
// fs.SkipAll ends the walk without error, and any other error ends the
// walk and is returned.
func (f *FS) Walk(ctx context.Context, dir string, fn backend.WalkFunc) error {
	return f.keys.WalkDir(ctx, dir, fn, func(prefix string) objstore.Lister { return f.lister(prefix, "", listPageSize) }, f.notDirError)
}

// lister is the [objstore.Seeker] of the names below a prefix (grouped by
// a delimiter when it is not empty), pageSize per request.
type lister struct {
	f        *FS
	q        *storage.Query
	pageSize int
	token    string
	more     bool
}

func (f *FS) lister(prefix, delimiter string, pageSize int) *lister {
	return &lister{f: f, q: &storage.Query{Prefix: prefix, Delimiter: delimiter}, pageSize: pageSize, more: true}
}

// More reports whether another page remains.
func (l *lister) More() bool { return l.more }

// NextPage sends the next listing request.
func (l *lister) NextPage(ctx context.Context) ([]objstore.Object, error) {
	attrs, next, err := l.f.listPage(ctx, l.q, l.pageSize, l.token)
	if err != nil {
		return nil, mapError(err)
	}
	l.token, l.more = next, next != ""
	page := make([]objstore.Object, len(attrs))
	for i, a := range attrs {
		if a.Prefix != "" {
			page[i] = objstore.Object{Key: a.Prefix}
		} else {
			page[i] = objstore.Object{Key: a.Name, Entry: fileEntry(a)}
		}
	}
	return page, nil
}

// Seek makes the listing go on from key (StartOffset) instead of where
// the last page ended, skipping what lies between.
func (l *lister) Seek(key string) {
	l.q = &storage.Query{Prefix: l.q.Prefix, Delimiter: l.q.Delimiter, StartOffset: key}
	l.token = ""
}

// fileEntry describes a listed object; the walk and the listing name it.
func fileEntry(a *storage.ObjectAttrs) backend.DirEntry {
	return backend.DirEntry{Size: a.Size, ModTime: modTime(a), Version: version(a.Generation)}
}
