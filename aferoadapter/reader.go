package aferoadapter

import (
	"context"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/backend"
)

// OpenRead opens the regular file name for reading.
// Its Info is the opened file's own stat.
func (a *FS) OpenRead(ctx context.Context, name string) (backend.FileReader, error) {
	const op = "open"
	if err := a.begin(ctx, op, name); err != nil {
		return nil, err
	}
	if name == "." {
		return nil, &fs.PathError{Op: op, Path: name, Err: backend.ErrIsDir}
	}
	fi, err := a.lookup(name, false)
	if err != nil {
		return nil, pathErr(op, name, err)
	}
	if err := regular(fi); err != nil {
		return nil, pathErr(op, name, err)
	}
	f, err := a.openFile(name)
	if err != nil {
		return nil, pathErr(op, name, err)
	}
	// The path may have changed since the lookup; judge what was opened.
	if fi, err = f.Stat(); err == nil {
		err = regular(fi)
	}
	if err != nil {
		f.Close()
		return nil, pathErr(op, name, err)
	}
	return &reader{f: f, name: name, info: infoOf(name, fi)}, nil
}

// openFile opens name read-only, non-blocking where special files may
// appear so that a FIFO swapped in cannot block.
func (a *FS) openFile(name string) (afero.File, error) {
	if a.caps.SpecialFiles {
		return a.fsys.OpenFile(aferoPath(name), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	}
	return a.fsys.Open(aferoPath(name))
}

// regular returns the error for opening fi as a regular file.
func regular(fi os.FileInfo) error {
	switch {
	case fi.IsDir():
		return backend.ErrIsDir
	case !fi.Mode().IsRegular():
		return backend.ErrNotRegular
	}
	return nil
}

// Stat returns the metadata of name without following a final symlink. A
// path through a file is missing.
func (a *FS) Stat(ctx context.Context, name string) (backend.FileInfo, error) {
	const op = "stat"
	if err := a.begin(ctx, op, name); err != nil {
		return backend.FileInfo{}, err
	}
	fi, err := a.lookup(name, true)
	if err != nil {
		return backend.FileInfo{}, pathErr(op, name, err)
	}
	return infoOf(name, fi), nil
}

// infoOf describes the storage path name from its afero metadata.
func infoOf(name string, fi os.FileInfo) backend.FileInfo {
	_, base := backend.Split(name)
	return backend.FileInfo{Name: base, Size: size(fi), Mode: fi.Mode(), ModTime: fi.ModTime()}
}

// List returns the children of dir, without the temporary files of
// pending writes.
func (a *FS) List(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	const op = "list"
	if err := a.begin(ctx, op, dir); err != nil {
		return nil, err
	}
	fi, err := a.lookup(dir, false)
	if err != nil {
		return nil, pathErr(op, dir, err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, &fs.PathError{Op: op, Path: dir, Err: backend.ErrSymlink}
	case !fi.IsDir():
		return nil, &fs.PathError{Op: op, Path: dir, Err: backend.ErrNotDir}
	}
	f, err := a.fsys.Open(aferoPath(dir))
	if err != nil {
		return nil, pathErr(op, dir, err)
	}
	defer f.Close()
	infos, err := f.Readdir(-1)
	if err != nil {
		return nil, pathErr(op, dir, err)
	}
	entries := make([]backend.DirEntry, 0, len(infos))
	seen := make(map[string]bool, len(infos))
	for _, fi := range infos {
		// MemMapFs's entries read their name when asked, so a temporary
		// file renamed over the target during the listing shows up with
		// the target's name twice; a directory holds each name once.
		if seen[fi.Name()] || fi.Mode().IsRegular() && tempName.MatchString(fi.Name()) {
			continue
		}
		seen[fi.Name()] = true
		entries = append(entries, backend.DirEntry{Name: fi.Name(), Type: fi.Mode().Type(), Size: size(fi), ModTime: fi.ModTime()})
	}
	return entries, nil
}

// begin validates the path and the context of an operation.
func (a *FS) begin(ctx context.Context, op, name string) error {
	if err := backend.CheckPath(op, name); err != nil {
		return err
	}
	if strings.Contains(name, ".fencefs-") {
		// Pending writes' names are the adapter's own: naming one would
		// reach another write's bytes or a hidden file.
		if err := backend.CheckReserved(op, name, tempName.MatchString); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	return nil
}

// lookup returns the metadata of name after checking its ancestors: a
// symlink among them gives ErrSymlink, a file ErrNotDir, or, for stat,
// fs.ErrNotExist, since a path through a file names nothing.
func (a *FS) lookup(name string, stat bool) (os.FileInfo, error) {
	if a.lstat != nil {
		// Every ancestor is checked first: the Fs itself would follow links.
		if _, err := a.checkParents(name); err != nil {
			return nil, throughFile(err, stat)
		}
	}
	fi, err := a.lstatReal(name)
	if err == nil {
		return fi, nil
	}
	if isNotExist(err) && a.lstat == nil {
		// Tell a path through a file from a plain missing one.
		if _, perr := a.checkParents(name); perr != nil {
			return nil, throughFile(perr, stat)
		}
	}
	return nil, throughFile(mapErr(err), stat)
}

func throughFile(err error, stat bool) error {
	if stat && err == backend.ErrNotDir {
		return fs.ErrNotExist
	}
	return err
}

// size reports a file's size; directories report 0 whatever the Fs says.
func size(fi os.FileInfo) int64 {
	if fi.IsDir() {
		return 0
	}
	return fi.Size()
}

// splitPath returns the components of a canonical storage path.
func splitPath(name string) []string {
	if name == "." {
		return nil
	}
	return strings.Split(name, "/")
}

// reader is an open file whose errors name the storage path.
type reader struct {
	f    afero.File
	name string
	info backend.FileInfo
}

// Info describes the opened file.
func (r *reader) Info() backend.FileInfo { return r.info }

func (r *reader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	if err != nil && err != io.EOF {
		err = pathErr("read", r.name, err)
	}
	return n, err
}

func (r *reader) Close() error { return pathErr("close", r.name, r.f.Close()) }
