// Package azureadapter stores a fencefs backend in an Azure Blob Storage
// container, under an optional blob name prefix (one prefix per tenant),
// over the Azure SDK for Go (azblob).
//
// # Names and directories
//
// The storage path "a/b.txt" is the blob prefix+"a/b.txt". The prefix is
// compared with its trailing slash, so the backend of prefix "tenant1"
// never sees the blobs of "tenant10". Blob storage has no directories, so
// they are emulated exactly as the s3adapter does, by package objstore: a
// directory exists when some blob lies below it ("a/" is a prefix of a
// name) or when its marker blob "a/" exists; MkdirAll writes markers, so
// empty directories persist. A write needs no markers.
//
// Blob names that other tools wrote and that are not canonical storage
// paths (a leading "/", empty, "." or ".." segments, a NUL or a backslash,
// a segment starting with "~" or longer than 255 bytes) are skipped by
// List and Walk: they are never shown under another name. A name that is
// both a blob and a prefix ("a" next to "a/b") is a directory: List, Walk
// and Stat report the directory, OpenRead and OpenWrite of "a" fail with
// backend.ErrIsDir, and the blob "a" cannot be reached through this
// backend.
//
// # Writes and compare-and-swap
//
// Writes stream. Up to Options.BlockSize bytes are buffered and sent with
// one Put Blob at Commit; a larger file is staged as blocks (Put Block,
// one block in flight while the next fills, so at most two blocks are in
// memory) and committed with one Put Block List, which makes the whole
// blob visible at once: readers see the old blob or the new one, never a
// part. Close without a successful Commit commits nothing: the old blob
// stays, and the staged blocks are uncommitted blocks that no listing or
// read shows and that the service discards (after a week, or at the
// blob's next commit). They cannot be deleted one by one without deleting
// the blob; see
// https://learn.microsoft.com/en-us/rest/api/storageservices/put-block#remarks.
//
// Preconditions are Azure conditional headers on Put Blob and Put Block
// List alike: If-None-Match: * for CreateOnly and If-Match with the ETag
// for MatchVersion; the ETag is the FileInfo version. MatchHash reads the
// current blob, hashes it and then writes with If-Match on the ETag it
// read, so the check and the write are one atomic compare-and-swap. See
// https://learn.microsoft.com/en-us/rest/api/storageservices/specifying-conditional-headers-for-blob-service-operations.
//
// # Hierarchical namespace
//
// Accounts with a hierarchical namespace (Azure Data Lake Storage Gen2)
// are refused by Open: their directories are real (a blob's parents exist
// on their own, a directory and a blob of one name cannot both exist, a
// directory removal is recursive), which is not the emulation above.
// Open asks the service (Get Account Information) and fails with
// ErrHierarchicalNamespace when the account has one.
package azureadapter

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/objstore"
)

// Limits of Azure Blob Storage and of this adapter.
const (
	// MaxKeyBytes is the longest blob name the service accepts.
	MaxKeyBytes = 1024
	// MaxNameBytes is the longest single path component this adapter
	// accepts, as on common local file systems.
	MaxNameBytes = 255
	// MaxSegments is the most path segments a blob name may have.
	MaxSegments = 254
	// DefaultBlockSize is the block size used when Options.BlockSize is
	// 0.
	DefaultBlockSize = 8 << 20
	// MaxBlockSize is the largest block Put Block takes (service version
	// 2019-12-12 and later).
	MaxBlockSize = 4000 << 20
	// MaxBlocks is the most committed blocks a block blob may have.
	MaxBlocks = 50_000
	// DefaultCopyTimeout bounds the wait for a pending server-side copy
	// when Options.CopyTimeout is 0.
	DefaultCopyTimeout = 10 * time.Minute
	// MaxListPageSize is the most blobs one listing request returns,
	// and the page size used when Options.ListPageSize is 0.
	MaxListPageSize = 5000
)

// ErrHierarchicalNamespace is the error Open returns for an account with
// a hierarchical namespace (ADLS Gen2), which this adapter does not
// support (see the package documentation).
var ErrHierarchicalNamespace = errors.New("azureadapter: the storage account has a hierarchical namespace (Data Lake Storage Gen2), whose real directories this adapter does not emulate; use an account without one")

