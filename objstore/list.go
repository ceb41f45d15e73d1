package objstore

import (
	"context"
	"io/fs"
	"strings"

	"github.com/fencefs/fencefs/backend"
)

// List returns the direct children of the directory dir from l, a
// listing of the keys below dir's prefix delimited by "/", and reports
// whether l listed anything. Its common prefixes, given as Objects whose
// Key ends in "/", are directories, which hide an object of the same name
// (see the package documentation); keys that k cannot address and dir's
// own marker are skipped. An error of l is returned as an *fs.PathError
// naming dir.
func (k Keys) List(ctx context.Context, l Lister, dir string) (entries []backend.DirEntry, found bool, err error) {
	prefix := k.DirPrefix(dir)
	var files, dirs []backend.DirEntry
	for l.More() {
		page, err := l.NextPage(ctx)
		if err != nil {
			return nil, found, &fs.PathError{Op: "list", Path: dir, Err: err}
		}
		found = found || len(page) > 0
		for _, o := range page {
			rel := strings.TrimPrefix(o.Key, prefix)
			name, isDir := strings.CutSuffix(rel, "/")
			if name == "" || strings.Contains(name, "/") || !k.Valid(backend.Join(dir, name)) {
				continue // the directory's own marker, or a key we cannot name
			}
			e := o.Entry
			e.Name = name
			if isDir {
				dirs = append(dirs, backend.DirEntry{Name: name, Type: fs.ModeDir})
			} else {
				e.Type = 0
				files = append(files, e)
			}
		}
	}
	return mergeEntries(files, dirs), found, nil
}

// mergeEntries joins the files and directories of one listing; a
// directory hides a file of the same name.
func mergeEntries(files, dirs []backend.DirEntry) []backend.DirEntry {
	if len(dirs) == 0 {
		return files
	}
	isDir := make(map[string]bool, len(dirs))
	for _, d := range dirs {
		isDir[d.Name] = true
	}
	out := dirs
	for _, e := range files {
		if !isDir[e.Name] {
			out = append(out, e)
		}
	}
	return out
}

// All returns every object l lists, page after page; an error of l is
// returned as it is.
func All(ctx context.Context, l Lister) ([]Object, error) {
	var all []Object
	for l.More() {
		page, err := l.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
	}
	return all, nil
}
