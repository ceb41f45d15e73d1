package conformance

import (
	"context"
	"io/fs"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

// Harness makes the backends the suite tests. Run calls MakeBackend once
// per leaf subtest, one subtest at a time, so a harness needs no locking
// of its own.
type Harness interface {
	// MakeBackend returns a fresh, empty backend for one subtest. The
	// harness registers any cleanup with t.Cleanup and fails t (t.Fatal)
	// when it cannot make one.
	MakeBackend(ctx context.Context, t *testing.T) backend.Backend
}

// HarnessFunc adapts a plain function to [Harness], for backends that need
// none of the optional harness abilities.
type HarnessFunc func(ctx context.Context, t *testing.T) backend.Backend

// MakeBackend calls f.
func (f HarnessFunc) MakeBackend(ctx context.Context, t *testing.T) backend.Backend {
	return f(ctx, t)
}

// The optional harness abilities below give the suite ways to arrange or
// observe storage that the backend contract cannot express. Run finds them
// by type assertion on the Harness; each receives the backend made by
// MakeBackend in the same subtest and acts on that backend's storage
// directly, bypassing the backend. Paths are canonical storage paths
// relative to the backend's root. Tests that need a missing ability are
// skipped with a message naming it.

// Symlinker creates symbolic links, for backends whose storage can hold
// them (Capabilities.Symlinks).
type Symlinker interface {
	// MakeSymlink creates the symlink name pointing at target, exactly as
	// written (target is usually relative). The parent of name exists.
	MakeSymlink(ctx context.Context, t *testing.T, b backend.Backend, target, name string)
}

// SpecialFileMaker creates special files, for backends whose storage can
// hold them (Capabilities.SpecialFiles).
type SpecialFileMaker interface {
	// MakeFIFO creates a named pipe at name. The parent of name exists.
	MakeFIFO(ctx context.Context, t *testing.T, b backend.Backend, name string)
}

// RawLister reveals everything stored, including what the backend hides,
// so the suite can check that writes leave no temporary files, lock files
// or unfinished multipart uploads behind.
type RawLister interface {
	// ListRaw returns the storage path of every non-directory entry in b's
	// storage below its root: files, links, objects, and also leftovers
	// that are not objects (an S3 harness should report each unfinished
	// multipart upload, for example as its key plus "#upload"). Directories
	// and directory marker objects are left out. Order does not matter.
	ListRaw(ctx context.Context, t *testing.T, b backend.Backend) []string
}

// Chmoder sets permission bits, for backends that store them
// (Capabilities.ModeBits), so the suite can check that a replacement
// keeps them.
type Chmoder interface {
	// Chmod sets the permission bits of the existing file name to perm.
	Chmod(ctx context.Context, t *testing.T, b backend.Backend, name string, perm fs.FileMode)
}

// Seeder stores files behind a backend's back. It lets the read, list and
// error tests run on read-only backends, which cannot be filled through
// the contract; writable backends are filled through backend.Writer and
// do not need it.
type Seeder interface {
	// Seed stores data as the file name, creating missing parent
	// directories.
	Seed(ctx context.Context, t *testing.T, b backend.Backend, name string, data []byte)
	// SeedDir creates the directory dir and its missing parents.
	SeedDir(ctx context.Context, t *testing.T, b backend.Backend, dir string)
}

// Reopener makes a second backend over the storage of one made by
// MakeBackend, as a second server over the same bucket or directory would
// be, so the suite can check that what one value commits the other reads
// and that preconditions hold across both.
type Reopener interface {
	// Reopen returns a new backend value over b's storage, with the same
	// root. The harness registers any cleanup with t.Cleanup.
	Reopen(ctx context.Context, t *testing.T, b backend.Backend) backend.Backend
}
