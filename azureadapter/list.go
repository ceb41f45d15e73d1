package azureadapter

import (
	"context"
	"io/fs"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/fencefs/fencefs/backend"
)

// List returns the direct children of dir with one delimited listing
// request per 5,000 children, processing each page as it arrives. A
// directory marker or a blob below a child makes it a directory, which
// hides a blob of the same name.
func (f *FS) List(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	if err := f.checkPath("list", dir); err != nil {
		return nil, err
	}
	prefix := f.dirPrefix(dir)
	var (
		files, dirs []backend.DirEntry
		found       bool
	)
	pager := f.client.NewListBlobsHierarchyPager("/", &container.ListBlobsHierarchyOptions{
		Prefix:     to.Ptr(prefix),
		MaxResults: to.Ptr(f.opts.ListPageSize),
	})
	for pager.More() {
		out, err := pager.NextPage(ctx)
		if err != nil {
			return nil, pathError("list", dir, err)
		}
		if out.Segment == nil {
			continue
		}
		found = found || len(out.Segment.BlobItems) > 0 || len(out.Segment.BlobPrefixes) > 0
		for _, b := range out.Segment.BlobItems {
			name := strings.TrimPrefix(deref(b.Name), prefix)
			if name == "" || !f.representable(backend.Join(dir, name)) {
				continue // the directory's own marker, or a name we cannot address
			}
			files = append(files, fileEntry(name, b))
		}
		for _, p := range out.Segment.BlobPrefixes {
			name := strings.TrimSuffix(strings.TrimPrefix(deref(p.Name), prefix), "/")
			if name == "" || strings.Contains(name, "/") || !f.representable(backend.Join(dir, name)) {
				continue
			}
			dirs = append(dirs, backend.DirEntry{Name: name, Type: fs.ModeDir})
		}
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

func fileEntry(name string, b *container.BlobItem) backend.DirEntry {
	fi := objectInfo(name, b)
	return backend.DirEntry{Name: name, Size: fi.Size, ModTime: fi.ModTime, Version: fi.Version}
}

// Walk calls fn for every entry below dir with one flat listing: one
// request per 5,000 blobs, whatever the depth. Entries come in name
// order, except that a file is reported once the listing has shown it is
// not also a directory (see the package documentation); every directory
// is reported once, before its contents. fs.SkipDir from fn for a
// directory skips its contents (the listing pages on through them: the
// service's listings resume only where a page ended), fs.SkipAll ends the
// walk without error, and any other error ends the walk and is returned.
func (f *FS) Walk(ctx context.Context, dir string, fn backend.WalkFunc) error {
	if err := f.checkPath("walk", dir); err != nil {
		return err
	}
	prefix := f.dirPrefix(dir)
	w := &walker{root: dir, fn: fn, valid: f.representable}
	found := false
	err := f.listFlat(ctx, prefix, func(items []*container.BlobItem) error {
		found = found || len(items) > 0
		for _, b := range items {
			if err := w.add(strings.TrimPrefix(deref(b.Name), prefix), fileEntry("", b)); err != nil {
				return err
			}
		}
		return nil
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

// listFlat lists every blob below prefix, 5,000 per request, calling fn
// for each page in order.
func (f *FS) listFlat(ctx context.Context, prefix string, fn func([]*container.BlobItem) error) error {
	pager := f.client.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{
		Prefix:     to.Ptr(prefix),
		MaxResults: to.Ptr(f.opts.ListPageSize),
	})
	for pager.More() {
		out, err := pager.NextPage(ctx)
		if err != nil {
			return err
		}
		if out.Segment == nil {
			continue
		}
		if err := fn(out.Segment.BlobItems); err != nil {
			return err
		}
	}
	return nil
}
