//go:build linux

package local

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/fencefs/fencefs/backend"
)

// maxNameBytes is the longest single name component Linux file systems take.
const maxNameBytes = 255

// maxPathBytes is the longest path the kernel accepts in one call
// (PATH_MAX less the terminating NUL).
const maxPathBytes = unix.PathMax - 1

// FS is a backend over a directory of the local disk. It is safe for
// concurrent use. Storage paths name files below the root; host paths never
// appear in its errors.
type FS struct {
	root string // the cleaned absolute host path of the root, as given
	// realRoot is root with its symlinks resolved (equal to root without
	// any), found on the first host path to map (realRootOnce): few
	// roots ever map one, and every root would pay for it at New.
	realRoot     string
	realRootOnce sync.Once

	id       dirKey // the root directory's device and inode
	fallback bool   // open with os.Root, the kernel has no openat2

	// The open root and its uses, guarded by roots.mu (see rootpool.go).
	// A root stays open while a call uses it (its descriptor number
	// could otherwise be reused by an unrelated directory under the
	// call) and afterwards while the pool keeps it.
	h          *rootHandle // nil while the root is not open
	users      int         // calls using h
	idle       bool        // h is open, unused and on the pool's idle list
	prev, next *FS         // neighbours on the idle list
	closed     bool

	// direntBufs holds ListTypes's getdents buffers (*[]byte) between calls.
	direntBufs sync.Pool

	// logs are the files OpenLog opened and not yet closed: Close closes
	// them. logsClosed is set by Close, after which OpenLog fails.
	logsMu     sync.Mutex
	logs       map[*logFile]struct{}
	logsClosed bool
}

// Compile-time checks that FS implements the contracts it promises.
var (
	_ backend.Backend            = (*FS)(nil)
	_ backend.Stater             = (*FS)(nil)
	_ backend.Writer             = (*FS)(nil)
	_ backend.DirMaker           = (*FS)(nil)
	_ backend.SymlinkResolver    = (*FS)(nil)
	_ backend.Walker             = (*FS)(nil)
	_ backend.LocalPather        = (*FS)(nil)
	_ backend.HostPathMapper     = (*FS)(nil)
	_ backend.CapabilityReporter = (*FS)(nil)
	_ backend.LogOpener          = (*FS)(nil)
)

// New opens the existing directory root as the root of a backend; an
// empty root is refused. The backend holds no descriptor of its own while
// no call runs: the root is held open by a pool the process shares,
// bounded by its descriptor limit, and reopened by its path when the pool
// gave it back. Renaming or replacing the path root afterwards never moves
// the backend: a reopened root must be the directory New opened, or calls
// fail. Close releases it.
func New(root string) (*FS, error) {
	return newFS(root, false)
}

// newFS is New, with the os.Root fallback forced when forceRoot is set so
// that tests run it on kernels that have openat2.
func newFS(root string, forceRoot bool) (*FS, error) {
	if root == "" {
		// Abs would turn "" into the working directory, rarely what was meant.
		return nil, &fs.PathError{Op: "open", Path: root, Err: fs.ErrInvalid}
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: root, Err: err}
	}
	fd, err := unix.Open(abs, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if isDescriptorLimit(err) && roots.shed() > 0 {
		// As for a call: idle roots give their descriptors back.
		fd, err = unix.Open(abs, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: root, Err: mapErrno(err)}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: root, Err: mapErrno(err)}
	}
	f := &FS{root: abs, id: dirKey{uint64(st.Dev), st.Ino}}
	f.fallback = forceRoot || !haveOpenat2(fd)
	h := &rootHandle{fd: fd}
	if f.fallback {
		if h.dir, err = openFallbackRoot(abs, fd); err != nil {
			unix.Close(fd)
			return nil, &fs.PathError{Op: "open", Path: root, Err: mapErrno(err)}
		}
	}
	// The root becomes the pool's, as after a call.
	f.h, f.users = h, 1
	roots.release(f)
	return f, nil
}

