package aferoadapter

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sync"
	"time"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/backend"
)

// ToAfero presents b as an afero.Fs, for code written against afero.
// Every call uses ctx.
//
// Paths may be absolute ("/a/b", from the backend's root) or relative
// (from the root too); they are normalized with backend.CleanVirtual, so
// "..", "~" and the other spellings the backends refuse are refused. Like
// os, Open, Stat and writes follow symlinks when b resolves them, while
// LstatIfPossible does not.
//
// Reads stream from b. A file opened for writing is buffered in memory
// and written through b's Writer when it is closed, atomically: until
// Close returns, other opens of the path see the old content (or none),
// which is how fencefs keeps every write whole, and what afero's own tests
// that expect writes to show before Close do not allow for. Close reports
// the commit's error; Sync does not write. Opening an existing file for
// writing without O_TRUNC loads its content and commits only if the file
// still holds that content.
// Remove, RemoveAll and Rename use backend.Remove, backend.RemoveAll and
// backend.Rename (a backend without them answers errors.ErrUnsupported);
// unlike os.Rename, Rename does not replace an existing directory. Chmod,
// chown and chtimes are not supported: they return errors wrapping
// errors.ErrUnsupported.
func ToAfero(ctx context.Context, b backend.Backend) afero.Fs {
	return &view{ctx: ctx, b: b}
}

// view is the afero.Fs returned by ToAfero.
type view struct {
	ctx context.Context
	b   backend.Backend
}

var (
	_ afero.Fs         = (*view)(nil)
	_ afero.Lstater    = (*view)(nil)
	_ afero.LinkReader = (*view)(nil)
)

// errWriteOnly and errReadOnlyHandle reject I/O the open mode forbids.
var (
	errWriteOnly      = errors.New("file is not open for reading")
	errReadOnlyHandle = errors.New("file is not open for writing")
)

func (v *view) Name() string { return "fencefs" }

// storage turns an afero path into a storage path, lexically.
func (v *view) storage(op, name string) (string, error) {
	p, err := backend.CleanVirtual(name, "/")
	if err != nil {
		return "", backend.PathError(op, name, err)
	}
	return backend.VirtualToStorage(p), nil
}

// follow turns an afero path into the storage path it leads to.
func (v *view) follow(op, name string) (string, error) {
	p, err := v.storage(op, name)
	if err != nil {
		return "", err
	}
	if p != "." {
		if p, err = backend.ResolveSymlinks(v.ctx, v.b, p); err != nil {
			return "", backend.PathError(op, name, err)
		}
	}
	return p, nil
}

// Stat returns the metadata of name, following symlinks.
func (v *view) Stat(name string) (os.FileInfo, error) {
	p, err := v.follow("stat", name)
	if err != nil {
		return nil, err
	}
	return v.stat("stat", name, p)
}

func (v *view) stat(op, name, p string) (os.FileInfo, error) {
	fi, err := backend.Stat(v.ctx, v.b, p)
	if err != nil {
		return nil, backend.PathError(op, name, err)
	}
	return fileInfo{fi: fi, name: path.Base(name)}, nil
}

// LstatIfPossible returns the metadata of name without following a final
// symlink.
func (v *view) LstatIfPossible(name string) (os.FileInfo, bool, error) {
	p, err := v.storage("lstat", name)
	if err != nil {
		return nil, true, err
	}
	fi, err := v.stat("lstat", name, p)
	return fi, true, err
}

// ReadlinkIfPossible returns the target of the symlink name.
func (v *view) ReadlinkIfPossible(name string) (string, error) {
	p, err := v.storage("readlink", name)
	if err != nil {
		return "", err
	}
	target, err := backend.Readlink(v.ctx, v.b, p)
	if errors.Is(err, backend.ErrUnsupported) {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: afero.ErrNoReadlink}
	}
	return target, backend.PathError("readlink", name, err)
}

// Open opens name for reading.
func (v *view) Open(name string) (afero.File, error) {
	p, err := v.follow("open", name)
	if err != nil {
		return nil, err
	}
	info, err := v.stat("open", name, p)
	if err != nil {
		return nil, err
	}
	if info.IsDir() {
		return &dirHandle{handle: handle{name: name}, v: v, p: p, info: info}, nil
	}
	r, err := v.b.OpenRead(v.ctx, p)
	if err != nil {
		return nil, backend.PathError("open", name, err)
	}
	return &readHandle{handle: handle{name: name}, v: v, p: p, info: info, r: r}, nil
}

