package s3adapter

import (
	"context"
	"io"
	"io/fs"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencefs/fencefs/backend"
)

// Stat returns the metadata of name. A file's Version is its ETag. It
// sends a HEAD for the object and a one-key listing below name
// concurrently, because a key that is also a prefix is a directory.
func (f *FS) Stat(ctx context.Context, name string) (backend.FileInfo, error) {
	if err := f.checkPath("stat", name); err != nil {
		return backend.FileInfo{}, err
	}
	if name == "." {
		return dirInfo(name), nil
	}
	var (
		isDir  bool
		dirErr error
		wg     sync.WaitGroup
	)
	wg.Go(func() { isDir, dirErr = f.hasChildren(ctx, name) })
	head, headErr := f.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &f.bucket, Key: aws.String(f.key(name))})
	wg.Wait()
	switch {
	case dirErr == nil && isDir:
		return dirInfo(name), nil
	case headErr == nil:
		_, base := backend.Split(name)
		return backend.FileInfo{
			Name:    base,
			Size:    aws.ToInt64(head.ContentLength),
			ModTime: aws.ToTime(head.LastModified),
			Version: aws.ToString(head.ETag),
		}, nil
	case dirErr != nil:
		return backend.FileInfo{}, pathError("stat", name, dirErr)
	}
	return backend.FileInfo{}, pathError("stat", name, headErr)
}

// dirInfo describes the directory name.
func dirInfo(name string) backend.FileInfo {
	_, base := backend.Split(name)
	if name == "." {
		base = "."
	}
	return backend.FileInfo{Name: base, Mode: fs.ModeDir}
}

// OpenRead streams the object name. A directory gives backend.ErrIsDir
// and a missing object fs.ErrNotExist. The GET and a one-key listing
// below name are sent concurrently (see Stat): a key that is also a prefix
// is a directory, so an object shadowed by a directory is never served.
// The stream's Info is the GET's answer (size, modification time, ETag).
func (f *FS) OpenRead(ctx context.Context, name string) (backend.FileReader, error) {
	if err := f.checkPath("open", name); err != nil {
		return nil, err
	}
	if name == "." {
		return nil, &fs.PathError{Op: "open", Path: name, Err: backend.ErrIsDir}
	}
	var (
		isDir  bool
		dirErr error
		wg     sync.WaitGroup
	)
	wg.Go(func() { isDir, dirErr = f.hasChildren(ctx, name) })
	out, getErr := f.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &f.bucket, Key: aws.String(f.key(name))}, quietChecksums)
	wg.Wait()
	switch {
	case dirErr == nil && isDir:
		if getErr == nil {
			out.Body.Close()
		}
		return nil, &fs.PathError{Op: "open", Path: name, Err: backend.ErrIsDir}
	case getErr == nil:
		_, base := backend.Split(name)
		info := backend.FileInfo{
			Name:    base,
			Size:    aws.ToInt64(out.ContentLength),
			ModTime: aws.ToTime(out.LastModified),
			Version: aws.ToString(out.ETag),
		}
		return &objectReader{body: out.Body, name: name, info: info}, nil
	case dirErr != nil && !isNotFound(getErr):
		return nil, pathError("open", name, getErr)
	case dirErr != nil:
		return nil, pathError("open", name, dirErr)
	}
	return nil, pathError("open", name, getErr)
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
