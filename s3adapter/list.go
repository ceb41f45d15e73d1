package s3adapter

import (
	"context"
	"io/fs"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/fencefs/fencefs/backend"
)

// List returns the direct children of dir with one delimited listing
// request per 1000 children, processing each page as it arrives. A
// directory marker or a key below a child makes it a directory, which
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
	err := f.listPages(ctx, prefix, "/", func(out *s3.ListObjectsV2Output) (string, error) {
		found = found || len(out.Contents) > 0 || len(out.CommonPrefixes) > 0
		for _, o := range out.Contents {
			name := strings.TrimPrefix(aws.ToString(o.Key), prefix)
			if name == "" || !f.representable(backend.Join(dir, name)) {
				continue // the directory's own marker, or a key we cannot name
			}
			files = append(files, fileEntry(name, o))
		}
		for _, cp := range out.CommonPrefixes {
			name := strings.TrimSuffix(strings.TrimPrefix(aws.ToString(cp.Prefix), prefix), "/")
			if name == "" || strings.Contains(name, "/") || !f.representable(backend.Join(dir, name)) {
				continue
			}
			dirs = append(dirs, dirEntry(name))
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

func fileEntry(name string, o types.Object) backend.DirEntry {
	return backend.DirEntry{Name: name, Size: aws.ToInt64(o.Size), ModTime: aws.ToTime(o.LastModified), Version: aws.ToString(o.ETag)}
}

func dirEntry(name string) backend.DirEntry {
	return backend.DirEntry{Name: name, Type: fs.ModeDir}
}

// listPages lists the keys below prefix (grouped by delimiter when it is
// not empty), 1000 per request, calling fn for each page in order. When
// fn returns a key, the listing goes on after that key instead of where
// the page ended, skipping what lies between.
func (f *FS) listPages(ctx context.Context, prefix, delimiter string, fn func(*s3.ListObjectsV2Output) (string, error)) error {
	in := &s3.ListObjectsV2Input{
		Bucket:  &f.bucket,
		Prefix:  aws.String(prefix),
		MaxKeys: aws.Int32(listPageSize),
	}
	if delimiter != "" {
		in.Delimiter = aws.String(delimiter)
	}
	for {
		out, err := f.client.ListObjectsV2(ctx, in)
		if err != nil {
			return err
		}
		after, err := fn(out)
		if err != nil {
			return err
		}
		if !aws.ToBool(out.IsTruncated) || aws.ToString(out.NextContinuationToken) == "" {
			return nil
		}
		in.ContinuationToken = out.NextContinuationToken
		if after != "" {
			in.ContinuationToken, in.StartAfter = nil, aws.String(after)
		}
	}
}

// skipPast follows a directory's key prefix to make a key that sorts
// after (nearly) every key below it: U+10FFFF is the greatest code
// point. Keys below it that sort even later are still skipped, one by
// one.
const skipPast = "\U0010FFFF"

// Walk calls fn for every entry below dir with one recursive listing: one
// request per 1000 keys, whatever the depth (a directory skipped with
// fs.SkipDir costs no further requests). Entries come in key order,
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
	err := f.listPages(ctx, prefix, "", func(out *s3.ListObjectsV2Output) (string, error) {
		found = found || len(out.Contents) > 0
		last := ""
		for _, o := range out.Contents {
			last = strings.TrimPrefix(aws.ToString(o.Key), prefix)
			if err := w.add(last, fileEntry("", o)); err != nil {
				return "", err
			}
		}
		// Still inside a skipped directory: jump past it rather than
		// page through its keys.
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
