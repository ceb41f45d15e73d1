package s3adapter

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/objstore"
)

// MaxCopyPartSize is the largest part of a multipart copy, and so the
// largest object one CopyObject request copies (S3's limit); the default
// of Options.CopyPartSize.
const MaxCopyPartSize = 5 << 30

// deleteBatchSize is the most keys one DeleteObjects request takes.
const deleteBatchSize = 1000

// object is what a change found at a storage path.
type object struct {
	isDir bool
	etag  string
	size  int64
}

// lookup finds out what name is: a directory, an object, or nothing
// (fs.ErrNotExist), as Stat tells.
func (f *FS) lookup(ctx context.Context, op, name string) (object, error) {
	fi, err := f.Stat(ctx, name)
	if err != nil {
		return object{}, backend.PathError(op, name, err)
	}
	return object{isDir: fi.IsDir(), etag: fi.Version, size: fi.Size}, nil
}

// matchObject checks a MatchHash or MatchVersion precondition against the
// object o at name and returns the ETag a conditional request must still
// find, so that the check and the change form one compare-and-swap.
// MatchHash costs a download of the object.
func (f *FS) matchObject(ctx context.Context, op, name string, o object, pre backend.Precondition) (string, error) {
	switch {
	case o.isDir && (pre.MatchHash != "" || pre.MatchVersion != ""):
		return "", &fs.PathError{Op: op, Path: name, Err: backend.ErrIsDir}
	case pre.MatchVersion != "" && pre.MatchVersion != o.etag:
		return "", &fs.PathError{Op: op, Path: name, Err: backend.ErrPrecondition}
	case pre.MatchHash == "":
		return o.etag, nil
	}
	out, err := f.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &f.bucket, Key: aws.String(f.keys.Key(name)), IfMatch: optional(o.etag)}, quietChecksums)
	if err != nil {
		return "", pathError(op, name, err)
	}
	defer out.Body.Close()
	h := sha256.New()
	if _, err := io.Copy(h, out.Body); err != nil {
		return "", pathError(op, name, err)
	}
	if !strings.EqualFold(hex.EncodeToString(h.Sum(nil)), pre.MatchHash) {
		return "", &fs.PathError{Op: op, Path: name, Err: backend.ErrPrecondition}
	}
	return aws.ToString(out.ETag), nil
}

// Remove removes the object name, or the marker of the empty directory
// name. A MatchHash or MatchVersion precondition becomes a conditional
// DeleteObject (If-Match on the ETag checked), which servers that honour
// conditional deletes (AWS S3, versitygw) make atomic; a server that
// ignores the header deletes whatever is there by then. Under
// [backend.WithKnownFile] naming the MatchVersion, the DeleteObject is
// the only request.
func (f *FS) Remove(ctx context.Context, name string, opts backend.RemoveOptions) error {
	const op = "remove"
	if err := f.beginChange(op, name); err != nil {
		return err
	}
	if err := backend.CheckRemove(name, opts); err != nil {
		return err
	}
	var (
		o   object
		err error
	)
	if objstore.KnownTarget(ctx, name, opts.Precondition) {
		// The caller has just seen the object of the version the
		// DeleteObject below must still find (If-Match).
		o.etag = opts.Precondition.MatchVersion
	} else if o, err = f.lookup(ctx, op, name); err != nil {
		return err
	}
	etag, err := f.matchObject(ctx, op, name, o, opts.Precondition)
	if err != nil {
		return err
	}
	if o.isDir {
		return f.removeDir(ctx, name)
	}
	in := &s3.DeleteObjectInput{Bucket: &f.bucket, Key: aws.String(f.keys.Key(name))}
	if !opts.Precondition.IsZero() {
		in.IfMatch = aws.String(etag)
	}
	if _, err := f.client.DeleteObject(ctx, in); err != nil {
		return pathError(op, name, err)
	}
	return nil
}

// removeDir removes the marker of the directory name when nothing else
// lies below it, and fails with backend.ErrNotEmpty otherwise.
func (f *FS) removeDir(ctx context.Context, name string) error {
	marker := f.keys.DirPrefix(name)
	out, err := f.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{
		Bucket:  &f.bucket,
		Prefix:  aws.String(marker),
		MaxKeys: aws.Int32(2),
	})
	if err != nil {
		return pathError("remove", name, err)
	}
	for _, o := range out.Contents {
		if aws.ToString(o.Key) != marker {
			return &fs.PathError{Op: "remove", Path: name, Err: backend.ErrNotEmpty}
		}
	}
	if len(out.CommonPrefixes) > 0 {
		return &fs.PathError{Op: "remove", Path: name, Err: backend.ErrNotEmpty}
	}
	if _, err := f.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &f.bucket, Key: aws.String(marker)}); err != nil {
		return pathError("remove", name, err)
	}
	return nil
}

