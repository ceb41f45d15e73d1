// Package gcsadapter stores a fencefs backend in a Google Cloud Storage
// bucket, under an optional object-name prefix (one prefix per tenant),
// over cloud.google.com/go/storage.
//
// # Names and directories
//
// The storage path "a/b.txt" is the object prefix+"a/b.txt". The prefix
// is compared with its trailing slash, so the backend of prefix "tenant1"
// never sees the objects of "tenant10". Directories are emulated exactly
// as by the S3 adapter, by package objstore: a directory exists when some
// object lies below it or when its marker object "a/" exists; MkdirAll
// writes markers, so empty directories persist, and a write needs none.
//
// Names that other tools wrote and that are not canonical storage paths
// (a leading "/", empty, "." or ".." segments, a NUL or a backslash, a
// segment starting with "~" or longer than 255 bytes) are skipped by List
// and Walk: they are never shown under another name. Other control
// characters are names like any other, as on S3, where the service takes
// them (Cloud Storage refuses carriage returns and line feeds).
//
// An object that is also a prefix ("a" next to "a/b") is a directory:
// List, Walk and Stat report the directory, OpenRead and OpenWrite of "a"
// fail with backend.ErrIsDir, and the object "a" cannot be reached
// through this backend. Stat lists the names that start with the name,
// which shows the object and the directory below it in one request, and
// OpenRead sends that listing, then a download conditional on the listed
// generation.
//
// # Versions and compare-and-swap
//
// A file's version is its object generation, in decimal. Every change
// with a precondition is a request with a generation precondition, which
// Cloud Storage evaluates atomically with the change
// (https://cloud.google.com/storage/docs/request-preconditions):
// ifGenerationMatch=0 (DoesNotExist) for CreateOnly, ifGenerationMatch=G
// for MatchVersion, and for MatchHash the generation of the object whose
// bytes were read and hashed.
//
// # Writes
//
// Writes stream through the SDK's Writer: up to Options.ChunkSize bytes
// are buffered and sent in one request at Commit; a larger file becomes a
// resumable upload whose chunks are sent while the caller writes, with
// one chunk in memory. Nothing is visible until the upload is finalized
// by Commit; Close without a successful Commit cancels the upload, whose
// session is then never finalized and leaves no object behind.
package gcsadapter

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/option"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/objstore"
)

// Limits of Cloud Storage and of this adapter.
const (
	// MaxKeyBytes is the longest object name Cloud Storage accepts.
	MaxKeyBytes = 1024
	// MaxNameBytes is the longest single path component this adapter
	// accepts, as on common local file systems.
	MaxNameBytes = 255
	// DefaultChunkSize is the chunk size of resumable uploads when
	// Options.ChunkSize is 0 (the SDK's default).
	DefaultChunkSize = 16 << 20
	// MinChunkSize is the granularity of resumable upload chunks; the SDK
	// rounds ChunkSize up to a multiple of it.
	MinChunkSize = 256 << 10
	// listPageSize is the number of names asked for per listing request,
	// the most Cloud Storage returns.
	listPageSize = 1000
)

// Options tune an [FS].
type Options struct {
	// ChunkSize is the size of each chunk of a resumable upload, and the
	// largest file written with a single request; 0 means
	// DefaultChunkSize. A write holds one chunk in memory.
	ChunkSize int
	// ReadOnly makes every change fail with backend.ErrReadOnly.
	ReadOnly bool
}

func (o Options) withDefaults() (Options, error) {
	if o.ChunkSize < 0 {
		return o, errors.New("gcsadapter: negative ChunkSize")
	}
	if o.ChunkSize == 0 {
		o.ChunkSize = DefaultChunkSize
	}
	return o, nil
}

// FS is a fencefs backend over one bucket and name prefix. It implements
// backend.Backend, Stater, Writer, DirMaker, Walker, Remover,
// BatchRemover, Renamer, Copier and CapabilityReporter, and is safe for
// concurrent use.
type FS struct {
	client *storage.Client
	bucket *storage.BucketHandle
	name   string
	// keys maps storage paths to the object names below the prefix.
	keys objstore.Keys
	opts Options
}

// KeyLimits returns the object name limits of Cloud Storage and of this
// adapter, by which New and ParseMountSpec judge a prefix
// ([objstore.CheckPrefix]) and the backend its paths.
func KeyLimits() objstore.Limits {
	return objstore.Limits{MaxKeyBytes: MaxKeyBytes, MaxNameBytes: MaxNameBytes}
}

