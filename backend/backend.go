// Package backend defines the storage contracts that every fencefs adapter
// implements and every fencefs tool depends on. It is the contract, not
// the home of the adapters: those live in local, mounted, s3adapter,
// sftpadapter and aferoadapter.
//
// The contracts are modelled on io/fs and database/sql/driver: a backend
// implements the small required interface [Backend] (Reader and Lister) and
// as many behaviour interfaces as it can ([Stater], [Writer], [DirMaker],
// [SymlinkResolver], [Walker], [TypeLister], [LocalPather],
// [HostPathMapper]), and reports what it is as facts in [Capabilities]
// ([CapabilityReporter]). Behaviour is interfaces; facts are data. Callers
// discover behaviour by type assertion, usually through the helper
// functions of this package ([Stat], [OpenWrite], [MkdirAll], [Walk],
// [ListTypes], [ResolveSymlinks]), which use a fast path when it exists
// and fall back when it does not.
//
// A behaviour method may decline at run time with an error wrapping
// [ErrUnsupported] (errors.ErrUnsupported), the way database/sql's
// driver.ErrSkip lets a fast path decline. This is how a wrapper such as
// [ReadOnly] or a mounted namespace implements every interface once and
// forwards to whatever its child has: where the child lacks the
// behaviour, the wrapper declines and the helpers take their fallback. A
// method declines before it has done anything (a Walk that declines has
// called no callback).
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
	// a FIFO is never opened in a way that could block. A path through a
	// file ("f/x" where f is a file) gives ErrNotDir or fs.ErrNotExist, as
	// the storage tells; callers accept either. A done ctx fails the call
	// with its error. The stream knows what it serves (see [FileReader]),
	// so callers need no Stat beside it.
	OpenRead(ctx context.Context, name string) (FileReader, error)
}

// FileReader is an open read, like an fs.File with its Stat or a blob
// reader with its attributes: the bytes of one version of a file and the
// metadata of exactly that version.
type FileReader interface {
	io.ReadCloser
	// Info describes the bytes the stream serves, as they were when it
	// was opened: Size is their length, ModTime and Version are theirs,
	// and Version is what Precondition.MatchVersion takes to change
	// exactly this version where the backend has versions. It never
	// touches storage.
	Info() FileInfo
}

// NewFileReader returns r as a FileReader serving info, for adapters and
// wrappers whose streams know their metadata from elsewhere.
func NewFileReader(r io.ReadCloser, info FileInfo) FileReader {
	return &fileReader{ReadCloser: r, info: info}
}

type fileReader struct {
	io.ReadCloser
	info FileInfo
}

func (r *fileReader) Info() FileInfo { return r.info }

// Lister lists directories.
type Lister interface {
	// List returns the direct children of dir, in any order. Each entry's
	// Name is a single path component, listed once, and never the name of
	// a pending write's temporary object. A missing dir gives
	// fs.ErrNotExist, a file ErrNotDir, and a path through a file ErrNotDir
	// or fs.ErrNotExist. A done ctx fails the call with its error.
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
	// A missing path gives an error that errors.Is fs.ErrNotExist, and so
	// may a path through a file (or ErrNotDir). The root "." always exists
	// and is a directory. A done ctx fails the call with its error.
	Stat(ctx context.Context, name string) (FileInfo, error)
}

// Writer opens files for writing.
//
// ctx, the context given to OpenWrite, governs the whole write: once it is
// done, Write may fail with its error and Commit does, with an error
// matching context.Canceled (or context.DeadlineExceeded), leaving the
// target as it was and nothing temporary behind.
//
// Missing parent directories are created by OpenWrite or by Commit; an
// abandoned write may leave the ones it created. A write through a file
// fails with ErrNotDir and a write onto a directory with ErrIsDir, from
// OpenWrite or, when the directory appeared meanwhile, from Commit.
//
// An adapter that stages the bytes beside the target (a temporary file
// renamed over it) reserves a name pattern for them and declares it in
// Capabilities.StagingPattern: those names never appear in List or Walk,
// and a path with such a component is refused by every operation with an
// error wrapping ErrInvalidPath ([CheckReserved] does it). Staging that is not an object (an S3 multipart
// upload until it completes) reserves nothing; either way Close without
// Commit removes what was staged.
type Writer interface {
	// OpenWrite starts writing the file name. Nothing is visible to
	// readers until the returned handle's Commit succeeds, which replaces
	// the target atomically and enforces opts.Precondition. Closing the
	// handle without a successful Commit abandons the write: the old
	// target (if any) is untouched and nothing temporary is left behind.
	OpenWrite(ctx context.Context, name string, opts WriteOptions) (FileWriter, error)
}

