package azureadapter

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"time"

	azto "github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/objstore"
)

// deleteWorkers is how many Delete Blob requests RemoveFiles and a
// directory's move keep in flight.
const deleteWorkers = 16

// object is what a change found at a storage path.
type object struct {
	isDir bool
	etag  string
	size  int64
}

// lookup finds out what name is: a directory, a blob, or nothing
// (fs.ErrNotExist), as Stat tells.
func (f *FS) lookup(ctx context.Context, op, name string) (object, error) {
	fi, err := f.Stat(ctx, name)
	if err != nil {
		return object{}, backend.PathError(op, name, err)
	}
	return object{isDir: fi.IsDir(), etag: fi.Version, size: fi.Size}, nil
}

// matchObject checks a MatchHash or MatchVersion precondition against the
// blob o at name and returns the ETag a conditional request must still
// find, so that the check and the change form one compare-and-swap.
// MatchHash costs a download of the blob.
func (f *FS) matchObject(ctx context.Context, op, name string, o object, pre backend.Precondition) (string, error) {
	switch {
	case o.isDir && (pre.MatchHash != "" || pre.MatchVersion != ""):
		return "", &fs.PathError{Op: op, Path: name, Err: backend.ErrIsDir}
	case pre.MatchVersion != "" && pre.MatchVersion != o.etag:
		return "", &fs.PathError{Op: op, Path: name, Err: backend.ErrPrecondition}
	case pre.MatchHash == "":
		return o.etag, nil
	}
	return f.hashBlob(ctx, op, name, o.etag, pre.MatchHash)
}

// Remove removes the blob name, or the marker of the empty directory
// name. A MatchHash or MatchVersion precondition becomes a conditional
// Delete Blob (If-Match on the ETag checked), which the service makes
// atomic. Under [backend.WithKnownFile] naming the MatchVersion, the
// Delete Blob is the only request.
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
	var cond *blob.AccessConditions
	if !opts.Precondition.IsZero() {
		cond = ifMatch(etag)
	}
	_, err = f.client.NewBlobClient(f.keys.Key(name)).Delete(ctx, &blob.DeleteOptions{AccessConditions: cond})
	if err != nil {
		return pathError(op, name, err)
	}
	return nil
}

// removeDir removes the marker of the directory name when nothing else
// lies below it, and fails with backend.ErrNotEmpty otherwise.
func (f *FS) removeDir(ctx context.Context, name string) error {
	marker := f.keys.DirPrefix(name)
	out, err := f.client.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{
		Prefix:     azto.Ptr(marker),
		MaxResults: azto.Ptr(int32(2)),
	}).NextPage(ctx)
	if err != nil {
		return pathError("remove", name, err)
	}
	if out.Segment != nil {
		for _, b := range out.Segment.BlobItems {
			if deref(b.Name) != marker {
				return &fs.PathError{Op: "remove", Path: name, Err: backend.ErrNotEmpty}
			}
		}
	}
	_, err = f.client.NewBlobClient(marker).Delete(ctx, nil)
	if err != nil && !isNotFound(err) {
		return pathError("remove", name, err)
	}
	return nil
}

// RemoveFiles removes the blobs names, with a few Delete Blob requests in
// flight. Missing blobs are not an error.
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

// deleteKeys deletes the blobs keys (directory markers included), with
// deleteWorkers requests in flight; the first failure is returned.
func (f *FS) deleteKeys(ctx context.Context, keys []string) error {
	work := make(chan string)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range min(deleteWorkers, len(keys)) {
		wg.Go(func() {
			for key := range work {
				_, err := f.client.NewBlobClient(key).Delete(ctx, nil)
				if err != nil && !isNotFound(err) {
					mu.Lock()
					if first == nil {
						first = pathError("remove", f.keys.Path(key), err)
					}
					mu.Unlock()
				}
			}
		})
	}
	for _, k := range keys {
		work <- k
	}
	close(work)
	wg.Wait()
	return first
}