// openRoot opens the root again by its path, checking that it is still
// the directory New opened.
func (f *FS) openRoot() (*rootHandle, error) {
	fd, err := unix.Open(f.root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err == unix.ENOENT || err == unix.ENOTDIR {
		return nil, errRootMoved
	}
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if (dirKey{uint64(st.Dev), st.Ino}) != f.id {
		unix.Close(fd)
		return nil, errRootMoved
	}
	h := &rootHandle{fd: fd}
	if f.fallback {
		if h.dir, err = openFallbackRoot(f.root, fd); err != nil {
			unix.Close(fd)
			return nil, err
		}
	}
	return h, nil
}

// withRoot runs fn with the open root, opening it first if need be. An fn
// that runs out of descriptors runs once more after the pool has given
// back its idle roots.
func (f *FS) withRoot(fn func(h *rootHandle) error) error {
	h, err := roots.acquire(f)
	if err != nil {
		return err
	}
	defer roots.release(f)
	err = fn(h)
	if isDescriptorLimit(err) && roots.shed() > 0 {
		err = fn(h)
	}
	return err
}

// Close releases the root directory and closes the files OpenLog opened.
// Calls made after Close fail with fs.ErrClosed; a second Close does
// nothing.
func (f *FS) Close() error {
	f.closeLogs()
	return roots.close(f)
}

// Capabilities describes the local disk.
func (f *FS) Capabilities() backend.Capabilities {
	return backend.Capabilities{
		Name:                "local",
		Symlinks:            true,
		ModeBits:            true,
		ModTimes:            true,
		EmptyDirs:           true,
		SpecialFiles:        true,
		AtomicPreconditions: true,
		AtomicRename:        true,
		AtomicRemove:        true,
		MaxNameBytes:        maxNameBytes,
		StagingPattern:      stagingPattern,
	}
}

// LocalPath returns the host path of the storage path name, for programs
// such as ripgrep that need one. It reports false for a non-canonical name
// and for a pending write's temporary name.
// The result must never be shown to a model.
func (f *FS) LocalPath(name string) (string, bool) {
	if checkPath("localpath", name) != nil {
		return "", false
	}
	return filepath.Join(f.root, filepath.FromSlash(name)), true
}

// MapHostPath maps an absolute host path inside the root onto its storage
// path, after cleaning it lexically. The root may be named as it was given
// to New or by its real path. A path outside the root gives ErrOutside, a
// relative one or one that maps onto a non-canonical storage path
// ErrInvalidPath.
func (f *FS) MapHostPath(hostPath string) (string, error) {
	if !filepath.IsAbs(hostPath) {
		return "", &fs.PathError{Op: "map", Path: hostPath, Err: backend.ErrInvalidPath}
	}
	rel, ok := f.hostRel(hostPath)
	if !ok {
		return "", &fs.PathError{Op: "map", Path: hostPath, Err: backend.ErrOutside}
	}
	if !backend.ValidPath(rel) {
		return "", &fs.PathError{Op: "map", Path: rel, Err: backend.ErrInvalidPath}
	}
	return rel, nil
}

// hostRel returns the absolute host path p relative to the root (lexically
// cleaned, "." for the root itself), or false when p lies outside it.
func (f *FS) hostRel(p string) (string, bool) {
	p = filepath.Clean(p)
	f.realRootOnce.Do(f.findRealRoot)
	for _, root := range [2]string{f.root, f.realRoot} {
		if p == root {
			return ".", true
		}
		prefix := root
		if root != "/" {
			prefix += "/"
		}
		if rest, ok := strings.CutPrefix(p, prefix); ok {
			return rest, true
		}
	}
	return "", false
}

// findRealRoot sets realRoot: the real path of the open root, or root
// itself when the root cannot be opened (calls fail then anyway).
func (f *FS) findRealRoot() {
	f.realRoot = f.root
	_ = f.withRoot(func(h *rootHandle) error {
		var st unix.Stat_t
		if err := unix.Fstat(h.fd, &st); err != nil {
			return err
		}
		real, err := realPath(f.root, h.fd, &st)
		if err == nil {
			f.realRoot = real
		}
		return err
	})
}

// open opens the storage path name (canonical, or ".") below the root
// without following any symlink on the way, including the final component:
// a symlink anywhere gives ELOOP. flags are open(2) flags; O_CLOEXEC is
// always added. Errors are raw errnos for the callers to classify.
func (f *FS) open(name string, flags int) (int, error) {
	h, err := roots.acquire(f)
	if err != nil {
		return -1, err
	}
	defer roots.release(f)
	fd, err := h.openat(name, flags|unix.O_CLOEXEC)
	if isDescriptorLimit(err) && roots.shed() > 0 {
		fd, err = h.openat(name, flags|unix.O_CLOEXEC)
	}
	return fd, err
}

// fstatRoot stats the root directory itself.
func (f *FS) fstatRoot(st *unix.Stat_t) error {
	return f.withRoot(func(h *rootHandle) error {
		return ignoringEINTR(func() error { return unix.Fstat(h.fd, st) })
	})
}

// fstatatRoot lstats the single component name of the root directory.
func (f *FS) fstatatRoot(name string, st *unix.Stat_t) error {
	return f.withRoot(func(h *rootHandle) error { return fstatat(h.fd, name, st) })
}

// checkPath refuses a non-canonical name and one naming a pending write's
// temporary file, which another write owns.
func checkPath(op, name string) error {
	if err := backend.CheckPath(op, name); err != nil {
		return err
	}
	return backend.CheckReserved(op, name, isPendingName)
}

// begin checks what every method checks first: a canonical storage path
// and a live context.
func begin(ctx context.Context, op, name string) error {
	if err := checkPath(op, name); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	return nil
}
