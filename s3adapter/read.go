package s3adapter

import (
	"context"
	"io"
	"io/fs"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencefs/fencefs/backend"
)

// Stat returns the metadata of name. A file's Version is its ETag. It
// sends a HEAD, whose answer settles what name is as OpenRead's GET does:
// an object is a file (even where keys below it also exist), and only a
// missing object costs a one-key listing below name, to tell a directory
// from nothing.
func (f *FS) Stat(ctx context.Context, name string) (backend.FileInfo, error) {
	if err := f.checkPath("stat", name); err != nil {
		return backend.FileInfo{}, err
	}
	if name == "." {
		return dirInfo(name), nil
	}
	head, err := f.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &f.bucket, Key: aws.String(f.key(name))})
	if err == nil {
		_, base := backend.Split(name)
		return backend.FileInfo{
			Name:    base,
			Size:    aws.ToInt64(head.ContentLength),
			ModTime: aws.ToTime(head.LastModified),
			Version: aws.ToString(head.ETag),
		}, nil
	}
	if !isNotFound(err) {
		return backend.FileInfo{}, pathError("stat", name, err)
	}
	isDir, dirErr := f.hasChildren(ctx, name)
	switch {
	case dirErr != nil:
		return backend.FileInfo{}, pathError("stat", name, dirErr)
	case isDir:
		return dirInfo(name), nil
	}
	return backend.FileInfo{}, pathError("stat", name, err)
}

// dirInfo describes the directory name.
func dirInfo(name string) backend.FileInfo {
	_, base := backend.Split(name)
	if name == "." {
		base = "."
	}
	return backend.FileInfo{Name: base, Mode: fs.ModeDir}
}

// OpenRead streams the object name with one GET, whose answer settles
// what name is: an object is a file, served with its size, modification
// time and ETag as Info; only a missing object costs a one-key listing
// below name, to tell a directory (backend.ErrIsDir) from nothing
// (fs.ErrNotExist).
func (f *FS) OpenRead(ctx context.Context, name string) (backend.FileReader, error) {
	if err := f.checkPath("open", name); err != nil {
		return nil, err
	}
	if name == "." {
		return nil, &fs.PathError{Op: "open", Path: name, Err: backend.ErrIsDir}
	}
	out, err := f.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &f.bucket, Key: aws.String(f.key(name))}, quietChecksums)
	if err == nil {
		_, base := backend.Split(name)
		info := backend.FileInfo{
			Name:    base,
			Size:    aws.ToInt64(out.ContentLength),
			ModTime: aws.ToTime(out.LastModified),
			Version: aws.ToString(out.ETag),
		}
		return &objectReader{body: out.Body, name: name, info: info}, nil
	}
	if !isNotFound(err) {
		return nil, pathError("open", name, err)
	}
	isDir, dirErr := f.hasChildren(ctx, name)
	switch {
	case dirErr != nil:
		return nil, pathError("open", name, dirErr)
	case isDir:
		return nil, &fs.PathError{Op: "open", Path: name, Err: backend.ErrIsDir}
	}
	return nil, pathError("open", name, err)
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
	out, err := f.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{
		Bucket:  &f.bucket,
		Prefix:  aws.String(f.dirPrefix(name)),
		MaxKeys: aws.Int32(1),
	})
	if err != nil {
		return false, err
	}
	return len(out.Contents) > 0 || len(out.CommonPrefixes) > 0, nil
}

// objectExists reports whether the object name exists, with a HEAD.
func (f *FS) objectExists(ctx context.Context, name string) (bool, error) {
	_, err := f.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &f.bucket, Key: aws.String(f.key(name))})
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
