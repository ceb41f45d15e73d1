package gcsadapter

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"cloud.google.com/go/storage"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/objstore"
)

// deleteParallel is how many deletions RemoveFiles keeps in flight. The
// Go SDK sends no batch requests (the JSON API's batch endpoint is not
// part of it), so a batch is deletions sent side by side.
const deleteParallel = 16

// object is what a change found at a storage path.
type object struct {
	isDir bool
	gen   int64
	size  int64
}

// lookup finds out what name is: a directory, an object, or nothing
// (fs.ErrNotExist), as Stat tells.
func (f *FS) lookup(ctx context.Context, op, name string) (object, error) {
	fi, err := f.Stat(ctx, name)
	if err != nil {
		return object{}, backend.PathError(op, name, err)
	}
	gen, _ := generation(fi.Version)
	return object{isDir: fi.IsDir(), gen: gen, size: fi.Size}, nil
}

// matchObject checks a MatchHash or MatchVersion precondition against the
// object o at name and returns the generation a conditional request must
// still find, so that the check and the change form one compare-and-swap.
// MatchHash costs a download of the object.
func (f *FS) matchObject(ctx context.Context, op, name string, o object, pre backend.Precondition) (int64, error) {
	switch {
	case o.isDir && (pre.MatchHash != "" || pre.MatchVersion != ""):
		return 0, &fs.PathError{Op: op, Path: name, Err: backend.ErrIsDir}
	case pre.MatchVersion != "" && pre.MatchVersion != version(o.gen):
		return 0, &fs.PathError{Op: op, Path: name, Err: backend.ErrPrecondition}
	case pre.MatchHash == "":
		return o.gen, nil
	}
	return f.hashedGeneration(ctx, op, name, backend.Precondition{MatchHash: pre.MatchHash, MatchVersion: version(o.gen)})
}

// Remove removes the object name, or the marker of the empty directory
// name. A MatchHash or MatchVersion precondition becomes a deletion
// conditional on the generation checked (ifGenerationMatch), which Cloud
// Storage evaluates atomically with the deletion. Under
// [backend.WithKnownFile] naming the MatchVersion, the deletion is the
// only request.
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
		// The caller has just seen the object of the generation the
		// deletion below must still find.
		gen, ok := generation(opts.Precondition.MatchVersion)
		if !ok {
			return &fs.PathError{Op: op, Path: name, Err: backend.ErrPrecondition}
		}
		o.gen = gen
	} else if o, err = f.lookup(ctx, op, name); err != nil {
		return err
	}
	gen, err := f.matchObject(ctx, op, name, o, opts.Precondition)
	if err != nil {
		return err
	}
	if o.isDir {
		return f.removeDir(ctx, name)
	}
	h := f.object(name)
	if !opts.Precondition.IsZero() {
		h = h.If(storage.Conditions{GenerationMatch: gen})
	}
	if err := h.Delete(ctx); err != nil {
		return pathError(op, name, err)
	}
	return nil
}

// removeDir removes the marker of the directory name when nothing else
// lies below it, and fails with backend.ErrNotEmpty otherwise.
func (f *FS) removeDir(ctx context.Context, name string) error {
	marker := f.keys.DirPrefix(name)
	page, _, err := f.listPage(ctx, &storage.Query{Prefix: marker}, 2, "")
	if err != nil {
		return pathError("remove", name, err)
	}
	var gen int64
	for _, a := range page {
		if a.Name != marker {
			return &fs.PathError{Op: "remove", Path: name, Err: backend.ErrNotEmpty}
		}
		gen = a.Generation
	}
	// Only the marker listed goes: a marker written anew meanwhile stays.
	err = f.bucket.Object(marker).If(storage.Conditions{GenerationMatch: gen}).Delete(ctx)
	if err != nil && !isNotFound(err) {
		return pathError("remove", name, err)
	}
	return nil
}

// RemoveFiles removes the objects names, deleteParallel at a time.
// Missing objects are not an error.
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

