// Package s3adapter stores a fencefs backend in an S3-compatible bucket,
// under an optional key prefix (one prefix per tenant), over
// aws-sdk-go-v2.
//
// # Keys and directories
//
// The storage path "a/b.txt" is the object key prefix+"a/b.txt". The
// prefix is compared with its trailing slash, so the backend of prefix
// "tenant1" never sees the keys of "tenant10". S3 has no directories, so
// they are emulated: a directory exists when some key lies below it
// ("a/" is a prefix of a key) or when its marker object "a/" exists;
// MkdirAll writes markers, so empty directories persist. A write needs
// no markers: its parents exist because the new key lies below them.
//
// Keys that other tools wrote and that are not canonical storage paths
// (a leading "/", empty, "." or ".." segments, a NUL or a backslash, a
// segment starting with "~" or longer than 255 bytes) are skipped by List
// and Walk: they are never shown under another name. These rules, and
// the walk, are package objstore's, which gcsadapter and azureadapter
// share.
//
// A key that is both an object and a prefix ("a" next to "a/b") is a
// directory: List, Walk and Stat report the directory, OpenRead and
// OpenWrite of "a" fail with backend.ErrIsDir, and the object "a" cannot
// be reached through this backend (as in S3 file gateways such as
// Mountpoint). Stat therefore lists the keys that start with the name,
// which shows the object and the directory below it in one request, and
// OpenRead sends that listing, then a GET with If-Match on the listed
// ETag.
//
// # Writes
//
// Writes stream. Up to Options.MultipartThreshold bytes are buffered and
// sent with one PutObject at Commit; a larger file becomes a multipart
// upload whose parts are sent while the caller writes, with at most two
// parts in memory whatever the file's size. Commit completes the upload;
// Close without a successful Commit aborts it, so that no parts are left
// behind (a failed Commit leaves the abort to Close, so that Commit
// itself fails by its context's deadline even when the server hangs). Preconditions are S3 conditional writes, on PutObject
// and CompleteMultipartUpload alike: If-None-Match: * for CreateOnly and
// If-Match with the ETag for MatchVersion. MatchHash reads the current
// object, hashes it and then writes with If-Match on the ETag it read, so
// the check and the write are one atomic compare-and-swap.
package s3adapter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/objstore"
)

// Limits of S3 and of this adapter.
const (
	// MaxKeyBytes is the longest object key S3 accepts.
	MaxKeyBytes = 1024
	// MaxNameBytes is the longest single path component this adapter
	// accepts, as on common local file systems.
	MaxNameBytes = 255
	// MinPartSize is the smallest part AWS S3 accepts in a multipart
	// upload (except for the last part).
	MinPartSize = 5 << 20
	// DefaultPartSize is the part size used when Options.PartSize is 0.
	DefaultPartSize = 8 << 20
	// DefaultAbortTimeout bounds the clean-up of an abandoned multipart
	// upload when Options.AbortTimeout is 0.
	DefaultAbortTimeout = 30 * time.Second
	// listPageSize is the number of keys asked for per listing request,
	// the most S3 returns.
	listPageSize = 1000
)

// Options tune an [FS].
type Options struct {
	// PartSize is the size of each multipart upload part; 0 means
	// DefaultPartSize. AWS S3 refuses parts below MinPartSize (other
	// servers may accept smaller ones) and uploads of more than 10,000
	// parts, so the largest file is 10,000 * PartSize (78 GiB by
	// default).
	PartSize int64
	// MultipartThreshold is the largest file written with a single
	// PutObject; larger files use a multipart upload. 0 means PartSize.
	// A write holds at most max(MultipartThreshold, 2*PartSize) bytes in
	// memory.
	MultipartThreshold int64
	// AbortTimeout bounds how long Close keeps trying to abort an
	// abandoned multipart upload (the server may be restarting); 0 means
	// DefaultAbortTimeout.
	AbortTimeout time.Duration
	// CopyPartSize is the part size of a multipart copy (a copy with a
	// target precondition, or of an object larger than one part); 0 means
	// MaxCopyPartSize. AWS S3 takes parts of 5 MiB to 5 GiB.
	CopyPartSize int64
	// ReadOnly makes every write fail with backend.ErrReadOnly.
	ReadOnly bool
}

func (o Options) withDefaults() (Options, error) {
	if o.PartSize < 0 || o.MultipartThreshold < 0 || o.AbortTimeout < 0 || o.CopyPartSize < 0 {
		return o, errors.New("s3adapter: negative PartSize, MultipartThreshold, AbortTimeout or CopyPartSize")
	}
	if o.CopyPartSize == 0 || o.CopyPartSize > MaxCopyPartSize {
		o.CopyPartSize = MaxCopyPartSize
	}
	if o.PartSize == 0 {
		o.PartSize = DefaultPartSize
	}
	if o.MultipartThreshold == 0 {
		o.MultipartThreshold = o.PartSize
	}
	if o.AbortTimeout == 0 {
		o.AbortTimeout = DefaultAbortTimeout
	}
	return o, nil
}

// FS is a fencefs backend over one bucket and key prefix. It implements
// backend.Backend, Stater, Writer, DirMaker, Walker and
// CapabilityReporter, and is safe for concurrent use.
type FS struct {
	client *s3.Client
	bucket string
	// keys maps storage paths to the keys below the prefix.
	keys objstore.Keys
	opts Options
	// partChecksum is the checksum algorithm of multipart uploads: CRC32
	// unless the client computes checksums only when required, as the
	// SDK's upload manager does.
	partChecksum types.ChecksumAlgorithm
}

