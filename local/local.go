//go:build linux

package local

import (
	"context"
	"errors"
	"io/fs"
	"os"
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
	root     string // the cleaned absolute host path of the root, as given
	realRoot string // root with its symlinks resolved; equal to root without any

	// mu keeps rootfd and dir alive while an open relative to them is in
	// flight: a descriptor number closed under a running call could be
	// reused by an unrelated directory.
	mu     sync.RWMutex
	rootfd int      // O_PATH directory descriptor of the root; -1 once closed
	dir    *os.Root // the fallback opener, used instead of openat2 when not nil

	// direntBufs holds ListTypes's getdents buffers (*[]byte) between calls.
	direntBufs sync.Pool
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
)

// New opens the existing directory root as the root of a backend; an
// empty root is refused. The directory is opened once; renaming or replacing the path root afterwards
// does not move the backend. Close releases it.
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
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: root, Err: mapErrno(err)}
	}
	realRoot, err := filepath.EvalSymlinks(abs)
	if err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: root, Err: mapErrno(err)}
	}
	f := &FS{root: abs, realRoot: realRoot, rootfd: fd}
	if forceRoot || !openat2Supported(fd) {
		if f.dir, err = openFallbackRoot(abs, fd); err != nil {
			unix.Close(fd)
			return nil, &fs.PathError{Op: "open", Path: root, Err: mapErrno(err)}
		}
	}
	return f, nil
}

// Close releases the root directory. Calls made after Close fail with
// fs.ErrClosed; a second Close does nothing.
func (f *FS) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rootfd < 0 {
		return nil
	}
	err := unix.Close(f.rootfd)
	f.rootfd = -1
	if f.dir != nil {
		err = errors.Join(err, f.dir.Close())
	}
	return err
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

// open opens the storage path name (canonical, or ".") below the root
// without following any symlink on the way, including the final component:
// a symlink anywhere gives ELOOP. flags are open(2) flags; O_CLOEXEC is
// always added. Errors are raw errnos for the callers to classify.
func (f *FS) open(name string, flags int) (int, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.rootfd < 0 {
		return -1, fs.ErrClosed
	}
	if f.dir != nil {
		return openInRoot(f.dir, name, flags|unix.O_CLOEXEC)
	}
	return openat2(f.rootfd, name, flags|unix.O_CLOEXEC)
}

// fstatRoot stats the root directory itself.
func (f *FS) fstatRoot(st *unix.Stat_t) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.rootfd < 0 {
		return fs.ErrClosed
	}
	return ignoringEINTR(func() error { return unix.Fstat(f.rootfd, st) })
}

// fstatatRoot lstats the single component name of the root directory.
func (f *FS) fstatatRoot(name string, st *unix.Stat_t) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.rootfd < 0 {
		return fs.ErrClosed
	}
	return fstatat(f.rootfd, name, st)
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
