package azureadapter

import (
	"context"
	"io"
	"io/fs"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/objstore"
)

// Stat returns the metadata of name. A file's Version is its ETag. One
// listing of the blobs whose names start with name answers it: the blob,
// if there is one, and whether a blob lies below name, which makes it a
// directory (see the package documentation).
func (f *FS) Stat(ctx context.Context, name string) (backend.FileInfo, error) {
	if err := f.keys.Check("stat", name); err != nil {
		return backend.FileInfo{}, err
	}
	return objstore.Stat(ctx, name, f.settle)
}

// settleKeys is how many names the listing of settle asks for: the blob,
// then the names that sort between it and the directory below it
// ("f.txt.bak" between "f.txt" and "f.txt/"), which are rarely many.
const settleKeys = 100

// settle finds out what name is with one delimited listing of the blob
// names that start with its name, and only when the names between the
// blob and its directory fill that page, a second, one-blob listing below
// name (see [objstore.Keys.Settle]).
func (f *FS) settle(ctx context.Context, name string) (objstore.Kind, backend.FileInfo, error) {
	return f.keys.Settle(ctx, name, f.dirLister(f.keys.Key(name), settleKeys), f.hasChildren)
}

// objectInfo describes the listed blob of name.
func objectInfo(name string, o *container.BlobItem) backend.FileInfo {
	_, base := backend.Split(name)
	fi := backend.FileInfo{Name: base}
	if p := o.Properties; p != nil {
		fi.Size = deref(p.ContentLength)
		fi.ModTime = deref(p.LastModified)
		fi.Version = etagOf(p.ETag)
	}
	return fi
}

// OpenRead streams the blob name. A directory gives backend.ErrIsDir and
// a missing blob fs.ErrNotExist, each from the one listing of [FS.Stat],
// which also settles that no directory shadows the blob. The Get Blob
// that follows carries If-Match with the listed ETag, so it serves
// exactly the blob the listing judged; a replacement in between makes the
// read list again (the last time, the GET takes what is there). Under
// [backend.WithKnownFile] naming name with an ETag, the listing is
// skipped: the GET asks for that ETag, and only when the blob has changed
// since does the read list. The stream's Info is the GET's answer.
func (f *FS) OpenRead(ctx context.Context, name string) (backend.FileReader, error) {
	if err := f.keys.Check("open", name); err != nil {
		return nil, err
	}
	return objstore.OpenRead(ctx, name, f.settle, f.get)
}

// get sends the Get Blob of name, with If-Match on the listed ETag when
// there is one.
func (f *FS) get(ctx context.Context, name string, listed backend.FileInfo) (backend.FileReader, error) {
	etag := listed.Version
	out, err := f.client.NewBlobClient(f.keys.Key(name)).DownloadStream(ctx, &blob.DownloadStreamOptions{
		AccessConditions: ifMatch(etag),
	})
	if err != nil {
		return nil, pathError("open", name, err)
	}
	_, base := backend.Split(name)
	info := backend.FileInfo{
		Name:    base,
		Size:    deref(out.ContentLength),
		ModTime: deref(out.LastModified),
		Version: etagOf(out.ETag),
	}
	return &objectReader{body: out.Body, name: name, info: info}, nil
}

// ifMatch returns the access conditions of If-Match: etag (none for "").
func ifMatch(etag string) *blob.AccessConditions {
	if etag == "" {
		return nil
	}
	return &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: etagPtr(etag)}}
}

// objectReader is the body of a Get Blob, with read errors named by the
// storage path.
type objectReader struct {
	body io.ReadCloser
	name string
	info backend.FileInfo
}

// Info describes the blob the GET answered with.
func (r *objectReader) Info() backend.FileInfo { return r.info }

func (r *objectReader) Read(p []byte) (int, error) {
	n, err := r.body.Read(p)
	if err != nil && err != io.EOF {
		err = pathError("read", r.name, err)
	}
	return n, err
}

func (r *objectReader) Close() error { return r.body.Close() }

// hasChildren reports whether some blob lies below the directory name,
// its marker included, with a one-blob listing.
func (f *FS) hasChildren(ctx context.Context, name string) (bool, error) {
	page, err := f.flatLister(f.keys.DirPrefix(name), 1).NextPage(ctx)
	return len(page) > 0, err
}

// objectExists reports whether the blob name exists, with Get Blob
// Properties.
func (f *FS) objectExists(ctx context.Context, name string) (bool, error) {
	_, err := f.client.NewBlobClient(f.keys.Key(name)).GetProperties(ctx, nil)
	switch {
	case err == nil:
		return true, nil
	case isNotFound(err):
		return false, nil
	}
	return false, err
}

// notDirError explains why the directory name has nothing below it: it is
// a file (backend.ErrNotDir) or missing (fs.ErrNotExist).
func (f *FS) notDirError(ctx context.Context, op, name string) error {
	if name == "." {
		return nil
	}
	isFile, err := f.objectExists(ctx, name)
	switch {
	case err != nil:
		return pathError(op, name, err)
	case isFile:
		return &fs.PathError{Op: op, Path: name, Err: backend.ErrNotDir}
	}
	return &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
}
