package sftpadapter

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/pkg/sftp"
)

// openAttempts bounds how often OpenRead retries when the file changes
// between its check and its open (a concurrent atomic replace). Each
// attempt is three round trips, so writers replacing the file back to
// back on a busy server can win several in a row; three attempts were
// seen to fail the conformance's concurrent readers under load.
const openAttempts = 10

// Stat returns the metadata of name without following a final symlink.
func (f *FS) Stat(ctx context.Context, name string) (backend.FileInfo, error) {
	if err := checkPath("stat", name); err != nil {
		return backend.FileInfo{}, err
	}
	ctx, cancel := f.opContext(ctx)
	defer cancel()
	var fi os.FileInfo
	err := f.do(ctx, true, func(s *session) error {
		var err error
		fi, err = f.lstatPath(s.client, name)
		return err
	})
	if err != nil {
		return backend.FileInfo{}, pathErr("stat", name, err)
	}
	return toFileInfo(name, fi), nil
}

// List returns the children of dir. Entries whose names cannot be
// represented as storage paths are skipped.
func (f *FS) List(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	if err := checkPath("list", dir); err != nil {
		return nil, err
	}
	ctx, cancel := f.opContext(ctx)
	defer cancel()
	var entries []backend.DirEntry
	err := f.do(ctx, true, func(s *session) error {
		fi, err := f.lstatPath(s.client, dir)
		if err != nil {
			return err
		}
		if err := checkDir(fi); err != nil {
			return err
		}
		entries, err = f.readDir(s.client, dir)
		return err
	})
	if err != nil {
		return nil, pathErr("list", dir, err)
	}
	return entries, nil
}

// checkDir refuses a path that is not a real directory.
func checkDir(fi os.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return backend.ErrSymlink
	case !fi.IsDir():
		return backend.ErrNotDir
	}
	return nil
}

// readDir lists dir, keeping only names that are valid storage path
// components.
func (f *FS) readDir(c *sftp.Client, dir string) ([]backend.DirEntry, error) {
	infos, err := c.ReadDir(f.remote(dir))
	if err != nil {
		return nil, err
	}
	entries := make([]backend.DirEntry, 0, len(infos))
	for _, fi := range infos {
		if validEntry(dir, fi.Name()) {
			entries = append(entries, toDirEntry(fi))
		}
	}
	return entries, nil
}

// walkConcurrency is how many directories a walk lists at once.
const walkConcurrency = 8

// Walk reports every entry below dir without following symlinks. It lists
// the tree level by level, the directories of one level concurrently, so
// a walk costs about one round trip per level of depth rather than one per
// directory. Within a level, directories are reported in name order.
func (f *FS) Walk(ctx context.Context, dir string, fn backend.WalkFunc) error {
	if err := checkPath("walk", dir); err != nil {
		return err
	}
	first, err := f.List(ctx, dir)
	if err != nil {
		return backend.PathError("walk", dir, err)
	}
	level := []listing{{dir: dir, entries: first}}
	for len(level) > 0 {
		var next []string
		for _, l := range level {
			backend.SortEntries(l.entries)
			for _, e := range l.entries {
				name := backend.Join(l.dir, e.Name)
				err := fn(name, e)
				if err == fs.SkipDir && e.IsDir() {
					continue
				}
				if err != nil {
					return err
				}
				if e.IsDir() {
					next = append(next, name)
				}
			}
		}
		if level, err = f.listLevel(ctx, next); err != nil {
			return err
		}
	}
	return nil
}

// listing is one directory's children during a walk.
type listing struct {
	dir     string
	entries []backend.DirEntry
}

// listLevel lists dirs concurrently, in their order. A directory removed
// since it was seen is skipped.
func (f *FS) listLevel(ctx context.Context, dirs []string) ([]listing, error) {
	out := make([]listing, len(dirs))
	errs := make([]error, len(dirs))
	sem := make(chan struct{}, walkConcurrency)
	var wg sync.WaitGroup
	for i, d := range dirs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			out[i].dir = d
			out[i].entries, errs[i] = f.listWalked(ctx, d)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, backend.PathError("walk", dirs[i], err)
		}
	}
	return out, nil
}

// listWalked lists a directory the walk found. Its ancestors were checked
// on the way down, so only the directory itself is checked again.
func (f *FS) listWalked(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	ctx, cancel := f.opContext(ctx)
	defer cancel()
	var entries []backend.DirEntry
	err := f.do(ctx, true, func(s *session) error {
		fi, err := s.client.Lstat(f.remote(dir))
		if err != nil {
			return err
		}
		if err := checkDir(fi); err != nil {
			return err
		}
		entries, err = f.readDir(s.client, dir)
		return err
	})
	return entries, mapErr(err)
}

