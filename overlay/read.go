package overlay

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"slices"

	"github.com/fencefs/fencefs/backend"
)

// layer says where a path of the overlay is served from.
type layer int

const (
	nowhere layer = iota
	fromUpper
	fromBase
)

// lookup finds name in the overlay: in the upper layer if it is there,
// else in the base unless a whiteout hides it. A missing path gives
// fs.ErrNotExist, a path through a file backend.ErrNotDir or
// fs.ErrNotExist, as the layer tells.
func (o *FS) lookup(ctx context.Context, ix *index, op, name string) (backend.FileInfo, layer, error) {
	if name == "." {
		return backend.FileInfo{Name: ".", Mode: fs.ModeDir | 0o755, Size: -1}, fromUpper, nil
	}
	fi, err := backend.Stat(ctx, o.upper, name)
	if err == nil {
		return tagInfo(fi, upperTag), fromUpper, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return fi, nowhere, err
	}
	if ix.hidden(name) {
		return backend.FileInfo{}, nowhere, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	fi, err = backend.Stat(ctx, o.base, name)
	if err != nil {
		return fi, nowhere, err
	}
	return tagInfo(fi, baseTag), fromBase, nil
}

// baseVisible returns the base's entry at name (its version tagged) when
// no whiteout hides it, whatever the upper layer holds there, and false
// when the base shows nothing at name.
func (o *FS) baseVisible(ctx context.Context, ix *index, name string) (backend.FileInfo, bool, error) {
	if ix.hidden(name) {
		return backend.FileInfo{}, false, nil
	}
	fi, err := backend.Stat(ctx, o.base, name)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, backend.ErrNotDir) {
		return fi, false, nil
	}
	return tagInfo(fi, baseTag), err == nil, err
}

// tagInfo marks fi's version as one of a layer.
func tagInfo(fi backend.FileInfo, tag string) backend.FileInfo {
	if fi.Version != "" {
		fi.Version = tag + fi.Version
	}
	return fi
}

// Stat returns the metadata of name as the overlay shows it. A file's
// Version is its layer's, tagged with the layer.
func (o *FS) Stat(ctx context.Context, name string) (backend.FileInfo, error) {
	const op = "stat"
	if err := o.begin(ctx, op, name); err != nil {
		return backend.FileInfo{}, err
	}
	ix, _, err := o.load(ctx)
	if err != nil {
		return backend.FileInfo{}, backend.PathError(op, name, err)
	}
	fi, _, err := o.lookup(ctx, ix, op, name)
	return fi, err
}