// Create creates or truncates name for writing.
func (v *view) Create(name string) (afero.File, error) {
	return v.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

// OpenFile opens name with os-style flags. perm is ignored: the backend
// gives new files its normal permissions.
func (v *view) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR) == 0 {
		if flag&os.O_CREATE != 0 {
			if err := v.createEmpty(name, flag&os.O_EXCL != 0); err != nil {
				return nil, err
			}
		}
		return v.Open(name)
	}
	return v.openWrite(name, flag)
}

// createEmpty creates name as an empty file unless something exists;
// with excl, something existing is an error wrapping fs.ErrExist, as
// os.OpenFile's O_EXCL makes it.
func (v *view) createEmpty(name string, excl bool) error {
	p, err := v.follow("open", name)
	if err != nil {
		return err
	}
	err = backend.WriteFile(v.ctx, v.b, p, nil, backend.WriteOptions{Precondition: backend.Precondition{CreateOnly: true}})
	if excl && errors.Is(err, backend.ErrIsDir) {
		return &fs.PathError{Op: "open", Path: name, Err: fs.ErrExist}
	}
	if err != nil && (excl || !errors.Is(err, fs.ErrExist)) {
		return backend.PathError("open", name, err)
	}
	return nil
}

func (v *view) openWrite(name string, flag int) (afero.File, error) {
	const op = "open"
	p, err := v.follow(op, name)
	if err != nil {
		return nil, err
	}
	fi, err := backend.Stat(v.ctx, v.b, p)
	exists := err == nil
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, backend.PathError(op, name, err)
	case exists && flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrExist}
	case exists && fi.IsDir():
		return nil, &fs.PathError{Op: op, Path: name, Err: backend.ErrIsDir}
	case !exists && flag&os.O_CREATE == 0:
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	var pre backend.Precondition
	var content []byte
	switch {
	case flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		pre.CreateOnly = true
	case exists && flag&os.O_TRUNC == 0:
		// Keep the old content, and do not overwrite a newer one.
		if content, err = backend.ReadFile(v.ctx, v.b, p); err != nil {
			return nil, backend.PathError(op, name, err)
		}
		sum := sha256.Sum256(content)
		pre.MatchHash = hex.EncodeToString(sum[:])
	}
	fw, err := backend.OpenWrite(v.ctx, v.b, p, backend.WriteOptions{Precondition: pre})
	if err != nil {
		return nil, backend.PathError(op, name, err)
	}
	h := &writeHandle{
		handle:   handle{name: name},
		fw:       fw,
		buf:      content,
		append:   flag&os.O_APPEND != 0,
		readable: flag&os.O_RDWR != 0,
		mode:     fi.Mode,
	}
	if !exists {
		h.mode = 0o644
	}
	return h, nil
}

// Mkdir creates the directory name; its parent must exist.
func (v *view) Mkdir(name string, perm os.FileMode) error {
	const op = "mkdir"
	p, err := v.follow(op, name)
	if err != nil {
		return err
	}
	if p == "." {
		return &fs.PathError{Op: op, Path: name, Err: fs.ErrExist}
	}
	if _, err := backend.Stat(v.ctx, v.b, p); err == nil {
		return &fs.PathError{Op: op, Path: name, Err: fs.ErrExist}
	}
	dir, _ := backend.Split(p)
	parent, err := backend.Stat(v.ctx, v.b, dir)
	if err != nil {
		return backend.PathError(op, name, err)
	}
	if !parent.IsDir() {
		return &fs.PathError{Op: op, Path: name, Err: backend.ErrNotDir}
	}
	return backend.PathError(op, name, backend.MkdirAll(v.ctx, v.b, p))
}

// MkdirAll creates the directory name and its missing parents.
func (v *view) MkdirAll(name string, perm os.FileMode) error {
	p, err := v.follow("mkdir", name)
	if err != nil {
		return err
	}
	return backend.PathError("mkdir", name, backend.MkdirAll(v.ctx, v.b, p))
}

// unsupported is the error of operations backends do not offer.
func unsupported(op, name string) error {
	return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: fencefs backends cannot %s", errors.ErrUnsupported, op)}
}

