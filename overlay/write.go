package overlay

import (
	"context"
	"errors"
	"io/fs"
	"strings"

	"github.com/fencefs/fencefs/backend"
)

// OpenWrite starts writing name in the upper layer. opts.Precondition is
// judged against the file the overlay shows: a file of the upper layer
// is replaced under the upper layer's own check; a file served from the
// base is checked against the base and then written to the upper layer
// create-only, so of several writers presenting the same precondition at
// most one commits (the others fail with backend.ErrPrecondition). The
// first change of a base file records the base's version and hash, which
// Commit presents to the base.
func (o *FS) OpenWrite(ctx context.Context, name string, opts backend.WriteOptions) (backend.FileWriter, error) {
	const op = "write"
	if err := o.beginChange(ctx, op, name); err != nil {
		return nil, err
	}
	if name == "." {
		return nil, &fs.PathError{Op: op, Path: name, Err: backend.ErrIsDir}
	}
	pre := opts.Precondition
	if err := o.versionsOK(op, name, pre); err != nil {
		return nil, err
	}
	ix, _, err := o.load(ctx)
	if err != nil {
		return nil, backend.PathError(op, name, err)
	}
	fi, where, err := o.lookup(ctx, ix, op, name)
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, err
	case err == nil && fi.IsDir():
		return nil, &fs.PathError{Op: op, Path: name, Err: backend.ErrIsDir}
	case err != nil:
		return o.writeMissing(ctx, ix, name, pre)
	case where == fromUpper:
		upre, err := upperPrecondition(op, name, pre)
		if err != nil {
			return nil, err
		}
		return backend.OpenWrite(ctx, o.upper, name, backend.WriteOptions{Precondition: upre})
	}
	return o.writeOverBase(ctx, name, fi, pre)
}

// writeMissing starts a write of name, which the overlay does not show.
func (o *FS) writeMissing(ctx context.Context, ix *index, name string, pre backend.Precondition) (backend.FileWriter, error) {
	const op = "write"
	if pre.MatchHash != "" || pre.MatchVersion != "" {
		return nil, &fs.PathError{Op: op, Path: name, Err: backend.ErrPrecondition}
	}
	if err := o.checkParents(ctx, ix, op, name); err != nil {
		return nil, err
	}
	return backend.OpenWrite(ctx, o.upper, name, backend.WriteOptions{Precondition: backend.Precondition{CreateOnly: pre.CreateOnly}})
}

// writeOverBase starts a write of name, which the overlay serves from the
// base as fi.
func (o *FS) writeOverBase(ctx context.Context, name string, fi backend.FileInfo, pre backend.Precondition) (backend.FileWriter, error) {
	const op = "write"
	if !fi.IsRegular() {
		// A base's link or special file is not replaced through the
		// overlay, which never follows or lands over one unseen.
		return nil, &fs.PathError{Op: op, Path: name, Err: backend.ErrNotRegular}
	}
	if err := o.checkBase(ctx, op, name, fi, pre); err != nil {
		return nil, err
	}
	if err := o.recordBase(ctx, op, name, fi, false, true); err != nil {
		return nil, err
	}
	if pre.IsZero() {
		return backend.OpenWrite(ctx, o.upper, name, backend.WriteOptions{})
	}
	w, err := backend.OpenWrite(ctx, o.upper, name, backend.WriteOptions{Precondition: backend.Precondition{CreateOnly: true}})
	if err != nil {
		return nil, existIsPrecondition(err)
	}
	return &writer{FileWriter: w}, nil
}

// checkBase judges a precondition against the base's file name (fi):
// create-only fails, a version must be the base's, a hash the content's.
func (o *FS) checkBase(ctx context.Context, op, name string, fi backend.FileInfo, pre backend.Precondition) error {
	switch {
	case pre.CreateOnly:
		return &fs.PathError{Op: op, Path: name, Err: fs.ErrExist}
	case pre.MatchVersion != "" && pre.MatchVersion != fi.Version:
		return &fs.PathError{Op: op, Path: name, Err: backend.ErrPrecondition}
	case pre.MatchHash != "":
		if !fi.IsRegular() {
			return &fs.PathError{Op: op, Path: name, Err: backend.ErrPrecondition}
		}
		h, err := hashFile(ctx, o.base, name)
		if err != nil {
			return err
		}
		if !strings.EqualFold(h, pre.MatchHash) {
			return &fs.PathError{Op: op, Path: name, Err: backend.ErrPrecondition}
		}
	}
	return nil
}