// Copy copies the blob from to to on the server (Copy Blob), without the
// bytes passing through the client. The source must still have the ETag
// that was checked (x-ms-source-if-match), and the target precondition is
// the copy's own If-None-Match: * or If-Match, which the service checks
// atomically with the copy. A copy the service runs in the background (a
// large blob) is waited for, up to Options.CopyTimeout.
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

// copyChecked copies the blob src at from to to under the target
// precondition pre.
func (f *FS) copyChecked(ctx context.Context, op, from, to string, src object, pre backend.Precondition) error {
	if err := objstore.CheckWritable(ctx, to, f.hasChildren, f.settle); err != nil {
		return backend.PathError(op, to, err)
	}
	match, err := f.targetCondition(ctx, op, to, pre)
	if err != nil {
		return err
	}
	return f.copyBlob(ctx, op, from, to, src.etag, pre, match)
}

// targetCondition returns the ETag the target must still have for
// MatchHash and MatchVersion, checked now.
func (f *FS) targetCondition(ctx context.Context, op, to string, pre backend.Precondition) (string, error) {
	if pre.CreateOnly || (pre.MatchHash == "" && pre.MatchVersion == "") {
		return "", nil
	}
	o, err := f.lookup(ctx, op, to)
	if errors.Is(err, fs.ErrNotExist) {
		return "", &fs.PathError{Op: op, Path: to, Err: backend.ErrPrecondition}
	}
	if err != nil {
		return "", err
	}
	return f.matchObject(ctx, op, to, o, pre)
}

// copyBlob sends Copy Blob from the blob from (which must still have
// srcETag) to to, under the target's condition, and waits until the copy
// is done.
func (f *FS) copyBlob(ctx context.Context, op, from, to, srcETag string, pre backend.Precondition, match string) error {
	dst := f.client.NewBlobClient(f.keys.Key(to))
	opts := &blob.StartCopyFromURLOptions{AccessConditions: writeConditions(pre, match)}
	if srcETag != "" {
		opts.SourceModifiedAccessConditions = &blob.SourceModifiedAccessConditions{SourceIfMatch: etagPtr(srcETag)}
	}
	out, err := dst.StartCopyFromURL(ctx, f.client.NewBlobClient(f.keys.Key(from)).URL(), opts)
	if err != nil {
		return f.copyError(op, from, to, err, pre, match)
	}
	status := copyStatus(out.CopyStatus)
	if status == blob.CopyStatusTypeSuccess || status == "" {
		return nil
	}
	return f.waitCopy(ctx, op, to, dst, deref(out.CopyID), status)
}

// copyStatus returns the copy status, "" for none.
func copyStatus(s *blob.CopyStatusType) blob.CopyStatusType {
	if s == nil {
		return ""
	}
	return *s
}

// waitCopy polls the target of a pending copy until it is done, for at
// most Options.CopyTimeout; a copy still pending then (or when ctx ends)
// is aborted, which leaves the target empty, not half written.
func (f *FS) waitCopy(ctx context.Context, op, to string, dst *blob.Client, id string, status blob.CopyStatusType) error {
	wctx, cancel := context.WithTimeout(ctx, f.opts.CopyTimeout)
	defer cancel()
	delay := 50 * time.Millisecond
	for status == blob.CopyStatusTypePending {
		t := time.NewTimer(delay)
		select {
		case <-wctx.Done():
			t.Stop()
			actx, acancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			_, _ = dst.AbortCopyFromURL(actx, id, nil)
			acancel()
			return &fs.PathError{Op: op, Path: to, Err: wctx.Err()}
		case <-t.C:
		}
		delay = min(2*delay, 2*time.Second)
		props, err := dst.GetProperties(wctx, nil)
		if err != nil {
			return pathError(op, to, err)
		}
		if deref(props.CopyID) != id {
			return &fs.PathError{Op: op, Path: to, Err: errors.New("azureadapter: another copy replaced the target while this one ran")}
		}
		status = copyStatus(props.CopyStatus)
	}
	if status != blob.CopyStatusTypeSuccess {
		return &fs.PathError{Op: op, Path: to, Err: fmt.Errorf("azureadapter: the service's copy ended %s", status)}
	}
	return nil
}

