package backend

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path"
	"time"
)

// FS returns a read-only io/fs view of b. Every call made through the view
// uses ctx, so the view lives as long as the request or task that owns ctx.
func FS(ctx context.Context, b Backend) *IOFS {
	return &IOFS{ctx: ctx, b: b}
}

// IOFS is an io/fs view of a [Backend], returned by [FS]. It implements
// fs.FS, fs.ReadDirFS, fs.StatFS, fs.ReadFileFS and fs.ReadLinkFS, so it
// can be handed to fs.WalkDir, fs.Glob, fs.Sub, template parsers or
// testing/fstest.
//
// Names follow io/fs rules (fs.ValidPath) and are storage paths of the
// backend. As with os.DirFS, Open, Stat, ReadDir and ReadFile follow
// symbolic links when the backend resolves them ([SymlinkResolver]),
// while directory entries and Lstat describe links as links. Errors are
// *fs.PathError values naming the path as given, wrapping the backend's
// sentinels.
//
// The view holds only what lies inside the root. A symlink that leads
// outside it, whether its target is absolute or relative, directly or
// through other links, is left out of directory listings, and every call
// naming it (Open, Stat, Lstat, ReadLink, ReadFile) fails with
// [ErrOutside]. So fs.WalkDir never meets such a link, and os.CopyFS of
// the view completes with a copy of everything inside the root, leaving
// those links out; the copy never gains a link to outside itself.
type IOFS struct {
	ctx context.Context
	b   Backend
}

// resolve validates name and follows its symlinks, giving the storage path
// to operate on.
func (f *IOFS) resolve(op, name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if name == "." {
		return name, nil
	}
	target, err := ResolveSymlinks(f.ctx, f.b, name)
	if err != nil {
		return "", PathError(op, name, err)
	}
	return target, nil
}

// Open opens name: a directory gives an fs.ReadDirFile, anything else is
// opened for reading through the backend's OpenRead.
func (f *IOFS) Open(name string) (fs.File, error) {
	target, err := f.resolve("open", name)
	if err != nil {
		return nil, err
	}
	fi, err := Stat(f.ctx, f.b, target)
	if err != nil {
		return nil, PathError("open", name, err)
	}
	info := fileInfo{fi: fi, name: path.Base(name)}
	if fi.IsDir() {
		return &dirFile{fsys: f, name: name, target: target, info: info}, nil
	}
	r, err := f.b.OpenRead(f.ctx, target)
	if err != nil {
		return nil, PathError("open", name, err)
	}
	return &file{r: r, name: name, info: info}, nil
}

// Stat returns the metadata of name, following symlinks.
func (f *IOFS) Stat(name string) (fs.FileInfo, error) {
	target, err := f.resolve("stat", name)
	if err != nil {
		return nil, err
	}
	fi, err := Stat(f.ctx, f.b, target)
	if err != nil {
		return nil, PathError("stat", name, err)
	}
	return fileInfo{fi: fi, name: path.Base(name)}, nil
}

// ReadDir lists the directory name, sorted by file name.
func (f *IOFS) ReadDir(name string) ([]fs.DirEntry, error) {
	target, err := f.resolve("readdir", name)
	if err != nil {
		return nil, err
	}
	return f.readDir(name, target)
}

func (f *IOFS) readDir(name, target string) ([]fs.DirEntry, error) {
	entries, err := f.b.List(f.ctx, target)
	if err != nil {
		return nil, PathError("readdir", name, err)
	}
	SortEntries(entries)
	out := make([]fs.DirEntry, 0, len(entries))
	for _, e := range entries {
		if e.Type&fs.ModeSymlink != 0 {
			outside, err := f.leadsOutside(Join(target, e.Name))
			if err != nil {
				return nil, PathError("readdir", name, err)
			}
			if outside {
				continue
			}
		}
		out = append(out, dirEntry{fsys: f, dir: target, e: e})
	}
	return out, nil
}