// RemoveFiles removes the objects names with DeleteObjects, 1000 keys per
// request. Missing keys are not an error (S3 reports them deleted).
func (f *FS) RemoveFiles(ctx context.Context, names []string) error {
	keys := make([]string, len(names))
	for i, name := range names {
		if err := f.beginChange("remove", name); err != nil {
			return err
		}
		keys[i] = f.keys.Key(name)
	}
	return f.deleteKeys(ctx, keys)
}

// deleteKeys deletes the object keys (directory markers included) with
// DeleteObjects, 1000 per request.
func (f *FS) deleteKeys(ctx context.Context, keys []string) error {
	for start := 0; start < len(keys); start += deleteBatchSize {
		batch := keys[start:min(start+deleteBatchSize, len(keys))]
		ids := make([]types.ObjectIdentifier, len(batch))
		for i, key := range batch {
			ids[i] = types.ObjectIdentifier{Key: aws.String(key)}
		}
		out, err := f.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: &f.bucket,
			Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)},
		})
		if err != nil {
			return pathError("remove", f.keys.Path(batch[0]), err)
		}
		if len(out.Errors) > 0 {
			e := out.Errors[0]
			return &fs.PathError{Op: "remove", Path: f.keys.Path(aws.ToString(e.Key)), Err: &apiError{
				sentinel: cmp(codeSentinel(aws.ToString(e.Code)), fs.ErrPermission), code: aws.ToString(e.Code),
				cause: errors.New(aws.ToString(e.Message)),
			}}
		}
	}
	return nil
}

// cmp returns a unless it is nil, and b then.
func cmp(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// Copy copies the object from to to on the server, without the bytes
// passing through the client. The source must still have the ETag that
// was checked (x-amz-copy-source-if-match). Without a target precondition
// this is one CopyObject (a multipart copy above Options.CopyPartSize). With
// one, it is a multipart copy whose completion carries If-None-Match or
// If-Match, the conditional commit writes use, because servers honour
// those on CompleteMultipartUpload where some ignore them on CopyObject.
func (f *FS) Copy(ctx context.Context, from, to string, opts backend.CopyOptions) error {
	_, err := f.copyObject(ctx, "copy", from, to, opts)
	return err
}

// copyObject is Copy; it returns what was copied.
func (f *FS) copyObject(ctx context.Context, op, from, to string, opts backend.CopyOptions) (object, error) {
	src, err := f.checkTransfer(ctx, op, from, to, opts)
	if err != nil {
		return object{}, err
	}
	if src.isDir {
		return src, &fs.PathError{Op: op, Path: from, Err: backend.ErrIsDir}
	}
	if err := f.copyChecked(ctx, op, from, to, src, opts.Precondition); err != nil {
		return src, err
	}
	return src, f.verifyCopy(ctx, op, to, src)
}

// checkTransfer checks the paths and the source of a copy or rename and
// returns the source, with the ETag its precondition was checked on.
func (f *FS) checkTransfer(ctx context.Context, op, from, to string, opts backend.RenameOptions) (object, error) {
	if err := f.beginChange(op, from); err != nil {
		return object{}, err
	}
	if err := f.keys.Check(op, to); err != nil {
		return object{}, err
	}
	if err := backend.CheckRename(op, from, to, opts); err != nil {
		return object{}, err
	}
	src, err := f.lookup(ctx, op, from)
	if err != nil {
		return object{}, err
	}
	if src.etag, err = f.matchObject(ctx, op, from, src, opts.Source); err != nil {
		return object{}, err
	}
	return src, nil
}

// copyChecked copies the object src at from to to under the target
// precondition pre.
func (f *FS) copyChecked(ctx context.Context, op, from, to string, src object, pre backend.Precondition) error {
	if err := objstore.CheckWritable(ctx, to, f.hasChildren, f.settle); err != nil {
		return backend.PathError(op, to, err)
	}
	ifMatch, ifNoneMatch, err := f.targetCondition(ctx, op, to, pre)
	if err != nil {
		return err
	}
	if pre.IsZero() && src.size <= f.opts.CopyPartSize {
		_, err := f.client.CopyObject(ctx, &s3.CopyObjectInput{
			Bucket:            &f.bucket,
			Key:               aws.String(f.keys.Key(to)),
			CopySource:        aws.String(f.copySource(from)),
			CopySourceIfMatch: optional(src.etag),
		})
		return f.copyError(op, from, to, err, pre, "")
	}
	return f.multipartCopy(ctx, op, from, to, src, ifMatch, ifNoneMatch, pre)
}

// targetCondition turns the target precondition into the headers of the
// conditional completion: If-None-Match: * for CreateOnly, If-Match with
// the ETag checked for MatchHash and MatchVersion.
func (f *FS) targetCondition(ctx context.Context, op, to string, pre backend.Precondition) (ifMatch string, ifNoneMatch *string, err error) {
	switch {
	case pre.CreateOnly:
		return "", aws.String("*"), nil
	case pre.MatchHash == "" && pre.MatchVersion == "":
		return "", nil, nil
	}
	o, err := f.lookup(ctx, op, to)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, &fs.PathError{Op: op, Path: to, Err: backend.ErrPrecondition}
	}
	if err != nil {
		return "", nil, err
	}
	etag, err := f.matchObject(ctx, op, to, o, pre)
	return etag, nil, err
}