// Chmod is not supported.
func (v *view) Chmod(name string, mode os.FileMode) error { return unsupported("chmod", name) }

// Chown is not supported.
func (v *view) Chown(name string, uid, gid int) error { return unsupported("chown", name) }

// Chtimes is not supported.
func (v *view) Chtimes(name string, atime, mtime time.Time) error {
	return unsupported("chtimes", name)
}

// fileInfo adapts backend.FileInfo to os.FileInfo.
type fileInfo struct {
	fi   backend.FileInfo
	name string
}

func (i fileInfo) Name() string       { return i.name }
func (i fileInfo) Size() int64        { return i.fi.Size }
func (i fileInfo) Mode() fs.FileMode  { return i.fi.Mode }
func (i fileInfo) ModTime() time.Time { return i.fi.ModTime }
func (i fileInfo) IsDir() bool        { return i.fi.IsDir() }
func (i fileInfo) Sys() any           { return nil }

// handle holds what every open file refuses, so the three kinds of
// handle only implement what they support.
type handle struct {
	name   string
	closed bool
}

func (h *handle) Name() string { return h.name }
func (h *handle) Sync() error  { return nil }

func (h *handle) err(op string, err error) error {
	return &fs.PathError{Op: op, Path: h.name, Err: err}
}

func (h *handle) check(op string) error {
	if h.closed {
		return h.err(op, afero.ErrFileClosed)
	}
	return nil
}

// readHandle is a file open for reading. It streams from the backend
// until a Seek or ReadAt needs random access, and then reads the whole
// file once.
type readHandle struct {
	handle
	v    *view
	p    string
	info os.FileInfo
	r    io.ReadCloser
	data *bytes.Reader // the whole content, once random access was needed
	pos  int64         // bytes read from r
}

func (f *readHandle) Stat() (os.FileInfo, error) { return f.info, f.check("stat") }

func (f *readHandle) Read(p []byte) (int, error) {
	if err := f.check("read"); err != nil {
		return 0, err
	}
	if len(p) == 0 {
		// As os.File: an empty read reports nothing, not even the end.
		return 0, nil
	}
	if f.data != nil {
		return f.data.Read(p)
	}
	n, err := f.r.Read(p)
	f.pos += int64(n)
	switch {
	case err == io.EOF && n > 0:
		// As os.File: bytes, then the end on the next read.
		err = nil
	case err != nil && err != io.EOF:
		err = backend.PathError("read", f.name, err)
	}
	return n, err
}

// load switches to the whole content, at the current position.
func (f *readHandle) load() error {
	if f.data != nil {
		return nil
	}
	data, err := backend.ReadFile(f.v.ctx, f.v.b, f.p)
	if err != nil {
		return backend.PathError("read", f.name, err)
	}
	f.r.Close()
	f.data = bytes.NewReader(data)
	_, err = f.data.Seek(f.pos, io.SeekStart)
	return err
}

func (f *readHandle) ReadAt(p []byte, off int64) (int, error) {
	if err := f.check("read"); err != nil {
		return 0, err
	}
	if len(p) == 0 && off >= 0 {
		return 0, nil
	}
	if err := f.load(); err != nil {
		return 0, err
	}
	return f.data.ReadAt(p, off)
}

func (f *readHandle) Seek(offset int64, whence int) (int64, error) {
	if err := f.check("seek"); err != nil {
		return 0, err
	}
	if whence == io.SeekCurrent && offset == 0 && f.data == nil {
		return f.pos, nil
	}
	if err := f.load(); err != nil {
		return 0, err
	}
	n, err := f.data.Seek(offset, whence)
	if err != nil {
		return n, f.err("seek", err)
	}
	return n, nil
}

func (f *readHandle) Write([]byte) (int, error) { return 0, f.err("write", errReadOnlyHandle) }
func (f *readHandle) WriteAt([]byte, int64) (int, error) {
	return 0, f.err("write", errReadOnlyHandle)
}
func (f *readHandle) WriteString(string) (int, error) { return 0, f.err("write", errReadOnlyHandle) }
func (f *readHandle) Truncate(int64) error            { return f.err("truncate", errReadOnlyHandle) }
func (f *readHandle) Readdir(int) ([]os.FileInfo, error) {
	return nil, f.err("readdir", backend.ErrNotDir)
}
func (f *readHandle) Readdirnames(int) ([]string, error) {
	return nil, f.err("readdir", backend.ErrNotDir)
}

