// Package aferoadapter connects fencefs with github.com/spf13/afero in
// both directions: [New] serves any afero.Fs as a fencefs backend, and
// [ToAfero] presents any fencefs backend as an afero.Fs.
//
// A backend made by New maps the storage root "." to the afero path "/"
// and every storage path "a/b" to "/a/b". Wrap an afero.OsFs in an
// afero.BasePathFs to serve one directory; afero does not confine symlinks
// on disk the way the local backend does, so use package local where the
// root is a security boundary.
package aferoadapter

import (
	"errors"
	"io/fs"
	"os"
	"regexp"
	"sync"
	"syscall"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/backend"
)

// FS serves an afero.Fs as a fencefs backend. It implements
// backend.Backend, Stater, Writer, DirMaker, SymlinkResolver and
// CapabilityReporter, and is safe for concurrent use when the afero.Fs is.
//
// Writes go to a temporary file in the target's directory, renamed over
// the target on Commit. Preconditions are checked and the rename done
// while holding a mutex of the *FS, so they are atomic only between
// writers that share the same *FS; other processes or other adapters over
// the same afero.Fs are not excluded.
type FS struct {
	fsys afero.Fs
	// lstat is set when the Fs can report symlinks without following
	// them; readlink is set with it.
	lstat    afero.Lstater
	readlink afero.LinkReader
	// hostRoot is the host path of "/" for an Fs that maps onto a host
	// directory (afero.BasePathFs), used to judge absolute link targets.
	hostRoot string
	caps     backend.Capabilities
	filePerm fs.FileMode // for new files, before any umask the Fs applies
	dirPerm  fs.FileMode // for new directories

	// commitMu serialises the precondition check and rename of commits.
	commitMu sync.Mutex
}

// New returns a backend over fsys. Its capabilities are derived from the
// type of fsys: afero.MemMapFs stores permission bits and holds no
// symlinks or special files; afero.OsFs, and any Fs whose Lstat really
// does not follow links, may hold symlinks and special files;
// afero.ReadOnlyFs is reported read-only.
func New(fsys afero.Fs) *FS {
	a := &FS{fsys: fsys, filePerm: 0o666, dirPerm: 0o777}
	if l, ok := fsys.(afero.Lstater); ok {
		if r, ok := fsys.(afero.LinkReader); ok {
			// LstatIfPossible says whether it used a real lstat; wrappers
			// such as BasePathFs over a MemMapFs do not.
			if _, used, _ := l.LstatIfPossible("/"); used {
				a.lstat, a.readlink = l, r
			}
		}
	}
	if rp, ok := fsys.(interface{ RealPath(string) (string, error) }); ok {
		if root, err := rp.RealPath("/"); err == nil {
			a.hostRoot = root
		}
	}
	disk := a.lstat != nil
	a.caps = backend.Capabilities{
		Name:                "afero",
		Symlinks:            disk,
		ModeBits:            disk,
		ModTimes:            true,
		EmptyDirs:           true,
		SpecialFiles:        disk,
		AtomicPreconditions: true,
		AtomicRemove:        true,
		StagingPattern:      stagingPattern,
	}
	switch fsys.(type) {
	case *afero.MemMapFs:
		// No umask applies in memory, so use the usual results directly.
		a.caps.ModeBits, a.caps.AtomicRename = true, true
		a.filePerm, a.dirPerm = 0o644, 0o755
	case *afero.OsFs:
		a.caps.ModeBits, a.caps.SpecialFiles, a.caps.MaxNameBytes = true, true, 255
	case *afero.ReadOnlyFs:
		a.caps.ReadOnly = true
	}
	if disk {
		// A rename on disk is rename(2).
		a.caps.MaxNameBytes, a.caps.AtomicRename = 255, true
	}
	return a
}

// Fs returns the afero.Fs that a serves.
func (a *FS) Fs() afero.Fs { return a.fsys }

// Capabilities describes a; see [New].
func (a *FS) Capabilities() backend.Capabilities { return a.caps }

// aferoPath turns a canonical storage path into the afero path.
func aferoPath(name string) string {
	if name == "." {
		return "/"
	}
	return "/" + name
}

// stagingPattern matches the temporary files of pending writes, which
// listings hide and paths may not name (Capabilities.StagingPattern).
const stagingPattern = `^\.fencefs-[0-9a-f]{16}\.tmp$`

var tempName = regexp.MustCompile(stagingPattern)

// lstatReal returns the metadata of the storage path name without
// following a final symlink when the Fs can tell links apart.
func (a *FS) lstatReal(name string) (os.FileInfo, error) {
	if a.lstat != nil {
		fi, _, err := a.lstat.LstatIfPossible(aferoPath(name))
		return fi, err
	}
	return a.fsys.Stat(aferoPath(name))
}

// checkParents verifies that every ancestor of name is a directory, and
// no symlink. It reports whether all of them exist; a missing ancestor
// ends the check.
func (a *FS) checkParents(name string) (exist bool, err error) {
	dir, _ := backend.Split(name)
	if dir == "." {
		return true, nil
	}
	p := ""
	for _, c := range splitPath(dir) {
		p = backend.Join(p, c)
		fi, err := a.lstatReal(p)
		switch {
		case isNotExist(err):
			return false, nil
		case err != nil:
			return false, mapErr(err)
		case fi.Mode()&fs.ModeSymlink != 0:
			return false, backend.ErrSymlink
		case !fi.IsDir():
			return false, backend.ErrNotDir
		}
	}
	return true, nil
}

// isNotExist reports a missing path; a path through a file (ENOTDIR on
// disk) is checked separately with checkParents.
func isNotExist(err error) bool {
	return err != nil && errors.Is(err, fs.ErrNotExist)
}

// pathErr returns err as an *fs.PathError naming the storage path name,
// with the Fs's wrappers (which may carry host paths) removed and the
// error mapped to backend's sentinels.
func pathErr(op, name string, err error) error {
	if err == nil {
		return nil
	}
	return &fs.PathError{Op: op, Path: name, Err: mapErr(err)}
}

// mapErr strips path-carrying wrappers from err and maps system errors to
// the sentinels of package backend.
func mapErr(err error) error {
	for {
		switch e := err.(type) {
		case *fs.PathError:
			err = e.Err
			continue
		case *os.LinkError:
			err = e.Err
			continue
		case *os.SyscallError:
			err = e.Err
			continue
		}
		break
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fs.ErrNotExist
	case errors.Is(err, fs.ErrExist):
		return fs.ErrExist
	case errors.Is(err, syscall.ENOTDIR):
		return backend.ErrNotDir
	case errors.Is(err, syscall.EISDIR):
		return backend.ErrIsDir
	case errors.Is(err, syscall.ELOOP):
		return backend.ErrLoop
	case errors.Is(err, syscall.ENAMETOOLONG):
		return backend.ErrNameTooLong
	case errors.Is(err, syscall.EILSEQ):
		return backend.ErrInvalidPath
	}
	if fatal := backend.FatalErrno(err); fatal != nil {
		return fatal
	}
	return err
}

// Interface checks.
var (
	_ backend.Backend            = (*FS)(nil)
	_ backend.Stater             = (*FS)(nil)
	_ backend.Writer             = (*FS)(nil)
	_ backend.DirMaker           = (*FS)(nil)
	_ backend.SymlinkResolver    = (*FS)(nil)
	_ backend.CapabilityReporter = (*FS)(nil)
)