// multipartCopy copies src in parts of Options.CopyPartSize and
// completes the upload under the target's condition; a failure aborts it.
func (f *FS) multipartCopy(ctx context.Context, op, from, to string, src object, ifMatch string, ifNoneMatch *string, pre backend.Precondition) error {
	key := aws.String(f.keys.Key(to))
	up, err := f.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &f.bucket, Key: key})
	if err != nil {
		return pathError(op, to, err)
	}
	completed := false
	defer func() {
		if !completed {
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.opts.AbortTimeout)
			defer cancel()
			_ = f.abortUpload(actx, f.keys.Key(to), aws.ToString(up.UploadId))
		}
	}()
	var parts []types.CompletedPart
	size := f.opts.CopyPartSize
	for n, off := int32(1), int64(0); off < src.size || n == 1; n, off = n+1, off+size {
		in := &s3.UploadPartCopyInput{
			Bucket:            &f.bucket,
			Key:               key,
			UploadId:          up.UploadId,
			PartNumber:        aws.Int32(n),
			CopySource:        aws.String(f.copySource(from)),
			CopySourceIfMatch: optional(src.etag),
		}
		if src.size > size {
			in.CopySourceRange = aws.String(fmt.Sprintf("bytes=%d-%d", off, min(off+size, src.size)-1))
		}
		out, err := f.client.UploadPartCopy(ctx, in)
		if err != nil {
			return f.copyError(op, from, to, err, backend.Precondition{}, "")
		}
		parts = append(parts, types.CompletedPart{ETag: out.CopyPartResult.ETag, PartNumber: aws.Int32(n)})
	}
	_, err = f.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
		Bucket:          &f.bucket,
		Key:             key,
		UploadId:        up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts},
		IfNoneMatch:     ifNoneMatch,
		IfMatch:         optional(ifMatch),
	})
	if err != nil {
		return conditionalWriteError(op, to, err, pre, ifMatch)
	}
	completed = true
	return nil
}

// copySource is the x-amz-copy-source of the storage path name: the
// bucket and the key, URL-encoded.
func (f *FS) copySource(name string) string {
	return f.bucket + "/" + url.PathEscape(f.keys.Key(name))
}

// copyError maps the failure of a copy request: a source that no longer
// has the ETag checked is a failed source precondition, named by from.
func (f *FS) copyError(op, from, to string, err error, pre backend.Precondition, ifMatch string) error {
	if err == nil {
		return nil
	}
	m := mapError(err)
	if errors.Is(m, backend.ErrPrecondition) || errors.Is(m, fs.ErrNotExist) {
		return &fs.PathError{Op: op, Path: from, Err: m}
	}
	return conditionalWriteError(op, to, err, pre, ifMatch)
}

// verifyCopy checks that the object at to is complete: it has the
// source's size.
func (f *FS) verifyCopy(ctx context.Context, op, to string, src object) error {
	head, err := f.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &f.bucket, Key: aws.String(f.keys.Key(to))})
	if err != nil {
		return pathError(op, to, err)
	}
	if n := aws.ToInt64(head.ContentLength); n != src.size {
		return &fs.PathError{Op: op, Path: to, Err: fmt.Errorf("s3adapter: the copy holds %d bytes, the source %d", n, src.size)}
	}
	return nil
}

