package gcsadapter

import (
	"context"
	"io/fs"
	"strings"

	"cloud.google.com/go/storage"

	"github.com/fencefs/fencefs/backend"
)

// List returns the direct children of dir with one delimited listing
// request per 1000 children, processing each page as it arrives. A
// directory marker or a name below a child makes it a directory, which
// hides an object of the same name.
func (f *FS) List(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	if err := f.checkPath("list", dir); err != nil {
		return nil, err
	}
	prefix := f.dirPrefix(dir)
	var (
		files, dirs []backend.DirEntry
		found       bool
	)
	err := f.listPages(ctx, prefix, "/", func(page []*storage.ObjectAttrs) (string, error) {
		found = found || len(page) > 0
		for _, a := range page {
			if a.Prefix != "" {
				name := strings.TrimSuffix(strings.TrimPrefix(a.Prefix, prefix), "/")
				if name == "" || strings.Contains(name, "/") || !f.representable(backend.Join(dir, name)) {
					continue
				}
				dirs = append(dirs, dirEntry(name))
				continue
			}
			name := strings.TrimPrefix(a.Name, prefix)
			if name == "" || !f.representable(backend.Join(dir, name)) {
				continue // the directory's own marker, or a name we cannot address
			}
			files = append(files, fileEntry(name, a))
		}
		return "", nil
	})
	if err != nil {
		return nil, pathError("list", dir, err)
	}
	if !found && dir != "." {
		return nil, f.notDirError(ctx, "list", dir)
	}
	return mergeEntries(files, dirs), nil
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

func fileEntry(name string, a *storage.ObjectAttrs) backend.DirEntry {
	return backend.DirEntry{Name: name, Size: a.Size, ModTime: modTime(a), Version: version(a.Generation)}
}

func dirEntry(name string) backend.DirEntry {
	return backend.DirEntry{Name: name, Type: fs.ModeDir}
}

// listPages lists the names below prefix (grouped by delimiter when it is
// not empty), 1000 per request, calling fn for each page in order. When
// fn returns a name, the listing goes on from that name (StartOffset)
// instead of where the page ended, skipping what lies between.
func (f *FS) listPages(ctx context.Context, prefix, delimiter string, fn func([]*storage.ObjectAttrs) (string, error)) error {
	q := &storage.Query{Prefix: prefix, Delimiter: delimiter}
	token := ""
	for {
		page, next, err := f.listPage(ctx, q, listPageSize, token)
		if err != nil {
			return err
		}
		from, err := fn(page)
		if err != nil {
			return err
		}
		if next == "" {
			return nil
		}
		token = next
		if from != "" {
			q = &storage.Query{Prefix: prefix, Delimiter: delimiter, StartOffset: from}
			token = ""
		}
	}
}

// skipPast follows a directory's name prefix to make a name that sorts
// after (nearly) every name below it: U+10FFFF is the greatest code
// point. Names below it that sort even later are still skipped, one by
// one.
const skipPast = "\U0010FFFF"

// Walk calls fn for every entry below dir with one recursive listing: one
// request per 1000 names, whatever the depth (a directory skipped with
// fs.SkipDir costs no further requests). Entries come in name order,
// except that a file is reported once the listing has shown it is not
// also a directory (see the package documentation); every directory is
// reported once, before its contents. fs.SkipDir from fn for a directory
// skips its contents, fs.SkipAll ends the walk without error, and any
// other error ends the walk and is returned.
func (f *FS) Walk(ctx context.Context, dir string, fn backend.WalkFunc) error {
	if err := f.checkPath("walk", dir); err != nil {
		return err
	}
	prefix := f.dirPrefix(dir)
	w := &walker{root: dir, fn: fn, valid: f.representable}
	found := false
	err := f.listPages(ctx, prefix, "", func(page []*storage.ObjectAttrs) (string, error) {
		found = found || len(page) > 0
		last := ""
		for _, a := range page {
			last = strings.TrimPrefix(a.Name, prefix)
			if err := w.add(last, fileEntry("", a)); err != nil {
				return "", err
			}
		}
		// Still inside a skipped directory: jump past it rather than
		// page through its names.
		if w.skip != "" && strings.HasPrefix(last, w.skip) {
			return prefix + w.skip + skipPast, nil
		}
		return "", nil
	})
	if err == nil {
		err = w.finish()
	}
	switch {
	case err == errWalkFunc && w.fnErr == fs.SkipAll:
		return nil
	case err == errWalkFunc:
		return w.fnErr
	case err != nil:
		return pathError("walk", dir, err)
	case !found && dir != ".":
		return f.notDirError(ctx, "walk", dir)
	}
	return nil
}