func (f *readHandle) Close() error {
	if err := f.check("close"); err != nil {
		return err
	}
	f.closed = true
	if f.data != nil {
		return nil
	}
	return backend.PathError("close", f.name, f.r.Close())
}

// dirHandle is an open directory.
type dirHandle struct {
	handle
	v       *view
	p       string
	info    os.FileInfo
	entries []os.FileInfo
	listed  bool
}

func (d *dirHandle) Stat() (os.FileInfo, error) { return d.info, d.check("stat") }

// list fetches the listing once, sorted.
func (d *dirHandle) list() error {
	if d.listed {
		return nil
	}
	entries, err := d.v.b.List(d.v.ctx, d.p)
	if err != nil {
		return backend.PathError("readdir", d.name, err)
	}
	backend.SortEntries(entries)
	d.entries = make([]os.FileInfo, len(entries))
	for i, e := range entries {
		d.entries[i] = &entryInfo{v: d.v, p: backend.Join(d.p, e.Name), e: e}
	}
	d.listed = true
	return nil
}

// entryInfo describes a listed entry. Its name and type come from the
// listing; the rest comes from a Stat on first use, as os does, since
// listings carry no permission bits. Callers that only walk names pay no
// extra request per entry.
type entryInfo struct {
	v    *view
	p    string
	e    backend.DirEntry
	once sync.Once
	fi   backend.FileInfo
}

func (i *entryInfo) stat() backend.FileInfo {
	i.once.Do(func() {
		fi, err := backend.Stat(i.v.ctx, i.v.b, i.p)
		if err != nil || fi.Mode.Type() != i.e.Type.Type() {
			// Gone or replaced since the listing: keep what was listed.
			fi = i.e.Info()
		}
		i.fi = fi
	})
	return i.fi
}

func (i *entryInfo) Name() string       { return i.e.Name }
func (i *entryInfo) IsDir() bool        { return i.e.IsDir() }
func (i *entryInfo) Size() int64        { return i.stat().Size }
func (i *entryInfo) Mode() fs.FileMode  { return i.stat().Mode }
func (i *entryInfo) ModTime() time.Time { return i.stat().ModTime }
func (i *entryInfo) Sys() any           { return nil }

// Readdir follows os.File.Readdir: count <= 0 returns all that is left,
// count > 0 at most count entries and io.EOF once none are left.
func (d *dirHandle) Readdir(count int) ([]os.FileInfo, error) {
	if err := d.check("readdir"); err != nil {
		return nil, err
	}
	if err := d.list(); err != nil {
		return nil, err
	}
	if count <= 0 {
		out := d.entries
		d.entries = nil
		return out, nil
	}
	if len(d.entries) == 0 {
		return nil, io.EOF
	}
	count = min(count, len(d.entries))
	out := d.entries[:count:count]
	d.entries = d.entries[count:]
	return out, nil
}

// ReadDir reads the directory as fs.ReadDirFile does, so that io/fs
// callers (afero.NewIOFS among them) use the listing's entries directly.
func (d *dirHandle) ReadDir(n int) ([]fs.DirEntry, error) {
	infos, err := d.Readdir(n)
	entries := make([]fs.DirEntry, len(infos))
	for i, fi := range infos {
		entries[i] = fs.FileInfoToDirEntry(fi)
	}
	return entries, err
}

func (d *dirHandle) Readdirnames(n int) ([]string, error) {
	infos, err := d.Readdir(n)
	names := make([]string, len(infos))
	for i, fi := range infos {
		names[i] = fi.Name()
	}
	return names, err
}

func (d *dirHandle) Read([]byte) (int, error)          { return 0, d.err("read", backend.ErrIsDir) }
func (d *dirHandle) ReadAt([]byte, int64) (int, error) { return 0, d.err("read", backend.ErrIsDir) }
func (d *dirHandle) Seek(int64, int) (int64, error)    { return 0, d.err("seek", backend.ErrIsDir) }
func (d *dirHandle) Write([]byte) (int, error)         { return 0, d.err("write", backend.ErrIsDir) }
func (d *dirHandle) WriteAt([]byte, int64) (int, error) {
	return 0, d.err("write", backend.ErrIsDir)
}
func (d *dirHandle) WriteString(string) (int, error) { return 0, d.err("write", backend.ErrIsDir) }
func (d *dirHandle) Truncate(int64) error            { return d.err("truncate", backend.ErrIsDir) }

