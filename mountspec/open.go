package mountspec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	smithymiddleware "github.com/aws/smithy-go/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/crypto/ssh"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/s3adapter"
	"github.com/fencefs/fencefs/sftpadapter"
	"github.com/fencefs/fencefs/telemetry"
	"github.com/fencefs/fencefs/tenant"
)

// Options configure an Opener.
type Options struct {
	// Requests, when set, counts S3 and SFTP requests by mount name and
	// operation (the S3 operation, each attempt counted; the SFTP request
	// type). Its labels are "mount" and "operation".
	Requests *prometheus.CounterVec
	// Schemes open the kinds of storage this package does not know.
	Schemes Schemes
	// Tracing, when set, makes a span of each S3 request (each attempt)
	// under the span of the storage operation that sends it; nil builds
	// nothing.
	Tracing *telemetry.Tracing
}

// An Opener opens mount specs to backends and shares, between the
// namespaces of one server, what they can share: one S3 client (and its
// connection pool) per mount name, endpoint, region, addressing and
// timeout; one local or SFTP backend per identical spec, so that a mount
// every tenant shares is opened, and connected, once; one SSH connection
// pool per SFTP mount name, server, account and credentials, whatever the
// root. A nil *Opener shares nothing: each Open makes its own. An Opener
// is safe for concurrent use.
type Opener struct {
	requests *prometheus.CounterVec
	schemes  Schemes
	tracing  *telemetry.Tracing
	clients  *tenant.Cache[s3ClientKey, *s3.Client]
	backends *tenant.Cache[backendKey, connected]
	pools    *tenant.Cache[backendKey, *sftpadapter.Pool]
	buckets  knownBuckets
}

// knownBuckets holds the buckets a client of the Opener has reached: a
// tenant's backend over a known bucket is opened with no request, so that
// a cold tenant costs no storage request beyond its call's own (the
// call's requests fail as any would if the bucket went away since).
type knownBuckets struct {
	mu    sync.Mutex
	known map[bucketKey]struct{}
}

// bucketKey names a bucket as one client reaches it.
type bucketKey struct {
	client *s3.Client
	bucket string
}

// maxKnownBuckets bounds knownBuckets; past it the set starts again (the
// clients it names may have left the Opener's cache).
const maxKnownBuckets = 4096

func (k *knownBuckets) has(client *s3.Client, bucket string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.known[bucketKey{client, bucket}]
	return ok
}

func (k *knownBuckets) add(client *s3.Client, bucket string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.known == nil || len(k.known) >= maxKnownBuckets {
		k.known = map[bucketKey]struct{}{}
	}
	k.known[bucketKey{client, bucket}] = struct{}{}
}

// backendKey is what a local or SFTP backend is made of. An SFTP
// backend's requests are counted under its mount's name, so the name is
// part of its key (empty for local ones).
type backendKey struct {
	mount   string
	spec    Spec
	timeout time.Duration
}

// newBackendKey is the key of the backend of mount name with spec m.
func newBackendKey(name string, m Spec, timeout time.Duration) backendKey {
	if m.Kind != KindSFTP {
		name = ""
	}
	return backendKey{name, m, timeout}
}

// sharedBackends bounds the local and SFTP backends kept, one per
// distinct spec. A backend is closed once it is out of the cache and no
// namespace holds it, so a tenant's own mount still closes soon after its
// namespace is closed; a spec every tenant shares is asked for at each
// tenant's opening and so stays among the most recent.
const sharedBackends = 64

// s3ClientKey is what an S3 client is made of. Credentials come from the
// process's environment, the same for every mount; the mount's name is
// part of the key so that the client's requests are counted under it.
type s3ClientKey struct {
	mount, endpoint, region string
	pathStyle               bool
	timeout                 time.Duration
}

// s3Clients bounds the clients kept: one per (mount, endpoint, region),
// so a handful unless tenants' templates name many endpoints. An evicted
// client stays in use by the backends that hold it.
const s3Clients = 64

// New returns an Opener; Close it when the server stops.
func New(opts Options) *Opener {
	o := &Opener{requests: opts.Requests, schemes: opts.Schemes, tracing: opts.Tracing}
	o.clients, _ = tenant.NewCache(tenant.CacheOptions[s3ClientKey, *s3.Client]{ // Size is valid: no error
		Size: s3Clients,
		Build: func(ctx context.Context, k s3ClientKey) (*s3.Client, error) {
			return s3adapter.NewClient(ctx, s3adapter.Config{
				Endpoint:      k.endpoint,
				Region:        k.region,
				PathStyle:     k.pathStyle,
				ClientOptions: o.clientOptions(k.mount, k.timeout),
			})
		},
	})
	o.backends, _ = tenant.NewCache(tenant.CacheOptions[backendKey, connected]{ // Size is valid: no error
		Size:    sharedBackends,
		Build:   o.openBackend,
		OnEvict: func(_ backendKey, b connected) { b.Close() },
	})
	o.pools, _ = tenant.NewCache(tenant.CacheOptions[backendKey, *sftpadapter.Pool]{ // Size is valid: no error
		Size: sharedBackends,
		Build: func(_ context.Context, k backendKey) (*sftpadapter.Pool, error) {
			cfg, err := sftpConfig(k.spec.SFTP)
			if err != nil {
				return nil, err
			}
			cfg.DialTimeout, cfg.OpTimeout = k.timeout, k.timeout
			if o.requests != nil {
				cfg.OnRequest = func(op string) { o.requests.WithLabelValues(k.mount, op).Inc() }
			}
			return sftpadapter.NewPool(cfg)
		},
		OnEvict: func(_ backendKey, p *sftpadapter.Pool) { p.Close() },
	})
	return o
}