// FileWriter is a pending write opened by [Writer.OpenWrite]. It follows
// the shape of google/renameio's PendingFile. It is used from one
// goroutine at a time: Close must not run while a Write is still blocked
// (on a slow upload, say); to stop such a Write, cancel the context given
// to OpenWrite, then Close.
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
	// BeforeCommit, when not nil, is called by Commit once the written
	// bytes are staged and before the target changes (on local disk:
	// while the temporary file is synced, on a goroutine of its own, and
	// waited for before the rename); an error from it fails the Commit with
	// the target untouched, and the error is returned as it is or
	// wrapped. It lets a caller overlap its own slow step (storing a
	// checkpoint's record durably) with the backend's staging. Only a
	// backend that implements [CommitHooker] sees it: [OpenWrite] and
	// [WriteFile] call it at the start of Commit for any other, so set it
	// only through them.
	BeforeCommit func() error
}

// CommitHooker is implemented by a Writer whose FileWriter.Commit calls
// WriteOptions.BeforeCommit itself, after staging the bytes and before
// the target changes. A backend that wraps another must not implement it
// unless it honours the field itself: [OpenWrite] trusts it.
type CommitHooker interface {
	Writer
	// CommitHooks marks the backend; it does nothing.
	CommitHooks()
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
	// S3 ETag, see FileInfo.Version) the target must still have. A missing
	// target fails with ErrPrecondition, as it does for MatchHash. A
	// backend without versions (Capabilities.Versions false) refuses it
	// with errors.ErrUnsupported or ErrPrecondition.
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
// (local disk, SFTP). Backends without it, or whose methods decline with
// ErrUnsupported, have no links.
type SymlinkResolver interface {
	// ResolveSymlinks returns the canonical storage path name leads to,
	// following every symlink on the way, including the final component.
	// Components that do not exist are kept as they are written, so a path
	// to a file about to be created resolves too; a dangling final link
	// resolves to its (contained) target. A path that leads outside the
	// root gives ErrOutside, a symlink loop ErrLoop.
	ResolveSymlinks(ctx context.Context, name string) (string, error)
	// TraceSymlinks resolves name as ResolveSymlinks does and calls
	// visit, in order, with the canonical storage path of every path the
	// resolution looks up in storage: each component it steps on, a
	// symlink before its target is read. An error from visit ends the
	// resolution and is returned as it is, so a caller can judge every
	// hop of a chain of links before the next one is taken. A resolution
	// that follows no symlink may skip the visits (it then steps only on
	// name and its ancestors); a nil visit is allowed.
	TraceSymlinks(ctx context.Context, name string, visit func(path string) error) (string, error)
	// Readlink returns the target of the symlink name as it is stored. An
	// absolute target inside the root is returned relative to the root; an
	// absolute target outside the root gives ErrOutside.
	Readlink(ctx context.Context, name string) (string, error)
	// The methods decline with ErrUnsupported only on storage that holds
	// no links, so a declined ResolveSymlinks means the path is its own
	// resolution.
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
	// A wrapper whose child cannot walk in one pass declines with
	// ErrUnsupported before calling fn, and callers list instead.
	Walk(ctx context.Context, dir string, fn WalkFunc) error
}

// LocalPather is implemented by backends whose files are on local disk, so
// that callers may run local programs (ripgrep) over them.
type LocalPather interface {
	// LocalPath returns the host path of the storage path name. The result
	// must never be shown to a model. It reports false where it has none
	// (a wrapper over storage that is not on local disk declines so).
	LocalPath(name string) (string, bool)
}

// HostPathMapper is implemented by local-disk backends that accept
// absolute host paths inside their root.
type HostPathMapper interface {
	// MapHostPath maps an absolute host path onto the storage namespace. A
	// path outside the root gives ErrOutside; a backend that accepts no
	// host paths declines with ErrUnsupported.
	MapHostPath(hostPath string) (string, error)
}

// CapabilityReporter reports a backend's facts.
type CapabilityReporter interface {
	Capabilities() Capabilities
}

// Capabilities are a backend's facts: what it is, not what it does (that
// is the behaviour interfaces). Shared tests and tools read them to know
// which behaviour to expect. The zero value describes a writable backend
// with no optional facts; a wrapper derives its facts from its child's
// with [Capabilities.Mask].
type Capabilities struct {
	// Name names the backend kind ("local", "s3", ...), for messages.
	Name string
	// ReadOnly backends refuse every change with ErrReadOnly.
	ReadOnly bool
	// Rooted: the namespace is rooted, as a mounted namespace is. Tool
	// paths are then virtual paths starting at "/" (see [CleanVirtual])
	// and results show them rooted.
	Rooted bool
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
	// CaseInsensitive: names differing only in case name the same file.
	CaseInsensitive bool
	// NonAtomicReplace: replacing an existing file is not atomic for
	// observers, who may see the target missing for a moment (WebDAV's
	// MOVE deletes then renames). Writers still never see partial
	// content.
	NonAtomicReplace bool
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
	// StagingPattern, when set, is a regular expression (RE2 syntax,
	// anchored) that the final component of a write's temporary file
	// matches: names the backend reserves (see [Writer]), never listed,
	// and refused with ErrInvalidPath as any component of a path. Empty
	// when the backend stages nothing beside the target, or, for a
	// namespace of mounts, when its mounts do not all reserve the same
	// names.
	StagingPattern string
}

// Unrestricted returns the facts of a layer that limits nothing: every
// ability, no restriction, no name limit. A wrapper starts from it, adds
// its own restrictions and masks the result with its child's facts.
func Unrestricted(name string) Capabilities {
	return Capabilities{
		Name: name, Symlinks: true, ModeBits: true, ModTimes: true, EmptyDirs: true,
		SpecialFiles: true, AtomicPreconditions: true, AtomicRemove: true, AtomicRename: true, Versions: true,
	}
}

// Mask returns the facts of a layer with facts c over a child with facts
// child, in the manner of rclone's Features.Mask: an ability holds when it
// holds for both, a restriction (ReadOnly, CaseInsensitive,
// NonAtomicReplace) or Rooted when it holds for either, and MaxNameBytes
// the smaller known limit. Name is c's, or the child's when c has none;
// StagingPattern is the child's, whose names stay reserved through the
// layer, or c's when the child has none.
func (c Capabilities) Mask(child Capabilities) Capabilities {
	m := Capabilities{
		Name:                c.Name,
		ReadOnly:            c.ReadOnly || child.ReadOnly,
		Rooted:              c.Rooted || child.Rooted,
		Symlinks:            c.Symlinks && child.Symlinks,
		ModeBits:            c.ModeBits && child.ModeBits,
		ModTimes:            c.ModTimes && child.ModTimes,
		EmptyDirs:           c.EmptyDirs && child.EmptyDirs,
		SpecialFiles:        c.SpecialFiles && child.SpecialFiles,
		CaseInsensitive:     c.CaseInsensitive || child.CaseInsensitive,
		AtomicRename:        c.AtomicRename && child.AtomicRename,
		NonAtomicReplace:    c.NonAtomicReplace || child.NonAtomicReplace,
		AtomicPreconditions: c.AtomicPreconditions && child.AtomicPreconditions,
		AtomicRemove:        c.AtomicRemove && child.AtomicRemove,
		Versions:            c.Versions && child.Versions,
		MaxNameBytes:        c.MaxNameBytes,
		StagingPattern:      child.StagingPattern,
	}
	if m.StagingPattern == "" {
		m.StagingPattern = c.StagingPattern
	}
	if m.Name == "" {
		m.Name = child.Name
	}
	if child.MaxNameBytes > 0 && (m.MaxNameBytes == 0 || child.MaxNameBytes < m.MaxNameBytes) {
		m.MaxNameBytes = child.MaxNameBytes
	}
	return m
}

// CapabilitiesOf returns b's facts, or for a backend that reports none a
// description derived from the interfaces it implements.
func CapabilitiesOf(b Backend) Capabilities {
	if r, ok := b.(CapabilityReporter); ok {
		return r.Capabilities()
	}
	_, w := b.(Writer)
	_, l := b.(SymlinkResolver)
	return Capabilities{Name: "unknown", ReadOnly: !w, Symlinks: l}
}

// PathCapabilityReporter is implemented by a backend whose storage differs
// from path to path, such as a mounted namespace, whose Capabilities are
// only what every part shares.
type PathCapabilityReporter interface {
	// CapabilitiesAt returns the capabilities of the storage that holds
	// the storage path name.
	CapabilitiesAt(name string) Capabilities
}

// CapabilitiesAt returns the capabilities of the storage holding name on
// b: b's PathCapabilityReporter answer where it has one, and
// CapabilitiesOf(b) otherwise. A caller uses it to skip work the storage
// at name makes needless (asking whether a name on S3 is a symlink).
func CapabilitiesAt(b Backend, name string) Capabilities {
	if r, ok := b.(PathCapabilityReporter); ok {
		return r.CapabilitiesAt(name)
	}
	return CapabilitiesOf(b)
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
	// Version is the file's version token (an S3 ETag) where the listing
	// gives one; empty otherwise.
	Version string
}

// IsDir reports whether the entry is a directory (not a link to one).
func (e DirEntry) IsDir() bool { return e.Type.IsDir() }

// IsSymlink reports whether the entry is a symbolic link.
func (e DirEntry) IsSymlink() bool { return e.Type&fs.ModeSymlink != 0 }

// IsRegular reports whether the entry is a regular file.
func (e DirEntry) IsRegular() bool { return e.Type.Type() == 0 }

// Info converts the entry to a FileInfo.
func (e DirEntry) Info() FileInfo {
	return FileInfo{Name: e.Name, Size: e.Size, Mode: e.Type, ModTime: e.ModTime, Version: e.Version}
}