func (d *dirHandle) Close() error {
	if err := d.check("close"); err != nil {
		return err
	}
	d.closed = true
	return nil
}

// writeHandle is a file open for writing: an in-memory buffer committed
// through a backend FileWriter on Close.
type writeHandle struct {
	handle
	fw       backend.FileWriter
	buf      []byte
	pos      int64
	append   bool
	readable bool
	mode     fs.FileMode
}

func (w *writeHandle) Stat() (os.FileInfo, error) {
	fi := backend.FileInfo{Name: path.Base(w.name), Size: int64(len(w.buf)), Mode: w.mode, ModTime: time.Now()}
	return fileInfo{fi: fi, name: fi.Name}, w.check("stat")
}

func (w *writeHandle) Write(p []byte) (int, error) {
	if err := w.check("write"); err != nil {
		return 0, err
	}
	if w.append {
		w.pos = int64(len(w.buf))
	}
	n := w.writeAt(p, w.pos)
	w.pos += int64(n)
	return n, nil
}

func (w *writeHandle) writeAt(p []byte, off int64) int {
	if end := off + int64(len(p)); end > int64(len(w.buf)) {
		w.buf = append(w.buf, make([]byte, end-int64(len(w.buf)))...)
	}
	return copy(w.buf[off:], p)
}

func (w *writeHandle) WriteAt(p []byte, off int64) (int, error) {
	if err := w.check("write"); err != nil {
		return 0, err
	}
	if w.append {
		return 0, w.err("write", errors.New("WriteAt on a file opened with O_APPEND"))
	}
	if off < 0 {
		return 0, w.err("write", fs.ErrInvalid)
	}
	return w.writeAt(p, off), nil
}

func (w *writeHandle) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

func (w *writeHandle) Read(p []byte) (int, error) {
	n, err := w.ReadAt(p, w.pos)
	w.pos += int64(n)
	if err == io.EOF && n > 0 {
		// As os.File: ReadAt reports the end with the last bytes, Read on
		// the next call.
		err = nil
	}
	return n, err
}

func (w *writeHandle) ReadAt(p []byte, off int64) (int, error) {
	if err := w.check("read"); err != nil {
		return 0, err
	}
	if !w.readable {
		return 0, w.err("read", errWriteOnly)
	}
	if off < 0 {
		return 0, w.err("read", fs.ErrInvalid)
	}
	if len(p) == 0 {
		// As os.File and MemMapFs: an empty read reports nothing, not even
		// the end.
		return 0, nil
	}
	if off >= int64(len(w.buf)) {
		return 0, io.EOF
	}
	n := copy(p, w.buf[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (w *writeHandle) Seek(offset int64, whence int) (int64, error) {
	if err := w.check("seek"); err != nil {
		return 0, err
	}
	switch whence {
	case io.SeekCurrent:
		offset += w.pos
	case io.SeekEnd:
		offset += int64(len(w.buf))
	}
	if offset < 0 {
		return 0, w.err("seek", fs.ErrInvalid)
	}
	w.pos = offset
	return offset, nil
}

func (w *writeHandle) Truncate(size int64) error {
	if err := w.check("truncate"); err != nil {
		return err
	}
	if size < 0 {
		return w.err("truncate", fs.ErrInvalid)
	}
	if size <= int64(len(w.buf)) {
		w.buf = w.buf[:size]
	} else {
		w.buf = append(w.buf, make([]byte, size-int64(len(w.buf)))...)
	}
	return nil
}

func (w *writeHandle) Readdir(int) ([]os.FileInfo, error) {
	return nil, w.err("readdir", backend.ErrNotDir)
}
func (w *writeHandle) Readdirnames(int) ([]string, error) {
	return nil, w.err("readdir", backend.ErrNotDir)
}

// Close writes the buffer and commits it.
func (w *writeHandle) Close() error {
	if err := w.check("close"); err != nil {
		return err
	}
	w.closed = true
	defer w.fw.Close()
	if _, err := w.fw.Write(w.buf); err != nil {
		return backend.PathError("close", w.name, err)
	}
	return backend.PathError("close", w.name, w.fw.Commit())
}