// Open opens the spec s of the mount named name (the name labels its
// requests in Options.Requests). Network storage is checked at once,
// within timeout, and each of its requests later gets timeout too. A
// read-only spec gives a backend that refuses every change. Closing the
// io.Closer releases the backend; the error names the mount and, for a
// storage that did not answer in time, the timeout.
func (o *Opener) Open(ctx context.Context, name string, s Spec, timeout time.Duration) (backend.Backend, io.Closer, error) {
	b, c, err := o.open(ctx, name, s, timeout)
	if err != nil {
		return nil, nil, mountErr(ctx, name, timeout, err)
	}
	if s.ReadOnly {
		b = backend.ReadOnly(b)
	}
	return b, c, nil
}

// Probe opens s and stats its root within timeout: the check of a
// readiness probe. The error names the mount.
func (o *Opener) Probe(ctx context.Context, name string, s Spec, timeout time.Duration) error {
	b, c, err := o.Open(ctx, name, s, timeout)
	if err != nil {
		return err
	}
	defer c.Close()
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := backend.Stat(sctx, b, "."); err != nil {
		return mountErr(ctx, name, timeout, err)
	}
	return nil
}

// open opens s without the read-only wrapper.
func (o *Opener) open(ctx context.Context, name string, s Spec, timeout time.Duration) (backend.Backend, io.Closer, error) {
	if s.Kind != KindLocal {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	switch s.Kind {
	case KindLocal, KindSFTP:
		if o != nil {
			b, release, err := o.backends.Get(ctx, newBackendKey(name, s, timeout))
			if err != nil {
				return nil, nil, err
			}
			return b, closerFunc(release), nil
		}
		b, err := openConnected(ctx, s, timeout)
		if err != nil {
			return nil, nil, err
		}
		return b, b, nil
	case KindS3:
		client, err := o.s3Client(ctx, name, s.S3, timeout)
		if err != nil {
			return nil, nil, err
		}
		opts := s3adapter.Options{ReadOnly: s.ReadOnly}
		if client != nil && o.buckets.has(client, s.S3.Bucket) {
			b, err := s3adapter.New(client, s.S3.Bucket, s.S3.Prefix, opts)
			return b, closerFunc(func() {}), err
		}
		b, err := s3adapter.Open(ctx, s3adapter.Config{
			Bucket:        s.S3.Bucket,
			Prefix:        s.S3.Prefix,
			Endpoint:      s.S3.Endpoint,
			Region:        s.S3.Region,
			PathStyle:     s.S3.PathStyle,
			Options:       opts,
			ClientOptions: o.clientOptions(name, timeout),
			Client:        client,
		})
		if err == nil && client != nil {
			o.buckets.add(client, s.S3.Bucket)
		}
		return b, closerFunc(func() {}), err
	}
	if o != nil {
		if sc, ok := o.schemes[string(s.Kind)]; ok {
			return sc.Open(ctx, s, timeout)
		}
	}
	return nil, nil, fmt.Errorf("unknown mount kind %q", s.Kind)
}

// mountErr says why the mount name could not be opened; a storage that
// did not answer in time is named as such, with the setting that bounds
// the wait.
func mountErr(ctx context.Context, name string, timeout time.Duration, err error) error {
	var ne net.Error
	if (errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()) && ctx.Err() == nil {
		return fmt.Errorf("mount %q: the storage did not answer within %v (set timeout= in the spec, or --storage-timeout, to wait longer)", name, timeout)
	}
	return fmt.Errorf("mount %q: %w", name, err)
}

// connected is a backend that holds a descriptor or a connection.
type connected interface {
	backend.Backend
	io.Closer
}

// openConnected opens a local or SFTP mount of its own.
func openConnected(ctx context.Context, m Spec, timeout time.Duration) (connected, error) {
	if m.Kind == KindLocal {
		return local.New(m.Dir)
	}
	cfg, err := sftpConfig(m.SFTP)
	if err != nil {
		return nil, err
	}
	cfg.DialTimeout, cfg.OpTimeout = timeout, timeout
	return sftpadapter.Dial(ctx, cfg)
}

// closerFunc is a func as an io.Closer.
type closerFunc func()

func (f closerFunc) Close() error {
	f()
	return nil
}

// openBackend opens a local or SFTP mount; an SFTP root is opened over
// the pool of its server, which it holds until it is closed.
func (o *Opener) openBackend(ctx context.Context, k backendKey) (connected, error) {
	if k.spec.Kind != KindSFTP {
		return openConnected(ctx, k.spec, k.timeout)
	}
	pk := k
	pk.spec = Spec{Kind: KindSFTP, SFTP: k.spec.SFTP} // the root and ro do not matter
	pk.spec.SFTP.Root = ""
	pool, release, err := o.pools.Get(ctx, pk)
	if err != nil {
		return nil, err
	}
	f, err := pool.Open(ctx, k.spec.SFTP.Root)
	if err != nil {
		release()
		return nil, err
	}
	return &pooled{f, release}, nil
}

// pooled is an SFTP backend holding its pool.
type pooled struct {
	*sftpadapter.FS
	release func()
}

func (p *pooled) Close() error {
	err := p.FS.Close()
	p.release()
	return err
}

// Close closes the backends no namespace holds any more; those still
// held close when their holders close them.
func (o *Opener) Close() {
	o.backends.Close()
	o.pools.Close()
}

// s3Client returns the shared client of the S3 mount named mount, or nil
// when o is nil (each backend then builds its own).
func (o *Opener) s3Client(ctx context.Context, mount string, spec S3Spec, timeout time.Duration) (*s3.Client, error) {
	if o == nil {
		return nil, nil
	}
	c, release, err := o.clients.Get(ctx, s3ClientKey{mount, spec.Endpoint, spec.Region, spec.PathStyle, timeout})
	if err != nil {
		return nil, err
	}
	release() // a client needs no closing: the cache may drop it any time
	return c, nil
}

// clientOptions are the options of the S3 clients of mount: requests
// bounded by timeout, counted, and traced when the Opener traces.
func (o *Opener) clientOptions(mount string, timeout time.Duration) []func(*s3.Options) {
	fns := []func(*s3.Options){func(opts *s3.Options) {
		opts.HTTPClient = HTTPClient(timeout)
		if o != nil && o.requests != nil {
			opts.APIOptions = append(opts.APIOptions, o.countRequests(mount))
		}
	}}
	if o != nil {
		fns = append(fns, o.tracing.S3ClientOptions()...)
	}
	return fns
}

// countRequests adds to a client's stack a step that counts each attempt
// of a request (retries included) by mount and S3 operation.
func (o *Opener) countRequests(mount string) func(*smithymiddleware.Stack) error {
	return func(stack *smithymiddleware.Stack) error {
		return stack.Finalize.Add(smithymiddleware.FinalizeMiddlewareFunc("fencefsStorageRequests",
			func(ctx context.Context, in smithymiddleware.FinalizeInput, next smithymiddleware.FinalizeHandler) (smithymiddleware.FinalizeOutput, smithymiddleware.Metadata, error) {
				o.requests.WithLabelValues(mount, awsmiddleware.GetOperationName(ctx)).Inc()
				return next.HandleFinalize(ctx, in)
			}), smithymiddleware.After)
	}
}

// sftpConfig turns an SFTP spec into the adapter's configuration, reading
// the password from the environment and defaulting the host key check to
// ~/.ssh/known_hosts.
func sftpConfig(s SFTPSpec) (sftpadapter.Config, error) {
	cfg := sftpadapter.Config{
		Addr:                  s.Addr(),
		User:                  s.User,
		KeyFile:               s.KeyFile,
		Root:                  s.Root,
		KnownHostsFile:        s.KnownHostsFile,
		InsecureIgnoreHostKey: s.Insecure,
	}
	if s.PasswordEnv != "" {
		pw, ok := os.LookupEnv(s.PasswordEnv)
		if !ok {
			return cfg, fmt.Errorf("password_env: the environment variable %s is not set", s.PasswordEnv)
		}
		cfg.Password = pw
	}
	if s.HostKey != "" {
		key, _, _, _, err := ssh.ParseAuthorizedKey([]byte(s.HostKey))
		if err != nil {
			return cfg, fmt.Errorf("host_key: %w", err)
		}
		cfg.HostKey = key
	}
	if cfg.KnownHostsFile == "" && cfg.HostKey == nil && !cfg.InsecureIgnoreHostKey {
		home, err := os.UserHomeDir()
		kh := filepath.Join(home, ".ssh", "known_hosts")
		if _, statErr := os.Stat(kh); err != nil || statErr != nil {
			return cfg, errors.New("no host key check: add known_hosts=FILE or host_key=KEY (no ~/.ssh/known_hosts was found)")
		}
		cfg.KnownHostsFile = kh
	}
	return cfg, nil
}
