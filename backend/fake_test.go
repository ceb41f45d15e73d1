package backend_test

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/fencefs/fencefs/backend"
)

// listOnly is a minimal backend with only Reader and Lister, so that the
// helpers' fallbacks are exercised. Keys are canonical storage paths; a
// directory is recorded explicitly, files hold their content.
type listOnly struct {
	files map[string]string
	dirs  map[string]bool
	lists int // number of List calls, to prove the fallback path ran
}

var modTime = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)

// newListOnly builds a tree from file paths; their parents become
// directories, and names ending in "/" are empty directories.
func newListOnly(paths map[string]string) *listOnly {
	b := &listOnly{files: map[string]string{}, dirs: map[string]bool{".": true}}
	for p, content := range paths {
		if strings.HasSuffix(p, "/") {
			p = strings.TrimSuffix(p, "/")
			b.dirs[p] = true
		} else {
			b.files[p] = content
		}
		for dir, _ := backend.Split(p); dir != "."; dir, _ = backend.Split(dir) {
			b.dirs[dir] = true
		}
	}
	return b
}

func (b *listOnly) OpenRead(ctx context.Context, name string) (backend.FileReader, error) {
	if err := backend.CheckPath("open", name); err != nil {
		return nil, err
	}
	if b.dirs[name] {
		return nil, &fs.PathError{Op: "open", Path: name, Err: backend.ErrIsDir}
	}
	content, ok := b.files[name]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return backend.NewFileReader(io.NopCloser(bytes.NewReader([]byte(content))), backend.FileInfo{Name: name, Size: int64(len(content)), ModTime: modTime}), nil
}

func (b *listOnly) List(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	b.lists++
	if err := backend.CheckPath("list", dir); err != nil {
		return nil, err
	}
	if _, ok := b.files[dir]; ok {
		return nil, &fs.PathError{Op: "list", Path: dir, Err: backend.ErrNotDir}
	}
	if !b.dirs[dir] {
		return nil, &fs.PathError{Op: "list", Path: dir, Err: fs.ErrNotExist}
	}
	var out []backend.DirEntry
	for d := range b.dirs {
		if parent, base := backend.Split(d); d != "." && parent == dir {
			out = append(out, backend.DirEntry{Name: base, Type: fs.ModeDir, Size: 0, ModTime: modTime})
		}
	}
	for f, content := range b.files {
		if parent, base := backend.Split(f); parent == dir {
			out = append(out, backend.DirEntry{Name: base, Size: int64(len(content)), ModTime: modTime})
		}
	}
	// Reverse order, so callers that need sorting must sort.
	sort.Slice(out, func(i, j int) bool { return out[i].Name > out[j].Name })
	return out, nil
}