// leadsOutside reports whether the symlink at the storage path link
// resolves outside the root. Other failures to resolve it (a loop, a
// dangling target) leave it in the view, as a link.
func (f *IOFS) leadsOutside(link string) (bool, error) {
	_, err := ResolveSymlinks(f.ctx, f.b, link)
	switch {
	case err == nil:
		return false, nil
	case errors.Is(err, ErrOutside):
		return true, nil
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, ErrLoop), errors.Is(err, ErrNotDir):
		return false, nil
	default:
		return false, err
	}
}

// refuseOutside fails with ErrOutside when the entry at the storage path
// target, described by fi, is a symlink leading outside the root.
func (f *IOFS) refuseOutside(op, name, target string, fi FileInfo) error {
	if fi.Mode&fs.ModeSymlink == 0 {
		return nil
	}
	outside, err := f.leadsOutside(target)
	if err != nil {
		return PathError(op, name, err)
	}
	if outside {
		return &fs.PathError{Op: op, Path: name, Err: ErrOutside}
	}
	return nil
}

// ReadFile reads the whole file name.
func (f *IOFS) ReadFile(name string) ([]byte, error) {
	target, err := f.resolve("read", name)
	if err != nil {
		return nil, err
	}
	data, err := ReadFile(f.ctx, f.b, target)
	if err != nil {
		return nil, PathError("read", name, err)
	}
	return data, nil
}

// Lstat returns the metadata of name without following a final symlink;
// links in the directories above it are followed, as with os.Lstat.
func (f *IOFS) Lstat(name string) (fs.FileInfo, error) {
	target, err := f.resolveParent("lstat", name)
	if err != nil {
		return nil, err
	}
	fi, err := Stat(f.ctx, f.b, target)
	if err != nil {
		return nil, PathError("lstat", name, err)
	}
	if err := f.refuseOutside("lstat", name, target, fi); err != nil {
		return nil, err
	}
	return fileInfo{fi: fi, name: path.Base(name)}, nil
}

// ReadLink returns the target of the symlink name relative to the link's
// own directory, as a relative link on disk reads, so that a copy of the
// view (os.CopyFS) keeps every link pointing where it did. A relative
// target comes back as stored; an absolute one inside the root, which the
// backend reports relative to the root (see [SymlinkResolver.Readlink]),
// is rewritten. A link leading outside the root, absolute or relative,
// gives an error wrapping [ErrOutside], and anything but a symlink one
// wrapping fs.ErrInvalid.
func (f *IOFS) ReadLink(name string) (string, error) {
	target, err := f.resolveParent("readlink", name)
	if err != nil {
		return "", err
	}
	link, err := Readlink(f.ctx, f.b, target)
	if !declined(err) {
		if err != nil {
			return "", PathError("readlink", name, err)
		}
		outside, err := f.leadsOutside(target)
		if err != nil {
			return "", PathError("readlink", name, err)
		}
		if outside {
			return "", &fs.PathError{Op: "readlink", Path: name, Err: ErrOutside}
		}
		return f.fromLinkDir(target, link), nil
	}
	if _, err := Stat(f.ctx, f.b, target); err != nil {
		return "", PathError("readlink", name, err)
	}
	return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
}

// fromLinkDir turns link, the target of the symlink at the storage path
// name as Readlink reports it, into a path relative to name's directory.
// Readlink gives a stored relative target unchanged and an absolute one
// relative to the root, so the text alone is ambiguous: the reading that
// leads where the link itself leads is the right one.
func (f *IOFS) fromLinkDir(name, link string) string {
	dir, _ := Split(name)
	if dir == "." || path.IsAbs(link) {
		return link
	}
	final, err := ResolveSymlinks(f.ctx, f.b, name)
	if err != nil {
		return link // a loop or an escape: nothing better to say
	}
	if asStored := path.Join(dir, link); ValidPath(asStored) {
		if via, err := ResolveSymlinks(f.ctx, f.b, asStored); err == nil && via == final {
			return link
		}
	}
	if !ValidPath(link) {
		return link
	}
	return Rel(dir, link)
}

// resolveParent validates name and follows the symlinks of its parent
// directories only.
func (f *IOFS) resolveParent(op, name string) (string, error) {
	if name == "." {
		return name, nil
	}
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	dir, base := Split(name)
	parent, err := f.resolve(op, dir)
	if err != nil {
		return "", PathError(op, name, err)
	}
	return Join(parent, base), nil
}

