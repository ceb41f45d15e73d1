package mounted

import (
	"context"
	"errors"
	"io/fs"

	"github.com/fencefs/fencefs/backend"
)

// Remove removes name on its mount. The root and the mount roots cannot
// be removed (backend.ErrInvalidPath).
func (m *FS) Remove(ctx context.Context, name string, opts backend.RemoveOptions) error {
	t, err := m.changeTarget("remove", name)
	if err != nil {
		return err
	}
	return rewrite(t.mount, backend.Remove(backend.ForwardKnownFile(ctx, name, t.rest), t.child, t.rest, opts))
}

// RemoveFiles removes files, grouped by mount: in batches on a child that
// is a backend.BatchRemover, one by one on the others.
func (m *FS) RemoveFiles(ctx context.Context, names []string) error {
	groups := make(map[string][]string)
	var order []target
	for _, name := range names {
		t, err := m.changeTarget("remove", name)
		if err != nil {
			return err
		}
		if _, ok := groups[t.mount]; !ok {
			order = append(order, t)
		}
		groups[t.mount] = append(groups[t.mount], t.rest)
	}
	for _, t := range order {
		if err := m.removeFilesOn(ctx, t, groups[t.mount]); err != nil {
			return rewrite(t.mount, err)
		}
	}
	return nil
}

// removeFilesOn removes names (child paths) on the mount of t.
func (m *FS) removeFilesOn(ctx context.Context, t target, names []string) error {
	if br, ok := t.child.(backend.BatchRemover); ok && !backend.CapabilitiesOf(t.child).ReadOnly {
		if err := br.RemoveFiles(ctx, names); !errors.Is(err, errors.ErrUnsupported) {
			return err
		}
	}
	for _, name := range names {
		if err := backend.Remove(ctx, t.child, name, backend.RemoveOptions{}); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Rename moves from to to on their mount. Paths on two different mounts
// give backend.ErrCrossBackend: no storage operation spans two backends,
// and a copy followed by a removal would lose the atomicity, the
// preconditions and the single failure point a rename promises. Callers
// that accept those costs copy (Copy streams across mounts) and then
// remove.
func (m *FS) Rename(ctx context.Context, from, to string, opts backend.RenameOptions) error {
	src, err := m.changeTarget("rename", from)
	if err != nil {
		return err
	}
	dst, err := m.changeTarget("rename", to)
	if err != nil {
		return err
	}
	if src.mount != dst.mount {
		return &fs.PathError{Op: "rename", Path: to, Err: backend.ErrCrossBackend}
	}
	return rewrite(src.mount, backend.Rename(ctx, src.child, src.rest, dst.rest, opts))
}

// Copy copies the file from to to: with the mount's own copy (or a
// stream through it) when both are on one mount, and as a stream from one
// mount to the other otherwise, which is as safe as any write: the target
// appears whole or not at all, under its precondition.
func (m *FS) Copy(ctx context.Context, from, to string, opts backend.CopyOptions) error {
	src, err := m.changeTarget("copy", from)
	if err != nil {
		return err
	}
	dst, err := m.changeTarget("copy", to)
	if err != nil {
		return err
	}
	if src.mount == dst.mount {
		return rewrite(src.mount, backend.Copy(ctx, src.child, src.rest, dst.rest, opts))
	}
	return backend.CopyStream(ctx, m, from, m, to, opts)
}

// changeTarget routes a path to change: the root and the mount roots are
// not files or directories a change can take or replace.
func (m *FS) changeTarget(op, name string) (target, error) {
	t, err := m.route(op, name)
	if err != nil {
		return t, err
	}
	if t.isRoot() || t.isMountRoot() {
		return t, &fs.PathError{Op: op, Path: name, Err: backend.ErrInvalidPath}
	}
	return t, nil
}

// Interface checks.
var (
	_ backend.Remover      = (*FS)(nil)
	_ backend.BatchRemover = (*FS)(nil)
	_ backend.Renamer      = (*FS)(nil)
	_ backend.Copier       = (*FS)(nil)
)
