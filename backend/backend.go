// Package backend defines the storage contracts that every fencefs adapter
// implements and every fencefs tool depends on.
//
// The contracts are modelled on io/fs and database/sql/driver: a backend
// implements the small required interface [Backend] (Reader and Lister) and
// as many optional abilities as it can ([Stater], [Writer], [DirMaker],
// [SymlinkResolver], [Walker], [PathResolver], [LocalPather],
// [HostPathMapper], [CapabilityReporter]). Callers discover the optional
// abilities by type assertion, usually through the helper functions of this
// package ([Stat], [OpenWrite], [MkdirAll], [Walk]), which use a fast path
// when it exists and fall back when it does not.
//
// Every method receives a canonical storage path: a relative POSIX path
// with no empty, "." or ".." components, or "." for the root (see
// [ValidPath]). A backend rejects anything else with an error wrapping
// [ErrInvalidPath] before touching storage. Backend methods never follow
// symbolic links: a symlink in a middle component is an error and a symlink
// as the final component is reported, not followed. Callers that want links
// followed resolve the path first with [SymlinkResolver], judge the resolved
// target, and then operate on exactly that path; if a link was swapped in
// between, the operation fails instead of being redirected.
//
// Errors are *fs.PathError values naming the storage path (never a host
// path), wrapping the io/fs sentinels or the sentinels of this package, so
// callers test them with errors.Is.
package backend

import (
	"context"
	"io"
	"io/fs"
	"time"
)

// Reader opens files for reading.
type Reader interface {
	// OpenRead opens the regular file name for reading. The caller owns the
	// stream and must close it. A directory gives ErrIsDir, a missing file
	// fs.ErrNotExist, and a FIFO, socket, device or symlink ErrNotRegular;
	// a FIFO is never opened in a way that could block.
	OpenRead(ctx context.Context, name string) (io.ReadCloser, error)
}

// Lister lists directories.
type Lister interface {
	// List returns the direct children of dir, in any order. Each entry's
	// Name is a single path component. A missing dir gives fs.ErrNotExist
	// and a file gives ErrNotDir.
	List(ctx context.Context, dir string) ([]DirEntry, error)
}

// Backend is the least a storage adapter implements: reading files and
// listing directories. Everything else is optional.
type Backend interface {
	Reader
	Lister
}

// Stater reports metadata of a single path. Backends without it are
// stat-ed through a listing of the parent directory (see [Stat]).
type Stater interface {
	// Stat returns the metadata of name without following a final symlink.
	// A missing path gives an error that errors.Is fs.ErrNotExist. The
	// root "." always exists and is a directory.
	Stat(ctx context.Context, name string) (FileInfo, error)
}

// Writer opens files for writing.
type Writer interface {
	// OpenWrite starts writing the file name. Missing parent directories
	// are created as needed. Nothing is visible to readers until the
	// returned handle's Commit succeeds, which replaces the target
	// atomically and enforces opts.Precondition. Closing the handle without
	// a successful Commit abandons the write: the old target (if any) is
	// untouched and nothing temporary is left behind.
	OpenWrite(ctx context.Context, name string, opts WriteOptions) (FileWriter, error)
}

// FileWriter is a pending write opened by [Writer.OpenWrite]. It follows
// the shape of google/renameio's PendingFile.
type FileWriter interface {
	io.Writer
	// Commit makes the written bytes the content of the target, atomically.
	// On failure the old target is untouched. Commit may be called once.
	Commit() error
	// Close releases the handle. Without a successful Commit it abandons
	// the write. Close after Commit is a no-op returning nil.
	Close() error
}

// WriteOptions adjust a write.
type WriteOptions struct {
	// Precondition is checked atomically with the commit where the backend
	// can (see Capabilities.AtomicPreconditions).
	Precondition Precondition
}

// Precondition restricts when a write may commit. The zero value always
// allows it.
type Precondition struct {
	// CreateOnly makes Commit fail with fs.ErrExist when the target exists.
	CreateOnly bool
	// MatchHash, when not empty, is the lowercase hex SHA-256 of the
	// content the target must still hold at commit time. A different
	// content, or a missing target, fails with ErrPrecondition.
	MatchHash string
	// MatchVersion, when not empty, is a backend version token (such as an
	// S3 ETag, see FileInfo.Version) the target must still have.
	MatchVersion string
}

// IsZero reports whether p imposes no condition.
func (p Precondition) IsZero() bool {
	return !p.CreateOnly && p.MatchHash == "" && p.MatchVersion == ""
}

// DirMaker creates directories.
type DirMaker interface {
	// MkdirAll creates dir and any missing parents. An existing directory
	// is not an error; an existing non-directory on the way gives ErrNotDir
	// (or fs.ErrExist when it is dir itself).
	MkdirAll(ctx context.Context, dir string) error
}

// SymlinkResolver is implemented by backends that hold symbolic links
// (local disk, SFTP). Backends without it have no links.
type SymlinkResolver interface {
	// ResolveSymlinks returns the canonical storage path name leads to,
	// following every symlink on the way, including the final component.
	// Components that do not exist are kept as they are written, so a path
	// to a file about to be created resolves too; a dangling final link
	// resolves to its (contained) target. A path that leads outside the
	// root gives ErrOutside, a symlink loop ErrLoop.
	ResolveSymlinks(ctx context.Context, name string) (string, error)
	// Readlink returns the target of the symlink name as it is stored. An
	// absolute target inside the root is returned relative to the root; an
	// absolute target outside the root gives ErrOutside.
	Readlink(ctx context.Context, name string) (string, error)
}

// WalkFunc is called by [Walker.Walk] for every entry below the walk root.
// name is the entry's storage path. Returning fs.SkipDir for a directory
// asks the walker not to report its contents (a walker that lists a whole
// prefix at once may still have fetched them); any other error stops the
// walk and is returned.
type WalkFunc func(name string, entry DirEntry) error