// copyError maps the failure of a copy request: a source that no longer
// has the ETag checked, or is gone, is a failure named by from.
func (f *FS) copyError(op, from, to string, err error, pre backend.Precondition, match string) error {
	m := mapError(err)
	code := errorCode(err)
	if code == codeSourceConditionNotMet || code == "CannotVerifyCopySource" || (errors.Is(m, fs.ErrNotExist) && code != "ContainerNotFound") {
		if code == "CannotVerifyCopySource" {
			m = &apiError{sentinel: fs.ErrNotExist, code: code, cause: err}
		}
		return &fs.PathError{Op: op, Path: from, Err: m}
	}
	return conditionalWriteError(op, to, err, pre, match)
}

// verifyCopy checks that the blob at to is complete: it has the source's
// size.
func (f *FS) verifyCopy(ctx context.Context, op, to string, src object) error {
	props, err := f.client.NewBlobClient(f.keys.Key(to)).GetProperties(ctx, nil)
	if err != nil {
		return pathError(op, to, err)
	}
	if n := deref(props.ContentLength); n != src.size {
		return &fs.PathError{Op: op, Path: to, Err: fmt.Errorf("azureadapter: the copy holds %d bytes, the source %d", n, src.size)}
	}
	return nil
}

// Rename moves from to to. Blob storage has no rename, so it is a
// server-side copy and then a removal, which observers can see half done
// (Capabilities.AtomicRename is false): the target appears before the
// source is gone. The source is removed only after the copy completed and
// was verified, with a Delete Blob conditional on the ETag that was
// copied, so a source changed meanwhile is kept; every failure leaves the
// source as it was. A directory is moved blob by blob (to a missing
// target only); when a copy fails, the copies made so far are removed
// again.
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
		_, err := f.targetCondition(ctx, op, to, opts.Precondition)
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
	_, err = f.client.NewBlobClient(f.keys.Key(from)).Delete(ctx, &blob.DeleteOptions{AccessConditions: ifMatch(src.etag)})
	if err != nil {
		return pathError(op, from, err)
	}
	return nil
}

// renameDir moves every blob below the directory from to the missing
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
	objs, err := objstore.All(ctx, f.flatLister(f.keys.DirPrefix(from), f.opts.ListPageSize))
	if err != nil {
		return &fs.PathError{Op: op, Path: from, Err: err}
	}
	var copied, sources []string
	for _, o := range objs {
		key := o.Key
		dst := f.keys.DirPrefix(to) + strings.TrimPrefix(key, f.keys.DirPrefix(from))
		if err := f.copyKey(ctx, strings.TrimPrefix(key, f.keys.Prefix()), strings.TrimPrefix(dst, f.keys.Prefix()), o.Entry.Version); err != nil {
			// The source is whole; take back the copies made so far.
			_ = f.deleteKeys(context.WithoutCancel(ctx), copied)
			return err
		}
		copied = append(copied, dst)
		sources = append(sources, key)
	}
	return f.deleteKeys(ctx, sources)
}

// copyKey copies one blob of a directory being moved; a directory marker
// (a name ending in "/") is written anew.
func (f *FS) copyKey(ctx context.Context, from, to, etag string) error {
	if dir, ok := strings.CutSuffix(to, "/"); ok {
		return f.putMarkers(ctx, dir, []string{dir})
	}
	return f.copyBlob(ctx, "rename", from, to, etag, backend.Precondition{}, "")
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

// Compile-time checks of the interfaces.
var (
	_ backend.Backend            = (*FS)(nil)
	_ backend.Stater             = (*FS)(nil)
	_ backend.Writer             = (*FS)(nil)
	_ backend.DirMaker           = (*FS)(nil)
	_ backend.Walker             = (*FS)(nil)
	_ backend.CapabilityReporter = (*FS)(nil)
	_ backend.Remover            = (*FS)(nil)
	_ backend.BatchRemover       = (*FS)(nil)
	_ backend.Renamer            = (*FS)(nil)
	_ backend.Copier             = (*FS)(nil)
)
