package overlay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/fencefs/fencefs/backend"
)

// Remove removes name from the overlay (see backend.Remover): the upper
// layer's entry is removed, and the base's is whited out. A precondition
// is checked by the upper layer for its files and against the base for
// the base's, not in one step with the whiteout (Capabilities.AtomicRemove
// is false).
func (o *FS) Remove(ctx context.Context, name string, opts backend.RemoveOptions) error {
	const op = "remove"
	if err := backend.CheckRemove(name, opts); err != nil {
		return err
	}
	if err := o.beginChange(ctx, op, name); err != nil {
		return err
	}
	pre := opts.Precondition
	if err := o.versionsOK(op, name, pre); err != nil {
		return err
	}
	ix, _, err := o.load(ctx)
	if err != nil {
		return backend.PathError(op, name, err)
	}
	fi, where, err := o.lookup(ctx, ix, op, name)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return o.removeDir(ctx, ix, name, where, pre)
	}
	if where == fromBase {
		if !fi.IsRegular() && (pre.MatchHash != "" || pre.MatchVersion != "") {
			return &fs.PathError{Op: op, Path: name, Err: backend.ErrPrecondition}
		}
		if err := o.checkBase(ctx, op, name, fi, pre); err != nil {
			return err
		}
		return o.recordBase(ctx, op, name, fi, true, true)
	}
	upre, err := upperPrecondition(op, name, pre)
	if err != nil {
		return err
	}
	bfi, inBase, err := o.baseVisible(ctx, ix, name)
	if err != nil {
		return err
	}
	if inBase {
		if err := o.recordBase(ctx, op, name, bfi, true, false); err != nil {
			return err
		}
	}
	return backend.Remove(ctx, o.upper, name, backend.RemoveOptions{Precondition: upre})
}

// removeDir removes the directory name, which the overlay shows as empty
// or fails with backend.ErrNotEmpty.
func (o *FS) removeDir(ctx context.Context, ix *index, name string, where layer, pre backend.Precondition) error {
	const op = "remove"
	if pre.MatchHash != "" || pre.MatchVersion != "" {
		return &fs.PathError{Op: op, Path: name, Err: backend.ErrIsDir}
	}
	entries, err := o.list(ctx, ix, name, backend.Backend.List)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return &fs.PathError{Op: op, Path: name, Err: backend.ErrNotEmpty}
	}
	bfi, inBase, err := o.baseVisible(ctx, ix, name)
	if err != nil {
		return err
	}
	if inBase {
		if err := o.recordBase(ctx, op, name, bfi, true, where != fromUpper); err != nil {
			return err
		}
	}
	if where != fromUpper {
		return nil
	}
	err = backend.Remove(ctx, o.upper, name, backend.RemoveOptions{})
	if inBase && errors.Is(err, fs.ErrNotExist) {
		return nil // storage without directories dropped it with its last file
	}
	return err
}