// recordBase records what the base holds at name (fi, a file or a
// directory): its version and the hash of its content; with deleted the
// entry is also whited out. fresh says the overlay serves name from the
// base, so no change is pending against an older record, which is
// replaced; otherwise an existing record keeps the base state the upper
// layer's change was made against.
func (o *FS) recordBase(ctx context.Context, op, name string, fi backend.FileInfo, deleted, fresh bool) error {
	state, err := o.baseStateOf(ctx, name, fi)
	if err != nil {
		return err
	}
	err = o.update(ctx, func(ix *index) (bool, error) {
		r := ix.records[name]
		switch {
		case r == nil || fresh:
			ix.records[name] = &record{Path: name, Deleted: deleted, Base: state}
		case r.Base.Kind == kindNone:
			r.Base, r.Deleted = state, deleted
		case deleted && !r.Deleted:
			r.Deleted = true
		default:
			return false, nil
		}
		return true, nil
	})
	return backend.PathError(op, name, err)
}

// baseStateOf describes the base's entry name (fi) for the index: a
// file with its version and the hash of its content.
func (o *FS) baseStateOf(ctx context.Context, name string, fi backend.FileInfo) (baseState, error) {
	switch {
	case fi.IsDir():
		return baseState{Kind: kindDir}, nil
	case !fi.IsRegular():
		return baseState{Kind: kindOther}, nil
	}
	h, err := hashFile(ctx, o.base, name)
	if err != nil {
		return baseState{}, err
	}
	return baseState{Kind: kindFile, Version: strings.TrimPrefix(fi.Version, baseTag), Hash: h}, nil
}

// upperPrecondition translates a precondition on a file of the upper
// layer: a version must be one of the upper layer's.
func upperPrecondition(op, name string, pre backend.Precondition) (backend.Precondition, error) {
	if pre.MatchVersion == "" {
		return pre, nil
	}
	v, ok := strings.CutPrefix(pre.MatchVersion, upperTag)
	if !ok {
		return pre, &fs.PathError{Op: op, Path: name, Err: backend.ErrPrecondition}
	}
	pre.MatchVersion = v
	return pre, nil
}

// existIsPrecondition reports a create-only failure of the upper layer,
// which means another writer replaced the base's file first, as the
// failed precondition it is for the caller.
func existIsPrecondition(err error) error {
	var pe *fs.PathError
	if errors.Is(err, fs.ErrExist) && errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: pe.Path, Err: backend.ErrPrecondition}
	}
	return err
}

// writer is a write over a base file made create-only in the upper
// layer.
type writer struct {
	backend.FileWriter
}

// Commit commits, reporting a lost race as a failed precondition.
func (w *writer) Commit() error { return existIsPrecondition(w.FileWriter.Commit()) }

// checkParents fails with backend.ErrNotDir when the nearest parent of
// name that the overlay shows is not a directory.
func (o *FS) checkParents(ctx context.Context, ix *index, op, name string) error {
	for p, _ := backend.Split(name); p != "."; p, _ = backend.Split(p) {
		fi, _, err := o.lookup(ctx, ix, op, p)
		switch {
		case err == nil && fi.IsDir():
			return nil
		case err == nil || errors.Is(err, backend.ErrNotDir):
			return &fs.PathError{Op: op, Path: name, Err: backend.ErrNotDir}
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
	}
	return nil
}

// MkdirAll creates dir and its missing parents in the upper layer. An
// existing directory of either layer is not an error; a file at dir gives
// fs.ErrExist and a file above it backend.ErrNotDir.
func (o *FS) MkdirAll(ctx context.Context, dir string) error {
	const op = "mkdir"
	if err := o.beginChange(ctx, op, dir); err != nil {
		return err
	}
	if dir == "." {
		return nil
	}
	ix, _, err := o.load(ctx)
	if err != nil {
		return backend.PathError(op, dir, err)
	}
	fi, _, err := o.lookup(ctx, ix, op, dir)
	switch {
	case err == nil && fi.IsDir():
		return nil
	case err == nil:
		return &fs.PathError{Op: op, Path: dir, Err: fs.ErrExist}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if err := o.checkParents(ctx, ix, op, dir); err != nil {
		return err
	}
	return backend.MkdirAll(ctx, o.upper, dir)
}