// fileInfo adapts FileInfo to fs.FileInfo, naming the path as opened
// rather than a symlink's target.
type fileInfo struct {
	fi   FileInfo
	name string
}

func (i fileInfo) Name() string       { return i.name }
func (i fileInfo) Size() int64        { return i.fi.Size }
func (i fileInfo) Mode() fs.FileMode  { return i.fi.Mode }
func (i fileInfo) ModTime() time.Time { return i.fi.ModTime }
func (i fileInfo) IsDir() bool        { return i.fi.IsDir() }
func (i fileInfo) Sys() any           { return nil }

// dirEntry adapts DirEntry to fs.DirEntry. Info stats the entry (without
// following a link), as os does, because listings carry no permission bits.
type dirEntry struct {
	fsys *IOFS
	dir  string
	e    DirEntry
}

func (d dirEntry) Name() string      { return d.e.Name }
func (d dirEntry) IsDir() bool       { return d.e.IsDir() }
func (d dirEntry) Type() fs.FileMode { return d.e.Type.Type() }
func (d dirEntry) String() string    { return fs.FormatDirEntry(d) }

func (d dirEntry) Info() (fs.FileInfo, error) {
	name := Join(d.dir, d.e.Name)
	fi, err := Stat(d.fsys.ctx, d.fsys.b, name)
	if err != nil {
		return nil, PathError("stat", name, err)
	}
	return fileInfo{fi: fi, name: d.e.Name}, nil
}

// file is an open regular file.
type file struct {
	r      io.ReadCloser
	name   string
	info   fileInfo
	closed bool
}

func (f *file) Stat() (fs.FileInfo, error) { return f.info, nil }

func (f *file) Read(p []byte) (int, error) {
	if f.closed {
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: fs.ErrClosed}
	}
	n, err := f.r.Read(p)
	if err != nil && err != io.EOF {
		err = PathError("read", f.name, err)
	}
	return n, err
}

func (f *file) Close() error {
	if f.closed {
		return &fs.PathError{Op: "close", Path: f.name, Err: fs.ErrClosed}
	}
	f.closed = true
	return PathError("close", f.name, f.r.Close())
}

// dirFile is an open directory; its listing is fetched on the first
// ReadDir and then handed out in order.
type dirFile struct {
	fsys    *IOFS
	name    string
	target  string
	info    fileInfo
	entries []fs.DirEntry
	listed  bool
	closed  bool
}

func (d *dirFile) Stat() (fs.FileInfo, error) { return d.info, nil }

func (d *dirFile) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.name, Err: ErrIsDir}
}

func (d *dirFile) Close() error {
	if d.closed {
		return &fs.PathError{Op: "close", Path: d.name, Err: fs.ErrClosed}
	}
	d.closed = true
	return nil
}

// ReadDir follows fs.ReadDirFile: n <= 0 returns everything left (and a
// nil error), n > 0 at most n entries and io.EOF once none are left.
func (d *dirFile) ReadDir(n int) ([]fs.DirEntry, error) {
	if d.closed {
		return nil, &fs.PathError{Op: "readdir", Path: d.name, Err: fs.ErrClosed}
	}
	if !d.listed {
		entries, err := d.fsys.readDir(d.name, d.target)
		if err != nil {
			return nil, err
		}
		d.entries, d.listed = entries, true
	}
	if n <= 0 {
		out := d.entries
		d.entries = nil
		return out, nil
	}
	if len(d.entries) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(d.entries))
	out := d.entries[:n:n]
	d.entries = d.entries[n:]
	return out, nil
}

// Interface checks.
var (
	_ fs.FS          = (*IOFS)(nil)
	_ fs.ReadDirFS   = (*IOFS)(nil)
	_ fs.StatFS      = (*IOFS)(nil)
	_ fs.ReadFileFS  = (*IOFS)(nil)
	_ fs.ReadLinkFS  = (*IOFS)(nil)
	_ fs.ReadDirFile = (*dirFile)(nil)
)