// RemoveFiles removes many files (see backend.BatchRemover), with one
// update of the index for all the whiteouts; names already missing are
// not an error.
func (o *FS) RemoveFiles(ctx context.Context, names []string) error {
	const op = "remove"
	if len(names) == 0 {
		return nil
	}
	for _, name := range names {
		if err := backend.CheckRemove(name, backend.RemoveOptions{}); err != nil {
			return err
		}
		if err := o.beginChange(ctx, op, name); err != nil {
			return err
		}
	}
	ix, _, err := o.load(ctx)
	if err != nil {
		return backend.PathError(op, names[0], err)
	}
	whiteouts := map[string]whiteout{}
	var fromUpperLayer []string
	for _, name := range names {
		fi, where, err := o.lookup(ctx, ix, op, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if fi.IsDir() {
			return &fs.PathError{Op: op, Path: name, Err: backend.ErrIsDir}
		}
		if where == fromUpper {
			fromUpperLayer = append(fromUpperLayer, name)
		}
		bfi, inBase, err := o.baseVisible(ctx, ix, name)
		if err != nil {
			return err
		}
		if !inBase {
			continue
		}
		state, err := o.baseStateOf(ctx, name, bfi)
		if err != nil {
			return err
		}
		whiteouts[name] = whiteout{state, where == fromBase}
	}
	if len(whiteouts) > 0 {
		err := o.update(ctx, func(ix *index) (bool, error) {
			for name, w := range whiteouts {
				if r := ix.records[name]; r != nil && r.Base.Kind != kindNone && !w.fresh {
					r.Deleted = true
				} else {
					ix.records[name] = &record{Path: name, Deleted: true, Base: w.state}
				}
			}
			return true, nil
		})
		if err != nil {
			return backend.PathError(op, names[0], err)
		}
	}
	if br, ok := o.upper.(backend.BatchRemover); ok && len(fromUpperLayer) > 0 {
		err := br.RemoveFiles(ctx, fromUpperLayer)
		if !errors.Is(err, errors.ErrUnsupported) {
			return err
		}
	}
	for _, name := range fromUpperLayer {
		if err := backend.Remove(ctx, o.upper, name, backend.RemoveOptions{}); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// whiteout is a base file RemoveFiles hides: the base's state, and
// whether the overlay served it from the base (see recordBase).
type whiteout struct {
	state baseState
	fresh bool
}

// Rename moves from to to (see backend.Renamer). Where only the upper
// layer is involved (from is not in the base, to is not the base's) it is
// the upper layer's rename. Otherwise a file is copied to to in the upper
// layer under to's precondition and then removed from from, where the
// base's file is whited out; a directory is copied entry by entry and
// then removed. That is not one step (Capabilities.AtomicRename is false),
// but every failure leaves from as it was: the source is removed only
// after its copy committed, and only if it still holds what was copied.
func (o *FS) Rename(ctx context.Context, from, to string, opts backend.RenameOptions) error {
	const op = "rename"
	if err := backend.CheckRename(op, from, to, opts); err != nil {
		return err
	}
	if err := o.beginChange(ctx, op, from); err != nil {
		return err
	}
	if err := o.beginChange(ctx, op, to); err != nil {
		return err
	}
	if err := o.versionsOK(op, from, opts.Precondition, opts.Source); err != nil {
		return err
	}
	ix, _, err := o.load(ctx)
	if err != nil {
		return backend.PathError(op, from, err)
	}
	sfi, swhere, err := o.lookup(ctx, ix, op, from)
	if err != nil {
		return err
	}
	if err := o.checkSource(ctx, op, from, sfi, opts.Source); err != nil {
		return err
	}
	tfi, twhere, err := o.checkTarget(ctx, ix, op, to, sfi.IsDir(), from == to, opts.Precondition)
	if err != nil || from == to {
		return err
	}
	_, srcInBase, err := o.baseVisible(ctx, ix, from)
	if err != nil {
		return err
	}
	_, dstInBase, err := o.baseVisible(ctx, ix, to)
	if err != nil {
		return err
	}
	if swhere == fromUpper && !srcInBase && !dstInBase && (twhere == fromUpper || tfi.Name == "") {
		upre, err := upperPrecondition(op, to, opts.Precondition)
		if err != nil {
			return err
		}
		usrc, err := upperPrecondition(op, from, opts.Source)
		if err != nil {
			return err
		}
		return backend.Rename(ctx, o.upper, from, to, backend.RenameOptions{Precondition: upre, Source: usrc})
	}
	if sfi.IsDir() {
		return o.renameDir(ctx, from, to)
	}
	hash, err := o.copyFile(ctx, from, to, opts)
	if err != nil {
		return err
	}
	if err := o.Remove(ctx, from, backend.RemoveOptions{Precondition: backend.Precondition{MatchHash: hash}}); err != nil {
		return err
	}
	if !srcInBase {
		return nil
	}
	err = o.update(ctx, func(ix *index) (bool, error) {
		r := ix.records[to]
		if r == nil {
			r = &record{Path: to, Base: baseState{Kind: kindNone}}
			ix.records[to] = r
		}
		r.From = from
		return true, nil
	})
	return backend.PathError(op, to, err)
}

// checkSource judges the source precondition of a rename or copy against
// the overlay's entry at from (fi).
func (o *FS) checkSource(ctx context.Context, op, from string, fi backend.FileInfo, pre backend.Precondition) error {
	if pre.MatchHash == "" && pre.MatchVersion == "" {
		return nil
	}
	if fi.IsDir() {
		return &fs.PathError{Op: op, Path: from, Err: backend.ErrIsDir}
	}
	if pre.MatchVersion != "" && pre.MatchVersion != fi.Version {
		return &fs.PathError{Op: op, Path: from, Err: backend.ErrPrecondition}
	}
	if pre.MatchHash != "" {
		h, err := hashFile(ctx, o, from)
		if err != nil {
			return err
		}
		if !strings.EqualFold(h, pre.MatchHash) {
			return &fs.PathError{Op: op, Path: from, Err: backend.ErrPrecondition}
		}
	}
	return nil
}

// checkTarget judges the target of a rename or copy: a directory moves
// only to a missing path, a file replaces only a regular file its
// precondition accepts, and nothing goes below a file. It returns the
// target's entry and layer (a zero FileInfo when it is missing).
func (o *FS) checkTarget(ctx context.Context, ix *index, op, to string, srcDir, same bool, pre backend.Precondition) (backend.FileInfo, layer, error) {
	fi, where, err := o.lookup(ctx, ix, op, to)
	if errors.Is(err, fs.ErrNotExist) {
		if pre.MatchHash != "" || pre.MatchVersion != "" {
			return backend.FileInfo{}, nowhere, &fs.PathError{Op: op, Path: to, Err: backend.ErrPrecondition}
		}
		return backend.FileInfo{}, nowhere, o.checkParents(ctx, ix, op, to)
	}
	if err != nil {
		return fi, where, err
	}
	switch {
	case same:
		return fi, where, nil
	case srcDir:
		return fi, where, &fs.PathError{Op: op, Path: to, Err: fs.ErrExist}
	case fi.IsDir():
		return fi, where, &fs.PathError{Op: op, Path: to, Err: backend.ErrIsDir}
	case !fi.IsRegular():
		return fi, where, &fs.PathError{Op: op, Path: to, Err: backend.ErrNotRegular}
	case pre.CreateOnly:
		return fi, where, &fs.PathError{Op: op, Path: to, Err: fs.ErrExist}
	case pre.MatchVersion != "" && pre.MatchVersion != fi.Version:
		return fi, where, &fs.PathError{Op: op, Path: to, Err: backend.ErrPrecondition}
	}
	return fi, where, nil
}

// copyFile copies the overlay's file from to to with the write's
// preconditions of opts (the target's, and the source's hash checked on
// the bytes copied), and returns the hash of what it copied.
func (o *FS) copyFile(ctx context.Context, from, to string, opts backend.RenameOptions) (string, error) {
	r, err := o.OpenRead(ctx, from)
	if err != nil {
		return "", err
	}
	defer r.Close()
	if v := opts.Source.MatchVersion; v != "" && r.Info().Version != v {
		return "", &fs.PathError{Op: "copy", Path: from, Err: backend.ErrPrecondition}
	}
	w, err := o.OpenWrite(ctx, to, backend.WriteOptions{Precondition: opts.Precondition})
	if err != nil {
		return "", err
	}
	defer w.Close()
	h := newHasher()
	if _, err := io.Copy(w, io.TeeReader(r, h)); err != nil {
		return "", backend.PathError("copy", to, err)
	}
	sum := h.hex()
	if opts.Source.MatchHash != "" && !strings.EqualFold(sum, opts.Source.MatchHash) {
		return "", &fs.PathError{Op: "copy", Path: from, Err: backend.ErrPrecondition}
	}
	return sum, w.Commit()
}

// renameDir moves the directory from to the missing path to, entry by
// entry, and then removes from's tree.
func (o *FS) renameDir(ctx context.Context, from, to string) error {
	if err := o.MkdirAll(ctx, to); err != nil {
		return err
	}
	err := backend.Walk(ctx, o, from, func(name string, e backend.DirEntry) error {
		dest := to + name[len(from):]
		switch {
		case e.IsDir():
			return o.MkdirAll(ctx, dest)
		case e.IsRegular():
			_, err := o.copyFile(ctx, name, dest, backend.RenameOptions{Precondition: backend.Precondition{CreateOnly: true}})
			return err
		}
		return &fs.PathError{Op: "rename", Path: name, Err: fmt.Errorf("%w: only files and directories move between layers", backend.ErrNotRegular)}
	})
	if err != nil {
		return err
	}
	return backend.RemoveAll(ctx, o, from, backend.RemoveAllOptions{})
}

// Copy copies the regular file from to to (see backend.Copier): with the
// upper layer's own copy where both are the upper layer's alone, and by
// streaming through the overlay otherwise, under the same preconditions.
func (o *FS) Copy(ctx context.Context, from, to string, opts backend.CopyOptions) error {
	const op = "copy"
	if err := backend.CheckRename(op, from, to, opts); err != nil {
		return err
	}
	if err := o.beginChange(ctx, op, from); err != nil {
		return err
	}
	if err := o.beginChange(ctx, op, to); err != nil {
		return err
	}
	if err := o.versionsOK(op, from, opts.Precondition, opts.Source); err != nil {
		return err
	}
	ix, _, err := o.load(ctx)
	if err != nil {
		return backend.PathError(op, from, err)
	}
	sfi, _, err := o.lookup(ctx, ix, op, from)
	if err != nil {
		return err
	}
	if sfi.IsDir() {
		return &fs.PathError{Op: op, Path: from, Err: backend.ErrIsDir}
	}
	if err := o.checkSource(ctx, op, from, sfi, opts.Source); err != nil {
		return err
	}
	if _, _, err := o.checkTarget(ctx, ix, op, to, false, from == to, opts.Precondition); err != nil {
		return err
	}
	_, err = o.copyFile(ctx, from, to, opts)
	return err
}
