package s3adapter

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/objstore"
)

// List returns the direct children of dir with one delimited listing
// request per 1000 children, processing each page as it arrives. A
// directory marker or a key below a child makes it a directory, which
// hides an object of the same name.
func (f *FS) List(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	return f.keys.ListDir(ctx, dir, func(prefix string) objstore.Lister { return f.lister(prefix, "/", listPageSize) }, f.notDirError)
}

// Walk calls fn for every entry below dir with one recursive listing: one
// request per 1000 keys, whatever the depth (a directory skipped with
// fs.SkipDir costs no further requests: the listing goes on after it with
// StartAfter). Entries come in key order, except that a file is reported
// once the listing has shown it is not also a directory (see the package
// documentation); every directory is reported once, before its contents.
// fs.SkipDir from fn for a directory skips its contents, fs.SkipAll ends
// the walk without error, and any other error ends the walk and is
// returned.
func (f *FS) Walk(ctx context.Context, dir string, fn backend.WalkFunc) error {
	return f.keys.WalkDir(ctx, dir, fn, func(prefix string) objstore.Lister { return f.lister(prefix, "", listPageSize) }, f.notDirError)
}

// lister is the [objstore.Seeker] of the keys below a prefix (grouped by
// a delimiter when it is not empty), pageSize per ListObjectsV2 request.
// Common prefixes come after a page's objects.
type lister struct {
	client *s3.Client
	in     s3.ListObjectsV2Input
	more   bool
}

func (f *FS) lister(prefix, delimiter string, pageSize int32) *lister {
	l := &lister{client: f.client, more: true, in: s3.ListObjectsV2Input{
		Bucket:  &f.bucket,
		Prefix:  aws.String(prefix),
		MaxKeys: aws.Int32(pageSize),
	}}
	if delimiter != "" {
		l.in.Delimiter = aws.String(delimiter)
	}
	return l
}

// More reports whether another page remains.
func (l *lister) More() bool { return l.more }

// NextPage sends the next listing request.
func (l *lister) NextPage(ctx context.Context) ([]objstore.Object, error) {
	out, err := l.client.ListObjectsV2(ctx, &l.in)
	if err != nil {
		return nil, mapError(err)
	}
	l.more = aws.ToBool(out.IsTruncated) && aws.ToString(out.NextContinuationToken) != ""
	l.in.ContinuationToken = out.NextContinuationToken
	page := make([]objstore.Object, 0, len(out.Contents)+len(out.CommonPrefixes))
	for _, o := range out.Contents {
		page = append(page, objstore.Object{Key: aws.ToString(o.Key), Entry: fileEntry(o)})
	}
	for _, cp := range out.CommonPrefixes {
		page = append(page, objstore.Object{Key: aws.ToString(cp.Prefix)})
	}
	return page, nil
}

// Seek makes the listing go on after key (StartAfter) instead of where
// the last page ended, skipping what lies between.
func (l *lister) Seek(key string) {
	l.in.ContinuationToken, l.in.StartAfter = nil, aws.String(key)
}

// fileEntry describes a listed object; the walk and the listing name it.
func fileEntry(o types.Object) backend.DirEntry {
	return backend.DirEntry{Size: aws.ToInt64(o.Size), ModTime: aws.ToTime(o.LastModified), Version: aws.ToString(o.ETag)}
}