// New returns a backend over bucket, limited to the objects below prefix
// ("" for the whole bucket; "tenant1" and "tenant1/" are the same). It
// does no I/O, so one client serves the backends of many prefixes. The
// prefix must be one [objstore.CheckPrefix] accepts with [KeyLimits]: a
// canonical storage path.
func New(client *storage.Client, bucket, prefix string, opts Options) (*FS, error) {
	if client == nil {
		return nil, errors.New("gcsadapter: nil client")
	}
	if bucket == "" {
		return nil, errors.New("gcsadapter: empty bucket name")
	}
	keys, err := objstore.NewKeys(prefix, KeyLimits())
	if err != nil {
		return nil, fmt.Errorf("gcsadapter: %w", err)
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return &FS{client: client, bucket: client.Bucket(bucket), name: bucket, keys: keys, opts: o}, nil
}

// Config describes a bucket to open with [Open].
type Config struct {
	// Bucket names the bucket; required.
	Bucket string
	// Prefix is the name prefix of the backend's root ("" for the whole
	// bucket).
	Prefix string
	// Endpoint is the base URL of a server other than Cloud Storage (an
	// emulator: "http://127.0.0.1:4443"). With an endpoint, requests carry
	// no credentials. Empty means Cloud Storage, or the emulator named by
	// STORAGE_EMULATOR_HOST, as the SDK reads it.
	Endpoint string
	// ClientOptions adjust the client further (credentials, HTTP client).
	// Without them, credentials come from the SDK's default chain
	// (GOOGLE_APPLICATION_CREDENTIALS, gcloud's application default
	// credentials, the metadata server).
	ClientOptions []option.ClientOption
	// Client, when set, is the client Open uses (one NewClient built, for
	// instance, shared with the backends of other prefixes); Endpoint and
	// ClientOptions are then not read.
	Client *storage.Client
	// Options tune the backend.
	Options Options
}

// NewClient builds the client Open would build from cfg, for a caller that
// shares one client among the backends of many prefixes or buckets
// (through Config.Client or New). Only Endpoint and ClientOptions are
// read. The caller closes the client when no backend uses it any more.
func NewClient(ctx context.Context, cfg Config) (*storage.Client, error) {
	var opts []option.ClientOption
	if cfg.Endpoint != "" {
		// An emulator: its JSON API under /storage/v1/, no credentials,
		// and downloads through the JSON API, which emulators serve (the
		// SDK's default XML downloads need the real service's hosts).
		opts = append(opts,
			option.WithEndpoint(strings.TrimSuffix(cfg.Endpoint, "/")+"/storage/v1/"),
			option.WithoutAuthentication(),
			storage.WithJSONReads())
	}
	opts = append(opts, storage.WithDisabledClientMetrics())
	opts = append(opts, cfg.ClientOptions...)
	c, err := storage.NewClient(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("gcsadapter: creating the client: %w", err)
	}
	return c, nil
}

// Open builds a client from cfg through the SDK's credential chain (or
// takes cfg.Client), checks with [Probe] that the bucket can be reached,
// and returns the backend over it.
func Open(ctx context.Context, cfg Config) (*FS, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("gcsadapter: Config.Bucket is empty")
	}
	client := cfg.Client
	if client == nil {
		var err error
		if client, err = NewClient(ctx, cfg); err != nil {
			return nil, err
		}
	}
	f, err := New(client, cfg.Bucket, cfg.Prefix, cfg.Options)
	if err != nil {
		return nil, err
	}
	if err := f.Probe(ctx); err != nil {
		return nil, err
	}
	return f, nil
}

// Probe checks that the bucket can be reached with the client's
// credentials, with one request (the listing of at most one name below
// the prefix, which needs the same permission as the backend's reads),
// as a server does at start-up so that a wrong bucket or missing
// credentials fail early. A missing bucket is fs.ErrNotExist, a refusal
// fs.ErrPermission.
func (f *FS) Probe(ctx context.Context) error {
	if _, _, err := f.listPage(ctx, &storage.Query{Prefix: f.keys.Prefix()}, 1, ""); err != nil {
		return fmt.Errorf("gcsadapter: bucket %q: %w", f.name, mapError(err))
	}
	return nil
}

// Capabilities reports what the backend can do: versions (generations)
// and atomic conditional writes and removals, modification times, empty
// directories (through markers); no symlinks, mode bits or special files;
// renames are a copy and a removal, not atomic.
func (f *FS) Capabilities() backend.Capabilities {
	return backend.Capabilities{
		Name:                "gcs",
		ReadOnly:            f.opts.ReadOnly,
		ModTimes:            true,
		EmptyDirs:           true,
		AtomicPreconditions: true,
		AtomicRemove:        true,
		Versions:            true,
		MaxNameBytes:        MaxNameBytes,
	}
}

// Bucket returns the bucket name.
func (f *FS) Bucket() string { return f.name }

// Key returns the object name of the storage path name: the file's
// object, or for "." the name prefix of the root (empty for a whole
// bucket).
func (f *FS) Key(name string) (string, error) {
	if err := f.keys.Check("key", name); err != nil {
		return "", err
	}
	return f.keys.Key(name), nil
}

// object returns the handle of the object of a checked storage path.
func (f *FS) object(name string) *storage.ObjectHandle {
	return f.bucket.Object(f.keys.Key(name))
}

// version is the FileInfo version of a generation.
func version(gen int64) string { return strconv.FormatInt(gen, 10) }

// generation parses a version; a version this backend did not make
// matches no object.
func generation(v string) (int64, bool) {
	g, err := strconv.ParseInt(v, 10, 64)
	return g, err == nil && g > 0
}

// modTime is the modification time of an object: when this generation
// was written.
func modTime(a *storage.ObjectAttrs) time.Time {
	if !a.Created.IsZero() {
		return a.Created
	}
	return a.Updated
}
