package backend

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"sort"
)

// Stat returns the metadata of name on b, using b's Stater when it has one
// and otherwise the listing of the parent directory.
func Stat(ctx context.Context, b Backend, name string) (FileInfo, error) {
	if s, ok := b.(Stater); ok {
		return s.Stat(ctx, name)
	}
	if err := CheckPath("stat", name); err != nil {
		return FileInfo{}, err
	}
	if name == "." {
		if _, err := b.List(ctx, "."); err != nil {
			return FileInfo{}, PathError("stat", name, err)
		}
		return FileInfo{Name: ".", Mode: fs.ModeDir, Size: -1}, nil
	}
	dir, base := Split(name)
	entries, err := b.List(ctx, dir)
	if err != nil {
		if errors.Is(err, ErrNotDir) {
			err = fs.ErrNotExist
		}
		return FileInfo{}, PathError("stat", name, err)
	}
	for _, e := range entries {
		if e.Name == base {
			return e.Info(), nil
		}
	}
	return FileInfo{}, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
}

// OpenWrite opens name on b for writing, or fails with ErrReadOnly when b
// cannot write.
func OpenWrite(ctx context.Context, b Backend, name string, opts WriteOptions) (FileWriter, error) {
	w, ok := b.(Writer)
	if !ok || CapabilitiesOf(b).ReadOnly {
		return nil, &fs.PathError{Op: "write", Path: name, Err: ErrReadOnly}
	}
	return w.OpenWrite(ctx, name, opts)
}

// MkdirAll creates dir and its parents on b, or fails with ErrReadOnly
// when b cannot create directories.
func MkdirAll(ctx context.Context, b Backend, dir string) error {
	m, ok := b.(DirMaker)
	if !ok || CapabilitiesOf(b).ReadOnly {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: ErrReadOnly}
	}
	return m.MkdirAll(ctx, dir)
}

// ReadFile reads the whole file name from b.
func ReadFile(ctx context.Context, b Reader, name string) ([]byte, error) {
	r, err := b.OpenRead(ctx, name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, PathError("read", name, err)
	}
	return data, nil
}

// WriteFile writes data to name on b atomically, with opts.
func WriteFile(ctx context.Context, b Backend, name string, data []byte, opts WriteOptions) error {
	w, err := OpenWrite(ctx, b, name, opts)
	if err != nil {
		return err
	}
	defer w.Close()
	if _, err := io.Copy(w, bytes.NewReader(data)); err != nil {
		return PathError("write", name, err)
	}
	return w.Commit()
}

// Walk calls fn for every entry below dir on b. It uses b's Walker when b
// has one (in the walker's order) and otherwise lists directory by
// directory, depth first with each directory's entries sorted by name.
// Symlinks are reported, never followed. fs.SkipDir returned for a
// directory skips its contents.
func Walk(ctx context.Context, b Backend, dir string, fn WalkFunc) error {
	if w, ok := b.(Walker); ok {
		return w.Walk(ctx, dir, fn)
	}
	return walkList(ctx, b, dir, fn)
}

func walkList(ctx context.Context, b Backend, dir string, fn WalkFunc) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := b.List(ctx, dir)
	if err != nil {
		return err
	}
	SortEntries(entries)
	for _, e := range entries {
		name := Join(dir, e.Name)
		if err := fn(name, e); err != nil {
			if err == fs.SkipDir && e.IsDir() {
				continue
			}
			return err
		}
		if e.IsDir() {
			if err := walkList(ctx, b, name, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// SortEntries sorts entries by name, bytewise.
func SortEntries(entries []DirEntry) {
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
}