// KeyLimits returns the key limits of S3 and of this adapter, by which
// New and mount spec parsers judge a prefix ([objstore.CheckPrefix]) and
// the backend its paths.
func KeyLimits() objstore.Limits {
	return objstore.Limits{MaxKeyBytes: MaxKeyBytes, MaxNameBytes: MaxNameBytes}
}

// New returns a backend over bucket, limited to the keys below prefix
// ("" for the whole bucket; "tenant1" and "tenant1/" are the same). It
// does no I/O. The prefix must be one [objstore.CheckPrefix] accepts with
// [KeyLimits]: a canonical storage path.
func New(client *s3.Client, bucket, prefix string, opts Options) (*FS, error) {
	if client == nil {
		return nil, errors.New("s3adapter: nil client")
	}
	if bucket == "" {
		return nil, errors.New("s3adapter: empty bucket name")
	}
	keys, err := objstore.NewKeys(prefix, KeyLimits())
	if err != nil {
		return nil, fmt.Errorf("s3adapter: %w", err)
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	f := &FS{client: client, bucket: bucket, keys: keys, opts: o}
	if client.Options().RequestChecksumCalculation != aws.RequestChecksumCalculationWhenRequired {
		f.partChecksum = types.ChecksumAlgorithmCrc32
	}
	return f, nil
}

// Config describes a bucket to open with [Open].
type Config struct {
	// Bucket names the bucket; required.
	Bucket string
	// Prefix is the key prefix of the backend's root ("" for the whole
	// bucket).
	Prefix string
	// Endpoint is the server's base URL ("http://127.0.0.1:7070"); empty
	// for AWS.
	Endpoint string
	// Region is the signing region; empty leaves it to the SDK's default
	// chain (AWS_REGION, the shared config), then "us-east-1".
	Region string
	// PathStyle addresses buckets as endpoint/bucket instead of
	// bucket.endpoint, as most non-AWS servers need.
	PathStyle bool
	// ChecksumWhenRequired sends and validates checksums only when an
	// operation requires them, for servers that do not support the
	// SDK's default checksums.
	ChecksumWhenRequired bool
	// AccessKeyID and SecretAccessKey (and SessionToken), when set, are
	// static credentials; otherwise credentials come from the SDK's
	// default chain (environment, shared files, web identity, instance
	// roles).
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	// ClientOptions adjust the S3 client further (HTTP client, retries,
	// middleware).
	ClientOptions []func(*s3.Options)
	// Client, when set, is the client Open uses (one NewClient built, for
	// instance, shared with other backends); the fields above about the
	// client are then not read.
	Client *s3.Client
	// Options tune the backend.
	Options Options
}

// Open builds an S3 client from cfg through the SDK's configuration
// chain (or takes cfg.Client), checks that the bucket can be reached, and
// returns the backend over it.
func Open(ctx context.Context, cfg Config) (*FS, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("s3adapter: Config.Bucket is empty")
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
	if _, err := client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(cfg.Bucket)}); err != nil {
		return nil, fmt.Errorf("s3adapter: bucket %q: %w", cfg.Bucket, mapError(err))
	}
	return f, nil
}

// NewClient builds the S3 client Open would build from cfg, for a caller
// that shares one client among the backends of many prefixes or buckets
// (through Config.Client or New). Only the fields about the client are
// read: Endpoint, Region, PathStyle, ChecksumWhenRequired, the credentials
// and ClientOptions.
func NewClient(ctx context.Context, cfg Config) (*s3.Client, error) {
	var loads []func(*config.LoadOptions) error
	if cfg.Region != "" {
		loads = append(loads, config.WithRegion(cfg.Region))
	}
	if cfg.AccessKeyID != "" || cfg.SecretAccessKey != "" {
		creds := aws.Credentials{AccessKeyID: cfg.AccessKeyID, SecretAccessKey: cfg.SecretAccessKey, SessionToken: cfg.SessionToken, Source: "s3adapter.Config"}
		loads = append(loads, config.WithCredentialsProvider(aws.CredentialsProviderFunc(
			func(context.Context) (aws.Credentials, error) { return creds, nil })))
	}
	if cfg.ChecksumWhenRequired {
		loads = append(loads,
			config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
			config.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, loads...)
	if err != nil {
		return nil, fmt.Errorf("s3adapter: loading AWS configuration: %w", err)
	}
	if awsCfg.Region == "" {
		awsCfg.Region = "us-east-1"
	}
	return s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		o.UsePathStyle = cfg.PathStyle
		for _, fn := range cfg.ClientOptions {
			fn(o)
		}
	}), nil
}

// Capabilities reports what the backend can do: versions (ETags) and
// atomic conditional writes, modification times, empty directories
// (through markers); no symlinks, mode bits or special files.
func (f *FS) Capabilities() backend.Capabilities {
	return backend.Capabilities{
		Name:                "s3",
		ReadOnly:            f.opts.ReadOnly,
		ModTimes:            true,
		EmptyDirs:           true,
		AtomicPreconditions: true,
		Versions:            true,
		MaxNameBytes:        MaxNameBytes,
	}
}

// Bucket returns the bucket name.
func (f *FS) Bucket() string { return f.bucket }

// Key returns the object key of the storage path name: the file's key,
// or for "." the key prefix of the root (empty for a whole bucket).
func (f *FS) Key(name string) (string, error) {
	if err := f.keys.Check("key", name); err != nil {
		return "", err
	}
	return f.keys.Key(name), nil
}