// Rename moves from to to. S3 has no rename, so it is a server-side copy
// and then a removal, which observers can see half done
// (Capabilities.AtomicRename is false): the target appears before the
// source is gone. The source is removed only after the copy completed and
// was verified, with a DeleteObject conditional on the ETag that was
// copied, so a source changed meanwhile is kept; every failure leaves the
// source as it was. A directory is moved key by key (to a missing target
// only); when a copy fails, the copies made so far are removed again.
func (f *FS) Rename(ctx context.Context, from, to string, opts backend.RenameOptions) error {
	const op = "rename"
	src, err := f.checkTransfer(ctx, op, from, to, opts)
	if err != nil {
		return err
	}
	if from == to {
		if opts.Precondition.CreateOnly || src.isDir {
			return &fs.PathError{Op: op, Path: to, Err: fs.ErrExist}
		}
		_, _, err := f.targetCondition(ctx, op, to, opts.Precondition)
		return err
	}
	if src.isDir {
		return f.renameDir(ctx, from, to)
	}
	if err := f.copyChecked(ctx, op, from, to, src, opts.Precondition); err != nil {
		return err
	}
	if err := f.verifyCopy(ctx, op, to, src); err != nil {
		return err
	}
	_, err = f.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &f.bucket, Key: aws.String(f.keys.Key(from)), IfMatch: optional(src.etag)})
	if err != nil {
		return pathError(op, from, err)
	}
	return nil
}

// renameDir moves every key below the directory from to the missing
// directory to.
func (f *FS) renameDir(ctx context.Context, from, to string) error {
	const op = "rename"
	switch _, err := f.lookup(ctx, op, to); {
	case err == nil:
		return &fs.PathError{Op: op, Path: to, Err: fs.ErrExist}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if err := objstore.CheckWritable(ctx, to, f.hasChildren, f.settle); err != nil {
		return backend.PathError(op, to, err)
	}
	keys, err := objstore.All(ctx, f.lister(f.keys.DirPrefix(from), "", listPageSize))
	if err != nil {
		return &fs.PathError{Op: op, Path: from, Err: err}
	}
	var copied, sources []string
	for _, k := range keys {
		key := k.Key
		dst := f.keys.DirPrefix(to) + strings.TrimPrefix(key, f.keys.DirPrefix(from))
		src := object{etag: k.Entry.Version, size: k.Entry.Size}
		if err := f.copyKey(ctx, strings.TrimPrefix(key, f.keys.Prefix()), strings.TrimPrefix(dst, f.keys.Prefix()), src); err != nil {
			// The source is whole; take back the copies made so far.
			_ = f.deleteKeys(context.WithoutCancel(ctx), copied)
			return err
		}
		copied = append(copied, dst)
		sources = append(sources, key)
	}
	return f.deleteKeys(ctx, sources)
}

// copyKey copies one key of a directory being moved. A directory marker
// (a name ending in "/") is written anew rather than copied, since some
// servers (versitygw) keep markers as directories that cannot be copied.
func (f *FS) copyKey(ctx context.Context, from, to string, src object) error {
	if dir, ok := strings.CutSuffix(to, "/"); ok {
		return f.putMarkers(ctx, dir, []string{dir})
	}
	if src.size > f.opts.CopyPartSize {
		return f.multipartCopy(ctx, "rename", from, to, src, "", nil, backend.Precondition{})
	}
	_, err := f.client.CopyObject(ctx, &s3.CopyObjectInput{
		Bucket:            &f.bucket,
		Key:               aws.String(f.keys.Key(to)),
		CopySource:        aws.String(f.copySource(from)),
		CopySourceIfMatch: optional(src.etag),
	})
	return f.copyError("rename", from, to, err, backend.Precondition{}, "")
}

// beginChange checks what every change checks first.
func (f *FS) beginChange(op, name string) error {
	if err := f.keys.Check(op, name); err != nil {
		return err
	}
	if f.opts.ReadOnly {
		return &fs.PathError{Op: op, Path: name, Err: backend.ErrReadOnly}
	}
	return nil
}

// Compile-time checks of the changing operations.
var (
	_ backend.Remover      = (*FS)(nil)
	_ backend.BatchRemover = (*FS)(nil)
	_ backend.Renamer      = (*FS)(nil)
	_ backend.Copier       = (*FS)(nil)
)
