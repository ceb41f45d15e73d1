package objstore

import (
	"context"

	"github.com/fencefs/fencefs/backend"
)

// NotDirFunc explains why name, which no key lies below, cannot be
// listed or walked as a directory: an object of that name, or nothing.
// op is "list" or "walk".
type NotDirFunc func(ctx context.Context, op, name string) error

// ListDir is a backend's List over k: it checks dir, lists the names
// grouped (a listing delimited by "/" of the keys below prefix) gives,
// and asks notDir why a dir other than the root holds nothing.
func (k Keys) ListDir(ctx context.Context, dir string, grouped func(prefix string) Lister, notDir NotDirFunc) ([]backend.DirEntry, error) {
	if err := k.Check("list", dir); err != nil {
		return nil, err
	}
	entries, found, err := k.List(ctx, grouped(k.DirPrefix(dir)), dir)
	switch {
	case err != nil:
		return nil, err
	case !found && dir != ".":
		return nil, notDir(ctx, "list", dir)
	}
	return entries, nil
}

// WalkDir is a backend's Walk over k: it checks dir, walks what flat (a
// listing of every key below prefix) gives, calling fn as [Keys.Walk]
// does, and asks notDir why a dir other than the root holds nothing.
func (k Keys) WalkDir(ctx context.Context, dir string, fn backend.WalkFunc, flat func(prefix string) Lister, notDir NotDirFunc) error {
	if err := k.Check("walk", dir); err != nil {
		return err
	}
	found, err := k.Walk(ctx, flat(k.DirPrefix(dir)), dir, fn)
	if err == nil && !found && dir != "." {
		return notDir(ctx, "walk", dir)
	}
	return err
}
