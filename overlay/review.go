package overlay

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/fencefs/fencefs/backend"
)

// Kind is the kind of a change the overlay holds against its base.
type Kind int

// The kinds of change.
const (
	// Created: the base has nothing at the path; the upper layer has it.
	Created Kind = iota + 1
	// Modified: a base file the upper layer holds a new content of.
	Modified
	// Deleted: a base entry whited out.
	Deleted
	// Renamed: a base file moved to the path (From is where it was), with
	// or without changes to its content.
	Renamed
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case Created:
		return "created"
	case Modified:
		return "modified"
	case Deleted:
		return "deleted"
	case Renamed:
		return "renamed"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Change is one path the overlay changed against its base.
type Change struct {
	// Path is the storage path changed.
	Path string
	// Kind says what changed.
	Kind Kind
	// From is the base path a Renamed file came from.
	From string
	// Dir: the path is (Created) or was (Deleted) a directory.
	Dir bool
	// BaseVersion and BaseHash are the base's version token (when the base
	// has versions) and content hash at Path (at From for a rename) when
	// the overlay first changed it: what Commit presents to the base.
	// Empty for a creation, which Commit makes create-only.
	BaseVersion, BaseHash string
}

// Changes returns the changes the overlay holds against its base, sorted
// by path: every file and directory created, every base file modified
// (a content written back unchanged is left out), deleted or renamed.
// Directories that exist in both layers are not changes; a directory
// removed and made again shows as the removals of what it held.
func (o *FS) Changes(ctx context.Context) ([]Change, error) {
	ix, _, err := o.load(ctx)
	if err != nil {
		return nil, err
	}
	upper := map[string]backend.DirEntry{}
	err = backend.Walk(ctx, o.upper, ".", func(name string, e backend.DirEntry) error {
		if o.checkReserved("changes", name) == nil {
			upper[name] = e
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []Change
	renamedFrom := map[string]bool{}
	for name, e := range upper {
		c, ok, err := o.upperChange(ctx, ix, upper, name, e)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, c)
			if c.Kind == Renamed {
				renamedFrom[c.From] = true
			}
		}
	}
	for name, r := range ix.records {
		if !r.Deleted || renamedFrom[name] {
			continue
		}
		if e, ok := upper[name]; ok && e.IsDir() == (r.Base.Kind == kindDir) {
			continue // modified, or a directory made again
		}
		out = append(out, Change{Path: name, Kind: Deleted, Dir: r.Base.Kind == kindDir, BaseVersion: r.Base.Version, BaseHash: r.Base.Hash})
	}
	slices.SortFunc(out, func(a, b Change) int { return compareStrings(a.Path, b.Path) })
	return out, nil
}

// upperChange judges the upper layer's entry name (e): the change it is
// against the base, if any.
func (o *FS) upperChange(ctx context.Context, ix *index, upper map[string]backend.DirEntry, name string, e backend.DirEntry) (Change, bool, error) {
	r := ix.records[name]
	if e.IsDir() {
		if r != nil && r.Base.Kind == kindDir {
			return Change{}, false, nil
		}
		if r == nil {
			fi, err := backend.Stat(ctx, o.base, name)
			if err == nil && fi.IsDir() {
				return Change{}, false, nil
			}
		}
		return Change{Path: name, Kind: Created, Dir: true}, true, nil
	}
	if r != nil && r.From != "" {
		if src := ix.records[r.From]; src != nil && src.Deleted && src.Base.Kind == kindFile {
			if _, back := upper[r.From]; !back {
				return Change{Path: name, Kind: Renamed, From: r.From, BaseVersion: src.Base.Version, BaseHash: src.Base.Hash}, true, nil
			}
		}
	}
	if r == nil || r.Base.Kind != kindFile {
		return Change{Path: name, Kind: Created}, true, nil
	}
	h, err := hashFile(ctx, o.upper, name)
	if err != nil {
		return Change{}, false, err
	}
	if h == r.Base.Hash {
		return Change{}, false, nil
	}
	return Change{Path: name, Kind: Modified, BaseVersion: r.Base.Version, BaseHash: r.Base.Hash}, true, nil
}

// selectChanges returns the changes of cs that paths select: a change is
// selected when its path or its origin is one of paths or lies inside
// one. No paths select everything.
func selectChanges(cs []Change, paths []string) ([]Change, error) {
	for _, p := range paths {
		if err := backend.CheckPath("select", p); err != nil {
			return nil, err
		}
	}
	if len(paths) == 0 {
		return cs, nil
	}
	var out []Change
	for _, c := range cs {
		if slices.ContainsFunc(paths, func(p string) bool {
			return backend.IsWithin(c.Path, p) || (c.From != "" && backend.IsWithin(c.From, p))
		}) {
			out = append(out, c)
		}
	}
	return out, nil
}

// Conflict is a change Commit did not land because the base changed
// since the overlay read it.
type Conflict struct {
	// Path is the storage path of the change.
	Path string
	// Err says what the base refused, matching backend.ErrPrecondition (the
	// base's file changed or went away), fs.ErrExist (something appeared
	// where the overlay created), backend.ErrNotEmpty (a directory to remove
	// gained entries) or backend.ErrNotDir/backend.ErrIsDir.
	Err error
}

// CommitResult reports what a Commit landed.
type CommitResult struct {
	// Landed are the paths of the changes applied to the base, in the
	// order applied.
	Landed []string
	// Conflicts are the changes the base refused; the overlay still holds
	// them.
	Conflicts []Conflict
}

// Commit lands the overlay's changes on the base: all of them, or those
// that paths select (a path selects the changes at or inside it, and a
// rename is selected by either of its paths). Each change is applied
// with compare-and-swap on what the overlay read from the base: a
// modification or removal only where the base still has the version (or,
// on a base without versions, the hash) recorded when the overlay first
// changed the path, a creation create-only. A base entry changed
// meanwhile is a conflict, reported per path and left in the overlay;
// the other changes land. Landed paths leave the overlay (its upper copy
// is dropped where it still holds what landed), so the overlay then shows
// the base there.
//
// Commit is per path, not a transaction: removals land first, deepest
// first, then created directories, then files; a failure part way (an
// error rather than a conflict) leaves the changes before it landed.
// Where the base checks preconditions atomically with a write
// (Capabilities.AtomicPreconditions: local disk, S3, memfs) no file is
// ever half-landed or landed over a change made meanwhile; a rename lands
// as the new file, then the removal of the old one, each guarded.
func (o *FS) Commit(ctx context.Context, paths ...string) (CommitResult, error) {
	var res CommitResult
	if backend.CapabilitiesOf(o.base).ReadOnly {
		return res, &fs.PathError{Op: "commit", Path: ".", Err: backend.ErrReadOnly}
	}
	all, err := o.Changes(ctx)
	if err != nil {
		return res, err
	}
	cs, err := selectChanges(all, paths)
	if err != nil {
		return res, err
	}
	for _, c := range commitOrder(cs) {
		err := o.land(ctx, c)
		var pe *fs.PathError
		switch {
		case err == nil:
			res.Landed = append(res.Landed, c.Path)
		case isConflict(err):
			path := c.Path
			if errors.As(err, &pe) {
				path = pe.Path
			}
			res.Conflicts = append(res.Conflicts, Conflict{Path: path, Err: err})
		default:
			return res, err
		}
	}
	return res, nil
}

// commitOrder orders changes for landing: removals of files, removals of
// directories deepest first, created directories shallowest first, then
// files.
func commitOrder(cs []Change) []Change {
	rank := func(c Change) int {
		switch {
		case c.Kind == Deleted && !c.Dir:
			return 0
		case c.Kind == Deleted:
			return 1
		case c.Dir:
			return 2
		}
		return 3
	}
	out := slices.Clone(cs)
	slices.SortStableFunc(out, func(a, b Change) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		da, db := strings.Count(a.Path, "/"), strings.Count(b.Path, "/")
		if rank(a) == 1 {
			return db - da
		}
		return da - db
	})
	return out
}

// isConflict reports whether err is the base refusing a change because
// it changed meanwhile.
func isConflict(err error) bool {
	for _, target := range []error{backend.ErrPrecondition, fs.ErrExist, backend.ErrNotEmpty, backend.ErrNotDir, backend.ErrIsDir} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// basePrecondition is the condition under which the base still holds what
// the overlay read: its version where the base has versions, else its hash.
func (o *FS) basePrecondition(version, hash string) backend.Precondition {
	if version != "" && backend.CapabilitiesOf(o.base).Versions {
		return backend.Precondition{MatchVersion: version}
	}
	return backend.Precondition{MatchHash: hash}
}

// land applies one change to the base and drops it from the overlay.
func (o *FS) land(ctx context.Context, c Change) error {
	switch {
	case c.Kind == Deleted && c.Dir:
		err := backend.Remove(ctx, o.base, c.Path, backend.RemoveOptions{})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return o.forget(ctx, c.Path)
	case c.Kind == Deleted:
		err := backend.Remove(ctx, o.base, c.Path, backend.RemoveOptions{Precondition: o.basePrecondition(c.BaseVersion, c.BaseHash)})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return o.forget(ctx, c.Path)
	case c.Dir:
		return backend.MkdirAll(ctx, o.base, c.Path)
	case c.Kind == Created:
		return o.landFile(ctx, c.Path, backend.Precondition{CreateOnly: true})
	case c.Kind == Modified:
		return o.landFile(ctx, c.Path, o.basePrecondition(c.BaseVersion, c.BaseHash))
	}
	// Renamed: the new file, then the removal of the old one, each guarded.
	if err := o.landFile(ctx, c.Path, backend.Precondition{CreateOnly: true}); err != nil {
		return err
	}
	err := backend.Remove(ctx, o.base, c.From, backend.RemoveOptions{Precondition: o.basePrecondition(c.BaseVersion, c.BaseHash)})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return o.forget(ctx, c.From)
}

// landFile writes the upper layer's file name to the base under pre,
// then drops it from the overlay: the record first says the base now holds
// what landed, then the upper copy is removed if it still holds it, then
// the record goes. A crash between the steps leaves an overlay that shows
// the same content and reports no change for it.
func (o *FS) landFile(ctx context.Context, name string, pre backend.Precondition) error {
	h := newHasher()
	err := func() error {
		r, err := o.upper.OpenRead(ctx, name)
		if err != nil {
			return err
		}
		defer r.Close()
		w, err := backend.OpenWrite(ctx, o.base, name, backend.WriteOptions{Precondition: pre})
		if err != nil {
			return err
		}
		defer w.Close()
		if _, err := copyTee(w, r, h); err != nil {
			return backend.PathError("commit", name, err)
		}
		return w.Commit()
	}()
	landed := baseState{Kind: kindFile, Hash: h.hex()}
	if err != nil && isConflict(err) {
		// A commit cut short after the write and before the record: the
		// base already holds exactly this content.
		uh, uerr := hashFile(ctx, o.upper, name)
		bh, berr := hashFile(ctx, o.base, name)
		if uerr != nil || berr != nil || uh != bh {
			return err
		}
		landed.Hash, err = uh, nil
	}
	if err != nil {
		return err
	}
	if fi, err := backend.Stat(ctx, o.base, name); err == nil {
		landed.Version = fi.Version
	}
	err = o.update(ctx, func(ix *index) (bool, error) {
		ix.records[name] = &record{Path: name, Base: landed}
		return true, nil
	})
	if err != nil {
		return backend.PathError("commit", name, err)
	}
	err = backend.Remove(ctx, o.upper, name, backend.RemoveOptions{Precondition: backend.Precondition{MatchHash: landed.Hash}})
	if errors.Is(err, backend.ErrPrecondition) {
		return nil // written again meanwhile: a change against what landed
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return o.forget(ctx, name)
}

// forget drops the record of name.
func (o *FS) forget(ctx context.Context, name string) error {
	err := o.update(ctx, func(ix *index) (bool, error) {
		if _, ok := ix.records[name]; !ok {
			return false, nil
		}
		delete(ix.records, name)
		return true, nil
	})
	return backend.PathError("commit", name, err)
}

// Discard throws every change away: it empties the upper layer and then
// removes the index, so the overlay shows the base again. A failure part
// way leaves some changes, which a second Discard removes.
func (o *FS) Discard(ctx context.Context) error {
	if backend.CapabilitiesOf(o.upper).ReadOnly {
		return &fs.PathError{Op: "discard", Path: ".", Err: backend.ErrReadOnly}
	}
	entries, err := o.upper.List(ctx, ".")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, e := range entries {
		if o.checkReserved("discard", e.Name) != nil {
			continue
		}
		if err := backend.RemoveAll(ctx, o.upper, e.Name, backend.RemoveAllOptions{}); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	err = backend.Remove(ctx, o.index, o.indexPath, backend.RemoveOptions{})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