// deleteKeys deletes the objects keys (directory markers included),
// deleteParallel at a time; missing ones are not an error. It returns the
// first failure.
func (f *FS) deleteKeys(ctx context.Context, keys []string) error {
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
		slots = make(chan struct{}, deleteParallel)
	)
	for _, key := range keys {
		slots <- struct{}{}
		mu.Lock()
		stop := first != nil
		mu.Unlock()
		if stop {
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			err := f.bucket.Object(key).Delete(ctx)
			if err != nil && !isNotFound(err) {
				mu.Lock()
				if first == nil {
					first = pathError("remove", f.keys.Path(key), err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return first
}

// Copy copies the object from to to on the server (a rewrite), without
// the bytes passing through the client. The source must still have the
// generation that was checked (ifSourceGenerationMatch), and the target
// precondition is a generation condition on the destination, which Cloud
// Storage evaluates atomically with the copy.
func (f *FS) Copy(ctx context.Context, from, to string, opts backend.CopyOptions) error {
	const op = "copy"
	src, err := f.checkTransfer(ctx, op, from, to, opts)
	if err != nil {
		return err
	}
	if src.isDir {
		return &fs.PathError{Op: op, Path: from, Err: backend.ErrIsDir}
	}
	_, err = f.copyChecked(ctx, op, from, to, src, opts.Precondition)
	return err
}

// checkTransfer checks the paths and the source of a copy or rename and
// returns the source, with the generation its precondition was checked
// on.
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
	if src.gen, err = f.matchObject(ctx, op, from, src, opts.Source); err != nil {
		return object{}, err
	}
	return src, nil
}

// copyChecked copies the object src at from to to under the target
// precondition pre, verifies that the copy has the source's size, and
// returns the copy's generation. One listing of the target's name settles
// whether it is a directory and which object it holds, which the
// precondition is checked on before the rewrite; the rewrite's own
// generation condition makes that check and the copy one
// compare-and-swap on Cloud Storage
// (https://cloud.google.com/storage/docs/json_api/v1/objects/rewrite:
// ifGenerationMatch, ifSourceGenerationMatch).
func (f *FS) copyChecked(ctx context.Context, op, from, to string, src object, pre backend.Precondition) (int64, error) {
	if err := objstore.CheckParent(ctx, to, f.hasChildren, f.settle); err != nil {
		return 0, backend.PathError(op, to, err)
	}
	kind, info, err := f.settle(ctx, to)
	if err != nil {
		return 0, &fs.PathError{Op: op, Path: to, Err: err}
	}
	if kind == objstore.Dir {
		return 0, &fs.PathError{Op: op, Path: to, Err: backend.ErrIsDir}
	}
	exists := kind == objstore.File
	var (
		cond    storage.Conditions
		matched bool
	)
	switch {
	case pre.CreateOnly && exists:
		return 0, &fs.PathError{Op: op, Path: to, Err: fs.ErrExist}
	case pre.CreateOnly:
		cond = storage.Conditions{DoesNotExist: true}
	case pre.MatchHash == "" && pre.MatchVersion == "":
	case !exists:
		return 0, &fs.PathError{Op: op, Path: to, Err: backend.ErrPrecondition}
	default:
		// The listed version is the generation's decimal form.
		listed, _ := generation(info.Version)
		gen, err := f.matchObject(ctx, op, to, object{gen: listed, size: info.Size}, pre)
		if err != nil {
			return 0, err
		}
		cond, matched = storage.Conditions{GenerationMatch: gen}, true
	}
	dst := f.object(to)
	if cond != (storage.Conditions{}) {
		dst = dst.If(cond)
	}
	attrs, err := dst.CopierFrom(f.object(from).If(storage.Conditions{GenerationMatch: src.gen})).Run(ctx)
	if err != nil {
		return 0, f.copyError(op, from, to, err, pre, matched)
	}
	if attrs.Size != src.size {
		return 0, &fs.PathError{Op: op, Path: to, Err: fmt.Errorf("gcsadapter: the copy holds %d bytes, the source %d", attrs.Size, src.size)}
	}
	return attrs.Generation, nil
}

// targetCondition turns the target precondition into the generation
// condition of the copy: DoesNotExist for CreateOnly, GenerationMatch on
// the generation checked for MatchHash and MatchVersion.
func (f *FS) targetCondition(ctx context.Context, op, to string, pre backend.Precondition) (storage.Conditions, bool, error) {
	switch {
	case pre.CreateOnly:
		return storage.Conditions{DoesNotExist: true}, false, nil
	case pre.MatchHash == "" && pre.MatchVersion == "":
		return storage.Conditions{}, false, nil
	}
	o, err := f.lookup(ctx, op, to)
	if errors.Is(err, fs.ErrNotExist) {
		return storage.Conditions{}, false, &fs.PathError{Op: op, Path: to, Err: backend.ErrPrecondition}
	}
	if err != nil {
		return storage.Conditions{}, false, err
	}
	gen, err := f.matchObject(ctx, op, to, o, pre)
	return storage.Conditions{GenerationMatch: gen}, true, err
}

// copyError maps the failure of a rewrite. A failed condition is the
// target's when the target was conditional and the source still has the
// generation checked, and the source's otherwise; a missing object is the
// source.
func (f *FS) copyError(op, from, to string, err error, pre backend.Precondition, matched bool) error {
	m := mapError(err)
	switch {
	case errors.Is(m, fs.ErrNotExist):
		return &fs.PathError{Op: op, Path: from, Err: m}
	case errors.Is(m, backend.ErrPrecondition) && (pre.CreateOnly || matched):
		return conditionalWriteError(op, to, err, pre, matched)
	case errors.Is(m, backend.ErrPrecondition):
		return &fs.PathError{Op: op, Path: from, Err: m}
	}
	return &fs.PathError{Op: op, Path: to, Err: m}
}

// Rename moves from to to. Cloud Storage has no rename across names, so
// it is a server-side copy and then a deletion, which observers can see
// half done (Capabilities.AtomicRename is false): the target appears
// before the source is gone. The source is deleted only after the copy
// completed and was verified, conditional on the generation that was
// copied, so a source changed meanwhile is kept; every failure leaves the
// source as it was. A directory is moved object by object (to a missing
// target only); when a copy fails, the copies made so far are deleted
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
		_, _, err := f.targetCondition(ctx, op, to, opts.Precondition)
		return err
	}
	if src.isDir {
		return f.renameDir(ctx, from, to)
	}
	if _, err := f.copyChecked(ctx, op, from, to, src, opts.Precondition); err != nil {
		return err
	}
	err = f.object(from).If(storage.Conditions{GenerationMatch: src.gen}).Delete(ctx)
	if err != nil {
		return pathError(op, from, err)
	}
	return nil
}

// renameDir moves every object below the directory from to the missing
// directory to.
func (f *FS) renameDir(ctx context.Context, from, to string) error {
	const op = "rename"
	switch _, err := f.lookup(ctx, op, to); {
	case err == nil:
		return &fs.PathError{Op: op, Path: to, Err: fs.ErrExist}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if err := objstore.CheckParent(ctx, to, f.hasChildren, f.settle); err != nil {
		return backend.PathError(op, to, err)
	}
	objs, err := objstore.All(ctx, f.lister(f.keys.DirPrefix(from), "", listPageSize))
	if err != nil {
		return &fs.PathError{Op: op, Path: from, Err: err}
	}
	var copied, sources []string
	for _, o := range objs {
		gen, _ := generation(o.Entry.Version)
		dst := f.keys.DirPrefix(to) + strings.TrimPrefix(o.Key, f.keys.DirPrefix(from))
		_, err := f.bucket.Object(dst).If(storage.Conditions{DoesNotExist: true}).
			CopierFrom(f.bucket.Object(o.Key).If(storage.Conditions{GenerationMatch: gen})).Run(ctx)
		if err != nil {
			// The source is whole; take back the copies made so far.
			_ = f.deleteKeys(context.WithoutCancel(ctx), copied)
			return f.copyError(op, f.keys.Path(o.Key), f.keys.Path(dst), err, backend.Precondition{}, false)
		}
		copied = append(copied, dst)
		sources = append(sources, o.Key)
	}
	return f.deleteKeys(ctx, sources)
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

// Compile-time checks of the contract.
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
