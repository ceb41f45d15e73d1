package azureadapter

import (
	"context"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/objstore"
)

// List returns the direct children of dir with one delimited listing
// request per 5,000 children, processing each page as it arrives. A
// directory marker or a blob below a child makes it a directory, which
// hides a blob of the same name.
func (f *FS) List(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	return f.keys.ListDir(ctx, dir, func(prefix string) objstore.Lister { return f.dirLister(prefix, f.opts.ListPageSize) }, f.notDirError)
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
	return f.keys.WalkDir(ctx, dir, fn, func(prefix string) objstore.Lister { return f.flatLister(prefix, f.opts.ListPageSize) }, f.notDirError)
}

// lister is the [objstore.Lister] over one of the SDK's blob pagers.
type lister[T any] struct {
	pager *runtime.Pager[T]
	// objects returns the blobs and blob prefixes of a page.
	objects func(T) []objstore.Object
}

// More reports whether another page remains.
func (l lister[T]) More() bool { return l.pager.More() }

// NextPage sends the next listing request.
func (l lister[T]) NextPage(ctx context.Context) ([]objstore.Object, error) {
	out, err := l.pager.NextPage(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	return l.objects(out), nil
}

// flatLister lists every blob below prefix, pageSize per request.
func (f *FS) flatLister(prefix string, pageSize int32) lister[container.ListBlobsFlatResponse] {
	p := f.client.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{
		Prefix:     to.Ptr(prefix),
		MaxResults: to.Ptr(pageSize),
	})
	return lister[container.ListBlobsFlatResponse]{p, func(out container.ListBlobsFlatResponse) []objstore.Object {
		if out.Segment == nil {
			return nil
		}
		return blobObjects(out.Segment.BlobItems, nil)
	}}
}

// dirLister lists the blobs below prefix grouped by "/", pageSize per
// request: the blobs directly below it, then the blob prefixes of its
// subdirectories.
func (f *FS) dirLister(prefix string, pageSize int32) lister[container.ListBlobsHierarchyResponse] {
	p := f.client.NewListBlobsHierarchyPager("/", &container.ListBlobsHierarchyOptions{
		Prefix:     to.Ptr(prefix),
		MaxResults: to.Ptr(pageSize),
	})
	return lister[container.ListBlobsHierarchyResponse]{p, func(out container.ListBlobsHierarchyResponse) []objstore.Object {
		if out.Segment == nil {
			return nil
		}
		return blobObjects(out.Segment.BlobItems, out.Segment.BlobPrefixes)
	}}
}

// blobObjects turns a page of blobs and blob prefixes into objects.
func blobObjects(items []*container.BlobItem, prefixes []*container.BlobPrefix) []objstore.Object {
	page := make([]objstore.Object, 0, len(items)+len(prefixes))
	for _, b := range items {
		fi := objectInfo("", b)
		page = append(page, objstore.Object{Key: deref(b.Name), Entry: backend.DirEntry{Size: fi.Size, ModTime: fi.ModTime, Version: fi.Version}})
	}
	for _, p := range prefixes {
		page = append(page, objstore.Object{Key: deref(p.Name)})
	}
	return page
}