// OpenRead opens name from the upper layer when it has it, and from the
// base otherwise unless a whiteout hides it. The stream's Info is its
// layer's, with the version tagged.
func (o *FS) OpenRead(ctx context.Context, name string) (backend.FileReader, error) {
	const op = "open"
	if err := o.begin(ctx, op, name); err != nil {
		return nil, err
	}
	r, err := o.upper.OpenRead(ctx, name)
	if err == nil {
		return backend.NewFileReader(r, tagInfo(r.Info(), upperTag)), nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	ix, _, err := o.load(ctx)
	if err != nil {
		return nil, backend.PathError(op, name, err)
	}
	if ix.hidden(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	r, err = o.base.OpenRead(ctx, name)
	if err != nil {
		return nil, err
	}
	return backend.NewFileReader(r, tagInfo(r.Info(), baseTag)), nil
}

// List returns the entries of dir: the upper layer's, and the base's that
// the upper layer does not have and no whiteout hides (none of the base's
// when dir is opaque).
func (o *FS) List(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	const op = "list"
	if err := o.begin(ctx, op, dir); err != nil {
		return nil, err
	}
	ix, _, err := o.load(ctx)
	if err != nil {
		return nil, backend.PathError(op, dir, err)
	}
	return o.list(ctx, ix, dir, backend.Backend.List)
}

// list merges the listings of dir made with listFn.
func (o *FS) list(ctx context.Context, ix *index, dir string, listFn func(backend.Backend, context.Context, string) ([]backend.DirEntry, error)) ([]backend.DirEntry, error) {
	upper, uerr := listFn(o.upper, ctx, dir)
	if uerr != nil && !errors.Is(uerr, fs.ErrNotExist) {
		return nil, uerr
	}
	var base []backend.DirEntry
	berr := error(&fs.PathError{Op: "list", Path: dir, Err: fs.ErrNotExist})
	if !ix.hidden(dir) {
		base, berr = listFn(o.base, ctx, dir)
		// The base's file under the upper layer's directory is whited
		// out; any other failure of the base is the answer.
		if berr != nil && !errors.Is(berr, fs.ErrNotExist) && (uerr != nil || !errors.Is(berr, backend.ErrNotDir)) {
			return nil, berr
		}
	}
	if uerr != nil && berr != nil {
		return nil, uerr
	}
	out := make([]backend.DirEntry, 0, len(upper)+len(base))
	seen := make(map[string]bool, len(upper))
	for _, e := range upper {
		if dir == "." && o.checkReserved("list", e.Name) != nil {
			continue
		}
		seen[e.Name] = true
		out = append(out, tagEntry(e, upperTag))
	}
	if berr == nil {
		for _, e := range base {
			if seen[e.Name] || (dir == "." && o.checkReserved("list", e.Name) != nil) {
				continue
			}
			if r := ix.records[backend.Join(dir, e.Name)]; r != nil && r.Deleted {
				continue
			}
			out = append(out, tagEntry(e, baseTag))
		}
	}
	return out, nil
}

// tagEntry marks e's version as one of a layer.
func tagEntry(e backend.DirEntry, tag string) backend.DirEntry {
	if e.Version != "" {
		e.Version = tag + e.Version
	}
	return e
}

// ListTypes lists dir as List does, with each layer's TypeLister where it
// has one.
func (o *FS) ListTypes(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	const op = "list"
	if err := o.begin(ctx, op, dir); err != nil {
		return nil, err
	}
	ix, _, err := o.load(ctx)
	if err != nil {
		return nil, backend.PathError(op, dir, err)
	}
	return o.list(ctx, ix, dir, func(b backend.Backend, ctx context.Context, dir string) ([]backend.DirEntry, error) {
		return backend.ListTypes(ctx, b, dir)
	})
}

// Walk walks the tree below dir in one pass of each layer, where both
// layers walk in one pass (it declines otherwise, before calling fn):
// it gathers both walks, merges them as List does and calls fn with
// every directory before its contents.
func (o *FS) Walk(ctx context.Context, dir string, fn backend.WalkFunc) error {
	const op = "walk"
	if err := o.begin(ctx, op, dir); err != nil {
		return err
	}
	uw, uok := o.upper.(backend.Walker)
	bw, bok := o.base.(backend.Walker)
	if !uok || !bok {
		return &fs.PathError{Op: op, Path: dir, Err: backend.ErrUnsupported}
	}
	ix, _, err := o.load(ctx)
	if err != nil {
		return backend.PathError(op, dir, err)
	}
	if fi, _, err := o.lookup(ctx, ix, op, dir); err != nil {
		return err
	} else if !fi.IsDir() {
		return &fs.PathError{Op: op, Path: dir, Err: backend.ErrNotDir}
	}
	entries := map[string]backend.DirEntry{}
	upperEntries := map[string]backend.DirEntry{}
	err = uw.Walk(ctx, dir, func(name string, e backend.DirEntry) error {
		if o.checkReserved(op, name) != nil {
			return nil
		}
		upperEntries[name] = e
		entries[name] = tagEntry(e, upperTag)
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if !ix.hidden(dir) {
		err = bw.Walk(ctx, dir, func(name string, e backend.DirEntry) error {
			if _, ok := entries[name]; ok || o.checkReserved(op, name) != nil || ix.hidden(name) || shadowed(upperEntries, dir, name) {
				return nil
			}
			entries[name] = tagEntry(e, baseTag)
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	names := make([]string, 0, len(entries))
	for name := range entries {
		names = append(names, name)
	}
	slices.Sort(names) // a directory sorts before the paths inside it
	var skipped []string
	for _, name := range names {
		if slices.ContainsFunc(skipped, func(d string) bool { return backend.IsWithin(name, d) }) {
			continue
		}
		e := entries[name]
		if err := fn(name, e); err != nil {
			if err == fs.SkipDir && e.IsDir() {
				skipped = append(skipped, name)
				continue
			}
			return err
		}
	}
	return nil
}

// shadowed reports whether a parent of name below dir is something other
// than a directory in the upper layer, which hides the base below it.
func shadowed(upper map[string]backend.DirEntry, dir, name string) bool {
	for p, _ := backend.Split(name); p != dir && p != "."; p, _ = backend.Split(p) {
		if e, ok := upper[p]; ok && !e.IsDir() {
			return true
		}
	}
	return false
}

// hashFile returns the hex SHA-256 of the file name on b.
func hashFile(ctx context.Context, b backend.Reader, name string) (string, error) {
	r, err := b.OpenRead(ctx, name)
	if err != nil {
		return "", err
	}
	defer r.Close()
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", backend.PathError("read", name, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
