// Package overlay is a copy-on-write backend over two backends: a base,
// usually read-only (a repository checkout, an S3 prefix of a project),
// and an upper layer that takes every change (a per-session scratch
// directory or prefix). Reads fall through to the base where the upper
// layer has nothing; writes go to the upper layer; a removal or a rename
// of something the base holds is recorded as a whiteout, so the base is
// never changed by the overlay's own operations. A directory present in
// both layers shows the entries of both; one removed and made again hides
// the base's entries (it is opaque).
//
// An [FS] is a backend like any other: it implements every behaviour
// interface of package backend that a layer pair can support and reports
// Capabilities derived from its layers', so tools, tenants and checkpoints
// work on it unchanged. What the upper layer holds can then be reviewed
// ([FS.Changes], [FS.Diff]), landed on the base path by path under
// compare-and-swap on the base versions that were read ([FS.Commit]), or
// thrown away ([FS.Discard]).
//
// The overlay's own records (whiteouts and the base version of every path
// it copied up or whited out) are one small JSON index file. By default it
// lives in the upper layer under the reserved root name [IndexName], which
// no listing shows and every operation refuses as a path; [Options.Index]
// puts it on a backend of its own instead. All state is in storage, so two
// FS values over the same layers (two replicas of a server) see the same
// overlay; the index is updated with compare-and-swap.
package overlay

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"github.com/fencefs/fencefs/backend"
)

// IndexName is the name of the index file at the root of the upper layer
// (or of Options.Index), unless Options.IndexPath names another.
const IndexName = ".fencefs-overlay"

// Version tags that keep the two layers' version tokens apart, so a
// version from the base never matches a file of the upper layer.
const (
	upperTag = "u:"
	baseTag  = "b:"
)

// Options adjust an overlay.
type Options struct {
	// Index is the backend that holds the overlay's index; nil keeps it
	// in the upper layer, under a reserved root name.
	Index backend.Backend
	// IndexPath is the index file's storage path on Index (on the upper
	// layer, a single component); empty means IndexName.
	IndexPath string
}

// FS is an overlay backend. It is safe for concurrent use, and several
// FS values may share the same layers.
type FS struct {
	base, upper backend.Backend
	index       backend.Backend
	indexPath   string
	// reserved is the root name the index takes in the upper layer, or
	// "" when it lives elsewhere.
	reserved string

	mu     sync.Mutex
	cached struct {
		hash string
		ix   *index
	}
}

// New returns an overlay of upper over base. upper takes every change;
// when it is read-only, so is the overlay. base is only read. Paths in
// the base whose first component is the index's reserved name (see
// Options) are not reachable through the overlay.
func New(base, upper backend.Backend, opts Options) (*FS, error) {
	if base == nil || upper == nil {
		return nil, errors.New("overlay: base and upper layer are both required")
	}
	o := &FS{base: base, upper: upper, index: opts.Index, indexPath: opts.IndexPath}
	if o.indexPath == "" {
		o.indexPath = IndexName
	}
	if !backend.ValidPath(o.indexPath) || o.indexPath == "." {
		return nil, fmt.Errorf("overlay: index path %q is not a canonical storage path", o.indexPath)
	}
	if o.index == nil {
		if strings.Contains(o.indexPath, "/") {
			return nil, fmt.Errorf("overlay: index path %q in the upper layer must be a single name", o.indexPath)
		}
		o.index = upper
		o.reserved = o.indexPath
	}
	bc, uc := backend.CapabilitiesOf(base), backend.CapabilitiesOf(upper)
	if bc.Rooted || uc.Rooted {
		return nil, errors.New("overlay: a rooted namespace (a set of mounts) cannot be a layer; overlay each mount instead")
	}
	return o, nil
}

// Base returns the base layer.
func (o *FS) Base() backend.Backend { return o.base }

// Upper returns the upper layer.
func (o *FS) Upper() backend.Backend { return o.upper }

