package main

import (
	"context"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	smithymiddleware "github.com/aws/smithy-go/middleware"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fencefs/fencefs/cmd/fencefs/internal/config"
	"github.com/fencefs/fencefs/s3adapter"
	"github.com/fencefs/fencefs/sftpadapter"
	"github.com/fencefs/fencefs/tenant"
)

// storage is what the namespaces of one server share: the S3 clients,
// one per mount name and endpoint for every tenant (its connection pool
// with it), the local and SFTP backends of identical specs (a mount every
// tenant shares is opened, and connected, once), and the count of storage
// requests for /metrics.
type storage struct {
	// requests counts S3 and SFTP requests by mount and operation; nil
	// counts nothing.
	requests *prometheus.CounterVec
	clients  *tenant.Cache[s3ClientKey, *s3.Client]
	backends *tenant.Cache[backendKey, connected]
	// pools are the SSH connections of SFTP mounts, one per mount name,
	// server, account and credentials, whatever the root.
	pools *tenant.Cache[backendKey, *sftpadapter.Pool]
}

// backendKey is what a local or SFTP backend is made of. An SFTP
// backend's requests are counted under its mount's name, so the name is
// part of its key (empty for local ones).
type backendKey struct {
	mount   string
	spec    config.MountSpec
	timeout time.Duration
}

// newBackendKey is the key of the backend of mount name with spec m.
func newBackendKey(name string, m config.MountSpec, timeout time.Duration) backendKey {
	if m.Kind != config.KindSFTP {
		name = ""
	}
	return backendKey{name, m, timeout}
}

// sharedBackends bounds the local and SFTP backends kept, one per
// distinct spec. A backend is closed once it is out of the cache and no
// namespace holds it, so a tenant's own mount still closes soon after its
// namespace leaves the tenant cache; a spec every tenant shares is asked
// for at each tenant's opening and so stays among the most recent.
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

func newStorage(requests *prometheus.CounterVec) *storage {
	st := &storage{requests: requests}
	st.clients, _ = tenant.NewCache(tenant.CacheOptions[s3ClientKey, *s3.Client]{ // Size is valid: no error
		Size: s3Clients,
		Build: func(ctx context.Context, k s3ClientKey) (*s3.Client, error) {
			return s3adapter.NewClient(ctx, s3adapter.Config{
				Endpoint:      k.endpoint,
				Region:        k.region,
				PathStyle:     k.pathStyle,
				ClientOptions: st.clientOptions(k.mount, k.timeout),
			})
		},
	})
	st.backends, _ = tenant.NewCache(tenant.CacheOptions[backendKey, connected]{ // Size is valid: no error
		Size:    sharedBackends,
		Build:   st.openBackend,
		OnEvict: func(_ backendKey, b connected) { b.Close() },
	})
	st.pools, _ = tenant.NewCache(tenant.CacheOptions[backendKey, *sftpadapter.Pool]{ // Size is valid: no error
		Size: sharedBackends,
		Build: func(_ context.Context, k backendKey) (*sftpadapter.Pool, error) {
			cfg, err := sftpConfig(k.spec.SFTP)
			if err != nil {
				return nil, err
			}
			cfg.DialTimeout, cfg.OpTimeout = k.timeout, k.timeout
			if st.requests != nil {
				cfg.OnRequest = func(op string) { st.requests.WithLabelValues(k.mount, op).Inc() }
			}
			return sftpadapter.NewPool(cfg)
		},
		OnEvict: func(_ backendKey, p *sftpadapter.Pool) { p.Close() },
	})
	return st
}

// openBackend opens a local or SFTP mount; an SFTP root is opened over
// the pool of its server, which it holds until it is closed.
func (st *storage) openBackend(ctx context.Context, k backendKey) (connected, error) {
	if k.spec.Kind != config.KindSFTP {
		return openConnected(ctx, k.spec, k.timeout)
	}
	pk := k
	pk.spec = config.MountSpec{Kind: config.KindSFTP, SFTP: k.spec.SFTP} // the root and ro do not matter
	pk.spec.SFTP.Root = ""
	pool, release, err := st.pools.Get(ctx, pk)
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
// held close when their namespaces do.
func (st *storage) Close() {
	st.backends.Close()
	st.pools.Close()
}

// s3Client returns the shared client of the S3 mount named mount, or nil
// when st is nil (each backend then builds its own).
func (st *storage) s3Client(ctx context.Context, mount string, spec config.S3Spec, timeout time.Duration) (*s3.Client, error) {
	if st == nil {
		return nil, nil
	}
	c, release, err := st.clients.Get(ctx, s3ClientKey{mount, spec.Endpoint, spec.Region, spec.PathStyle, timeout})
	if err != nil {
		return nil, err
	}
	release() // a client needs no closing: the cache may drop it any time
	return c, nil
}

// clientOptions are the options of the S3 clients of mount: requests
// bounded by timeout, and counted.
func (st *storage) clientOptions(mount string, timeout time.Duration) []func(*s3.Options) {
	return []func(*s3.Options){func(o *s3.Options) {
		o.HTTPClient = storageHTTPClient(timeout)
		if st != nil && st.requests != nil {
			o.APIOptions = append(o.APIOptions, st.countRequests(mount))
		}
	}}
}

// countRequests adds to a client's stack a step that counts each attempt
// of a request (retries included) by mount and S3 operation.
func (st *storage) countRequests(mount string) func(*smithymiddleware.Stack) error {
	return func(stack *smithymiddleware.Stack) error {
		return stack.Finalize.Add(smithymiddleware.FinalizeMiddlewareFunc("fencefsStorageRequests",
			func(ctx context.Context, in smithymiddleware.FinalizeInput, next smithymiddleware.FinalizeHandler) (smithymiddleware.FinalizeOutput, smithymiddleware.Metadata, error) {
				st.requests.WithLabelValues(mount, awsmiddleware.GetOperationName(ctx)).Inc()
				return next.HandleFinalize(ctx, in)
			}), smithymiddleware.After)
	}
}