// OpenRead opens the regular file name for reading. The file is checked
// with LSTAT before the open and with FSTAT after it; when the two
// disagree, the file was replaced in between and the open is retried a
// few times before it fails. The stream's Info is that FSTAT.
func (f *FS) OpenRead(ctx context.Context, name string) (backend.FileReader, error) {
	if err := checkPath("open", name); err != nil {
		return nil, err
	}
	if name == "." {
		return nil, backend.PathError("open", name, backend.ErrIsDir)
	}
	octx, cancel := f.opContext(ctx)
	defer cancel()
	var r *reader
	err := f.do(octx, true, func(s *session) error {
		file, fi, err := f.openChecked(s.client, name)
		if err != nil {
			return err
		}
		r = &reader{f: f, s: s, ctx: ctx, name: name, file: file, info: toFileInfo(name, fi)}
		return nil
	})
	if err != nil {
		return nil, pathErr("open", name, err)
	}
	return r, nil
}

// openChecked opens name after LSTAT says it is a regular file and checks
// with FSTAT that the opened file is that one, whose FSTAT it returns.
func (f *FS) openChecked(c *sftp.Client, name string) (*sftp.File, os.FileInfo, error) {
	for range openAttempts {
		before, err := f.lstatPath(c, name)
		if err != nil {
			return nil, nil, err
		}
		if err := checkRegular(before); err != nil {
			return nil, nil, err
		}
		file, err := c.Open(f.remote(name))
		if err != nil {
			return nil, nil, err
		}
		after, err := file.Stat()
		if err != nil {
			file.Close()
			return nil, nil, err
		}
		if sameFile(before, after) {
			return file, after, nil
		}
		file.Close()
		if err := checkRegular(after); err != nil {
			return nil, nil, errChanged
		}
	}
	return nil, nil, errChanged
}

// checkRegular refuses directories and everything that is not a regular
// file.
func checkRegular(fi os.FileInfo) error {
	switch {
	case fi.IsDir():
		return backend.ErrIsDir
	case !fi.Mode().IsRegular():
		return backend.ErrNotRegular
	}
	return nil
}

// sameFile reports whether two answers plausibly describe the same file:
// SFTP version 3 has no inode numbers, so type, mode, size and
// modification time stand in.
func sameFile(a, b os.FileInfo) bool {
	return a.Mode() == b.Mode() && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// reader streams an open file. Each read runs under the context given to
// OpenRead, so a read that waits on an unresponsive server ends with it.
type reader struct {
	f    *FS
	s    *session
	ctx  context.Context
	name string
	file *sftp.File
	info backend.FileInfo
	once sync.Once
}

// Info describes the opened file.
func (r *reader) Info() backend.FileInfo { return r.info }

// Read reads from the file, within the FS's OpTimeout.
func (r *reader) Read(p []byte) (int, error) {
	ctx, cancel := r.f.opContext(r.ctx)
	defer cancel()
	var n int
	err := r.guard(ctx, func() error {
		var err error
		n, err = r.file.Read(p)
		return err
	})
	return n, err
}

// WriteTo copies the rest of the file to w with reads in flight
// concurrently, which io.Copy uses. The FS's OpTimeout applies to the
// copy as an idle timeout: it fails when no data arrives for that long.
func (r *reader) WriteTo(w io.Writer) (int64, error) {
	ctx, cancel := context.WithCancelCause(r.ctx)
	defer cancel(nil)
	if r.f.opTO > 0 {
		idle := time.AfterFunc(r.f.opTO, func() { cancel(context.DeadlineExceeded) })
		defer idle.Stop()
		w = &progressWriter{w: w, progress: func() { idle.Reset(r.f.opTO) }}
	}
	var n int64
	err := r.guard(ctx, func() error {
		var err error
		n, err = r.file.WriteTo(w)
		return err
	})
	return n, err
}

// progressWriter reports every write that moved data.
type progressWriter struct {
	w        io.Writer
	progress func()
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	if n > 0 {
		p.progress()
	}
	return n, err
}

// guard runs one stream operation under ctx and maps its error.
func (r *reader) guard(ctx context.Context, op func() error) error {
	err := r.s.run(ctx, func(*session) error { return op() })
	if err == nil || err == io.EOF {
		return err
	}
	if isTransportErr(err) {
		r.f.drop(r.s)
	}
	return pathErr("read", r.name, err)
}

// Close releases the server's handle. When the stream's context has ended,
// the release gets a short time of its own.
func (r *reader) Close() error {
	var err error
	r.once.Do(func() {
		if !r.s.alive() {
			return
		}
		ctx, cancel := cleanupContext(r.ctx)
		defer cancel()
		err = r.s.run(ctx, func(*session) error { return r.file.Close() })
		if err != nil && isTransportErr(err) {
			r.f.drop(r.s)
		}
		err = pathErr("close", r.name, err)
	})
	return err
}

// cleanupContext returns ctx, or, when ctx has ended, a context that still
// allows a short clean-up.
func cleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Err() == nil {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
}