// Capabilities are derived from the layers': the overlay is read-only
// when the upper layer is; it has versions when both layers do; its
// preconditions are atomic where the upper layer's are (a file served
// from the base is replaced by a create-only write to the upper layer, so
// of several writers presenting the same precondition at most one
// commits); removals and renames of base entries are a whiteout beside a
// change of the upper layer, so AtomicRemove and AtomicRename are false.
// It shows no symlinks, special files or permission bits of its own.
func (o *FS) Capabilities() backend.Capabilities {
	bc, uc := backend.CapabilitiesOf(o.base), backend.CapabilitiesOf(o.upper)
	c := backend.Capabilities{
		Name:                "overlay",
		ReadOnly:            uc.ReadOnly,
		ModTimes:            bc.ModTimes && uc.ModTimes,
		EmptyDirs:           uc.EmptyDirs,
		CaseInsensitive:     bc.CaseInsensitive || uc.CaseInsensitive,
		NonAtomicReplace:    uc.NonAtomicReplace,
		AtomicPreconditions: uc.AtomicPreconditions && backend.CapabilitiesOf(o.index).AtomicPreconditions,
		Versions:            bc.Versions && uc.Versions,
		MaxNameBytes:        uc.MaxNameBytes,
		StagingPattern:      uc.StagingPattern,
	}
	if bc.MaxNameBytes > 0 && (c.MaxNameBytes == 0 || bc.MaxNameBytes < c.MaxNameBytes) {
		c.MaxNameBytes = bc.MaxNameBytes
	}
	return c
}

// begin refuses a call whose context is done, whose path is not canonical
// or whose path is the index's reserved name.
func (o *FS) begin(ctx context.Context, op, name string) error {
	if err := ctx.Err(); err != nil {
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	if err := backend.CheckPath(op, name); err != nil {
		return err
	}
	return o.checkReserved(op, name)
}

// checkReserved refuses a path inside the index's reserved name.
func (o *FS) checkReserved(op, name string) error {
	if o.reserved == "" {
		return nil
	}
	first, _, _ := strings.Cut(name, "/")
	if first == o.reserved || (o.foldCase() && strings.EqualFold(first, o.reserved)) {
		return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: %q is reserved for the overlay's records", backend.ErrInvalidPath, first)}
	}
	return nil
}

// foldCase reports whether the upper layer takes names differing only in
// case for the same file, so the reserved name is refused in any case.
func (o *FS) foldCase() bool { return backend.CapabilitiesOf(o.upper).CaseInsensitive }

// beginChange is begin for a call that changes storage: a read-only
// overlay refuses it.
func (o *FS) beginChange(ctx context.Context, op, name string) error {
	if err := o.begin(ctx, op, name); err != nil {
		return err
	}
	if backend.CapabilitiesOf(o.upper).ReadOnly {
		return &fs.PathError{Op: op, Path: name, Err: backend.ErrReadOnly}
	}
	return nil
}

// versionsOK refuses a version precondition when the overlay has no
// versions.
func (o *FS) versionsOK(op, name string, pres ...backend.Precondition) error {
	for _, p := range pres {
		if p.MatchVersion != "" && !o.Capabilities().Versions {
			return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("version precondition: %w", backend.ErrUnsupported)}
		}
	}
	return nil
}

// Interface checks.
var (
	_ backend.Backend            = (*FS)(nil)
	_ backend.Stater             = (*FS)(nil)
	_ backend.Writer             = (*FS)(nil)
	_ backend.DirMaker           = (*FS)(nil)
	_ backend.Walker             = (*FS)(nil)
	_ backend.TypeLister         = (*FS)(nil)
	_ backend.Remover            = (*FS)(nil)
	_ backend.BatchRemover       = (*FS)(nil)
	_ backend.Renamer            = (*FS)(nil)
	_ backend.Copier             = (*FS)(nil)
	_ backend.CapabilityReporter = (*FS)(nil)
)