// Walker lists a whole tree in one pass, where that is cheaper than a
// listing per directory (one request per 1000 keys on S3).
type Walker interface {
	// Walk calls fn for every entry below dir (not dir itself), without
	// following symlinks, in an unspecified order; every directory is
	// reported before its contents. A missing dir gives fs.ErrNotExist.
	Walk(ctx context.Context, dir string, fn WalkFunc) error
}

// PathResolver is implemented by backends whose namespace is rooted, such
// as a mounted namespace: tool paths are virtual paths starting at "/".
type PathResolver interface {
	// ResolvePath turns a tool path (absolute, or relative to the rooted
	// cwd) into a canonical virtual path starting with "/", lexically,
	// without touching storage.
	ResolvePath(path, cwd string) (string, error)
}

// LocalPather is implemented by backends whose files are on local disk, so
// that callers may run local programs (ripgrep) over them.
type LocalPather interface {
	// LocalPath returns the host path of the storage path name. The result
	// must never be shown to a model.
	LocalPath(name string) (string, bool)
}

// HostPathMapper is implemented by local-disk backends that accept
// absolute host paths inside their root.
type HostPathMapper interface {
	// MapHostPath maps an absolute host path onto the storage namespace. A
	// path outside the root gives ErrOutside.
	MapHostPath(hostPath string) (string, error)
}

// CapabilityReporter describes what a backend can do.
type CapabilityReporter interface {
	Capabilities() Capabilities
}

// Capabilities describe a backend as data, so that shared tests and tools
// know which behaviour to expect. The zero value describes a backend that
// supports nothing optional.
type Capabilities struct {
	// Name names the backend kind ("local", "s3", ...), for messages.
	Name string
	// ReadOnly backends refuse every write with ErrReadOnly.
	ReadOnly bool
	// Symlinks: the backend can hold symbolic links.
	Symlinks bool
	// ModeBits: permission bits are stored and kept on replacement.
	ModeBits bool
	// ModTimes: FileInfo and DirEntry carry modification times.
	ModTimes bool
	// EmptyDirs: an empty directory can exist on its own.
	EmptyDirs bool
	// SpecialFiles: FIFOs, sockets and devices can appear.
	SpecialFiles bool
	// AtomicPreconditions: CreateOnly and MatchHash/MatchVersion are
	// checked atomically with the commit, so of several writers presenting
	// the same precondition at most one commits; the same holds for the
	// target preconditions of Rename and Copy (see AtomicRemove for
	// Remove).
	AtomicPreconditions bool
	// Versions: FileInfo.Version is set and Precondition.MatchVersion works.
	Versions bool
	// AtomicRemove: a precondition of Remover.Remove is checked in one
	// step with the removal, so a MatchHash removal and a write holding
	// the same hash cannot both succeed (false on S3, where servers such
	// as versitygw evaluate a conditional DeleteObject apart from a
	// concurrent PutObject, and on SFTP).
	AtomicRemove bool
	// AtomicRename: Renamer.Rename is one step, so observers see the
	// source or the target, never both or neither (false on S3, which
	// copies then deletes).
	AtomicRename bool
	// MaxNameBytes is the longest single name component, 0 if unknown.
	MaxNameBytes int
}

// CapabilitiesOf returns b's capabilities, or a description derived from
// the interfaces b implements when it does not report any.
func CapabilitiesOf(b Backend) Capabilities {
	if r, ok := b.(CapabilityReporter); ok {
		return r.Capabilities()
	}
	_, w := b.(Writer)
	_, l := b.(SymlinkResolver)
	return Capabilities{Name: "unknown", ReadOnly: !w, Symlinks: l}
}

// FileInfo describes a single path.
type FileInfo struct {
	// Name is the final component of the path ("." for the root).
	Name string
	// Size in bytes; -1 when unknown (directories may report 0).
	Size int64
	// Mode holds the type bits (fs.ModeDir, fs.ModeSymlink, ...) and, when
	// the backend stores them, the permission bits.
	Mode fs.FileMode
	// ModTime is the zero time when unknown.
	ModTime time.Time
	// Version is an opaque token that changes whenever the content changes
	// (an S3 ETag); empty when the backend has none.
	Version string
}

// IsDir reports whether fi describes a directory.
func (fi FileInfo) IsDir() bool { return fi.Mode.IsDir() }

// IsRegular reports whether fi describes a regular file.
func (fi FileInfo) IsRegular() bool { return fi.Mode.IsRegular() }

// IsSymlink reports whether fi describes a symbolic link.
func (fi FileInfo) IsSymlink() bool { return fi.Mode&fs.ModeSymlink != 0 }

// DirEntry is one child in a directory listing.
type DirEntry struct {
	// Name is a single path component.
	Name string
	// Type holds the type bits of the entry itself (a symlink has
	// fs.ModeSymlink, whatever it points to); 0 for a regular file.
	Type fs.FileMode
	// Size in bytes; -1 when unknown.
	Size int64
	// ModTime is the zero time when unknown.
	ModTime time.Time
}

// IsDir reports whether the entry is a directory (not a link to one).
func (e DirEntry) IsDir() bool { return e.Type.IsDir() }

// IsSymlink reports whether the entry is a symbolic link.
func (e DirEntry) IsSymlink() bool { return e.Type&fs.ModeSymlink != 0 }

// IsRegular reports whether the entry is a regular file.
func (e DirEntry) IsRegular() bool { return e.Type.Type() == 0 }

// Info converts the entry to a FileInfo.
func (e DirEntry) Info() FileInfo {
	return FileInfo{Name: e.Name, Size: e.Size, Mode: e.Type, ModTime: e.ModTime}
}
