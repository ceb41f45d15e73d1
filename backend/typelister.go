package backend

import "context"

// TypeLister is implemented by backends that can list a directory with
// its entries' types more cheaply than with their sizes and modification
// times (local disk reads the types from the directory itself, where
// sizes take a stat per entry). Walkers that need only names and types
// use it when it is there.
type TypeLister interface {
	// ListTypes is List with each entry's Size -1 and ModTime zero; Name
	// and Type are as List gives them.
	ListTypes(ctx context.Context, dir string) ([]DirEntry, error)
}

// ListTypes lists dir on b with its TypeLister when it has one that does
// not decline, and with List otherwise.
func ListTypes(ctx context.Context, b Backend, dir string) ([]DirEntry, error) {
	if tl, ok := b.(TypeLister); ok {
		if entries, err := tl.ListTypes(ctx, dir); !declined(err) {
			return entries, err
		}
	}
	return b.List(ctx, dir)
}