// Options tune an [FS].
type Options struct {
	// BlockSize is the size of each staged block and the largest file
	// written with a single Put Blob; 0 means DefaultBlockSize. A write
	// holds at most 2*BlockSize bytes in memory, and the largest file is
	// MaxBlocks*BlockSize (390 GiB by default).
	BlockSize int64
	// CopyTimeout bounds how long a server-side copy that the service
	// runs in the background (across accounts, or of a large blob) is
	// waited for; 0 means DefaultCopyTimeout. The context's deadline
	// applies too.
	CopyTimeout time.Duration
	// ReadOnly makes every write fail with backend.ErrReadOnly.
	ReadOnly bool
	// ListPageSize is the number of blobs asked for per listing request
	// (List, Walk, RemoveAll); 0 means MaxListPageSize. A smaller page
	// makes each request shorter and a listing take more of them.
	ListPageSize int32
}

func (o Options) withDefaults() (Options, error) {
	if o.BlockSize < 0 || o.CopyTimeout < 0 || o.ListPageSize < 0 {
		return o, errors.New("azureadapter: negative BlockSize, CopyTimeout or ListPageSize")
	}
	if o.ListPageSize > MaxListPageSize {
		return o, fmt.Errorf("azureadapter: ListPageSize %d is above the service's %d", o.ListPageSize, MaxListPageSize)
	}
	if o.ListPageSize == 0 {
		o.ListPageSize = MaxListPageSize
	}
	if o.BlockSize > MaxBlockSize {
		return o, fmt.Errorf("azureadapter: BlockSize %d is above the service's %d", o.BlockSize, int64(MaxBlockSize))
	}
	if o.BlockSize == 0 {
		o.BlockSize = DefaultBlockSize
	}
	if o.CopyTimeout == 0 {
		o.CopyTimeout = DefaultCopyTimeout
	}
	return o, nil
}

// FS is a fencefs backend over one container and blob name prefix. It
// implements backend.Backend, Stater, Writer, DirMaker, Walker, Remover,
// BatchRemover, Renamer, Copier and CapabilityReporter, and is safe for
// concurrent use.
type FS struct {
	client *container.Client
	// keys maps storage paths to the blob names below the prefix.
	keys objstore.Keys
	opts Options
}

// KeyLimits returns the blob name limits of the service and of this
// adapter, by which New and ParseMountSpec judge a prefix
// ([objstore.CheckPrefix]) and the backend its paths.
func KeyLimits() objstore.Limits {
	return objstore.Limits{MaxKeyBytes: MaxKeyBytes, MaxNameBytes: MaxNameBytes, MaxSegments: MaxSegments}
}

// New returns a backend over the container client, limited to the blobs
// below prefix ("" for the whole container; "tenant1" and "tenant1/" are
// the same). It does no I/O. The prefix must be one
// [objstore.CheckPrefix] accepts with [KeyLimits]: a canonical storage
// path with room for a blob name below it.
func New(client *container.Client, prefix string, opts Options) (*FS, error) {
	if client == nil {
		return nil, errors.New("azureadapter: nil client")
	}
	keys, err := objstore.NewKeys(prefix, KeyLimits())
	if err != nil {
		return nil, fmt.Errorf("azureadapter: %w", err)
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return &FS{client: client, keys: keys, opts: o}, nil
}

// Capabilities reports what the backend can do: versions (ETags) and
// atomic conditional writes and removals (Delete Blob with If-Match),
// modification times, empty directories (through markers); no symlinks,
// mode bits or special files, and no atomic rename (a copy, then a
// conditional delete).
func (f *FS) Capabilities() backend.Capabilities {
	return backend.Capabilities{
		Name:                "azblob",
		ReadOnly:            f.opts.ReadOnly,
		ModTimes:            true,
		EmptyDirs:           true,
		AtomicPreconditions: true,
		AtomicRemove:        true,
		Versions:            true,
		MaxNameBytes:        MaxNameBytes,
	}
}

// Container returns the container's URL.
func (f *FS) Container() string { return f.client.URL() }

// Key returns the blob name of the storage path name: the file's blob, or
// for "." the name prefix of the root (empty for a whole container).
func (f *FS) Key(name string) (string, error) {
	if err := f.keys.Check("key", name); err != nil {
		return "", err
	}
	return f.keys.Key(name), nil
}

// etagOf returns the ETag of an SDK answer as a version string, always
// quoted as the ETag header is: listings give it bare ("0x8D...").
func etagOf(e *azcore.ETag) string {
	if e == nil || *e == "" {
		return ""
	}
	s := string(*e)
	if !strings.HasPrefix(s, `"`) {
		s = `"` + s + `"`
	}
	return s
}

// etagPtr returns nil for "" and the ETag otherwise.
func etagPtr(s string) *azcore.ETag {
	if s == "" {
		return nil
	}
	return to.Ptr(azcore.ETag(s))
}

// deref returns *p, or the zero value for nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
