package s3adapter

import (
	"context"
	"io"
	"io/fs"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/objstore"
)

// Stat returns the metadata of name. A file's Version is its ETag. One
// listing of the keys that start with name answers it: the object, if
// there is one, and whether a key lies below name, which makes it a
// directory (see the package documentation).
func (f *FS) Stat(ctx context.Context, name string) (backend.FileInfo, error) {
	if err := f.keys.Check("stat", name); err != nil {
		return backend.FileInfo{}, err
	}
	return objstore.Stat(ctx, name, f.settle)
}

// settleKeys is how many keys the listing of settle asks for: the
// object, then the names that sort between it and the directory below it
// ("f.txt.bak" between "f.txt" and "f.txt/"), which are rarely many.
const settleKeys = 100

// settle finds out what name is with one delimited listing of the keys
// that start with its key, and only when the names between the object and
// its directory fill that page, a second, one-key listing below name (see
// [objstore.Keys.Settle]).
func (f *FS) settle(ctx context.Context, name string) (objstore.Kind, backend.FileInfo, error) {
	return f.keys.Settle(ctx, name, f.lister(f.keys.Key(name), "/", settleKeys), f.hasChildren)
}

// OpenRead streams the object name. A directory gives backend.ErrIsDir
// and a missing object fs.ErrNotExist, each from the one listing of
// [FS.Stat], which also settles that no directory shadows the object.
// The GET that follows carries If-Match with the listed ETag, so it
// serves exactly the object the listing judged; a replacement in between
// makes the read list again (the last time, the GET takes what is
// there). Under [backend.WithKnownFile] naming name with an ETag, the
// listing is skipped: the GET asks for that ETag, and only when the object
// has changed since does the read list. The stream's Info is the GET's
// answer (size, modification time, ETag).
func (f *FS) OpenRead(ctx context.Context, name string) (backend.FileReader, error) {
	if err := f.keys.Check("open", name); err != nil {
		return nil, err
	}
	return objstore.OpenRead(ctx, name, f.settle, f.get)
}

// get sends the GET of name, with If-Match on the listed ETag when there
// is one.
func (f *FS) get(ctx context.Context, name string, listed backend.FileInfo) (backend.FileReader, error) {
	etag := listed.Version
	out, err := f.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &f.bucket, Key: aws.String(f.keys.Key(name)), IfMatch: optional(etag)}, quietChecksums)
	if err != nil {
		return nil, pathError("open", name, err)
	}
	_, base := backend.Split(name)
	info := backend.FileInfo{
		Name:    base,
		Size:    aws.ToInt64(out.ContentLength),
		ModTime: aws.ToTime(out.LastModified),
		Version: aws.ToString(out.ETag),
	}
	return &objectReader{body: out.Body, name: name, info: info}, nil
}

// quietChecksums silences the SDK's warning, on every read of a
// multipart object, that its composite checksum cannot be validated.
func quietChecksums(o *s3.Options) { o.DisableLogOutputChecksumValidationSkipped = true }

// objectReader is the body of a GET, with read errors named by the
// storage path.
type objectReader struct {
	body io.ReadCloser
	name string
	info backend.FileInfo
}

// Info describes the object the GET answered with.
func (r *objectReader) Info() backend.FileInfo { return r.info }

func (r *objectReader) Read(p []byte) (int, error) {
	n, err := r.body.Read(p)
	if err != nil && err != io.EOF {
		err = pathError("read", r.name, err)
	}
	return n, err
}

func (r *objectReader) Close() error { return r.body.Close() }

// hasChildren reports whether some key lies below the directory name,
// its marker included, with a one-key listing.
func (f *FS) hasChildren(ctx context.Context, name string) (bool, error) {
	page, err := f.lister(f.keys.DirPrefix(name), "", 1).NextPage(ctx)
	return len(page) > 0, err
}

// objectExists reports whether the object name exists, with a HEAD.
func (f *FS) objectExists(ctx context.Context, name string) (bool, error) {
	_, err := f.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &f.bucket, Key: aws.String(f.keys.Key(name))})
	switch {
	case err == nil:
		return true, nil
	case isNotFound(err):
		return false, nil
	}
	return false, err
}

// notDirError explains why the directory name has nothing below it: it
// is a file (backend.ErrNotDir) or missing (fs.ErrNotExist).
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
