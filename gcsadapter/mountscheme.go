package gcsadapter

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/option"
	htransport "google.golang.org/api/transport/http"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/mountspec"
)

// MountScheme opens gs:// mount specs for a server: a program registers
// it as mountspec.Schemes{"gs://": gcsadapter.NewMountScheme()}, and gs://
// specs then work in --mount, tenant templates and configuration files.
// Every mount of one endpoint and request timeout shares one client (and
// its connections), so the tenants of a template share them; each request
// must make progress within the timeout (mountspec.HTTPClient's rule),
// and a mount is probed when it is opened. Credentials come from the
// SDK's default chain; an endpoint (an emulator) takes none.
type MountScheme struct {
	mu      sync.Mutex
	clients map[mountClientKey]*storage.Client
}

type mountClientKey struct {
	endpoint string
	timeout  time.Duration
}

// NewMountScheme returns a MountScheme with no client yet.
func NewMountScheme() *MountScheme {
	return &MountScheme{clients: map[mountClientKey]*storage.Client{}}
}

var _ mountspec.Scheme = (*MountScheme)(nil)

// Parse checks rest, the spec after "gs://", as ParseMountSpec does.
func (s *MountScheme) Parse(rest string) (mountspec.Spec, error) {
	m, err := ParseMountSpec(Scheme + "://" + rest)
	if err != nil {
		return mountspec.Spec{}, err
	}
	return mountspec.Spec{ReadOnly: m.ReadOnly, Timeout: m.Timeout, Opaque: strings.TrimPrefix(m.String(), Scheme+"://")}, nil
}

// Open opens the bucket and prefix of sp over the shared client of its
// endpoint and timeout, and probes it within ctx.
func (s *MountScheme) Open(ctx context.Context, sp mountspec.Spec, timeout time.Duration) (backend.Backend, io.Closer, error) {
	m, err := ParseMountSpec(Scheme + "://" + sp.Opaque)
	if err != nil {
		return nil, nil, err
	}
	client, err := s.client(ctx, m.Endpoint, timeout)
	if err != nil {
		return nil, nil, err
	}
	fs, err := New(client, m.Bucket, m.Prefix, Options{ReadOnly: m.ReadOnly || sp.ReadOnly})
	if err != nil {
		return nil, nil, err
	}
	if err := fs.Probe(ctx); err != nil {
		return nil, nil, err
	}
	return fs, nopCloser{}, nil
}

// client returns the shared client of endpoint and timeout, building it
// on first use.
func (s *MountScheme) client(ctx context.Context, endpoint string, timeout time.Duration) (*storage.Client, error) {
	key := mountClientKey{endpoint, timeout}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.clients[key]; ok {
		return c, nil
	}
	cfg := Config{Endpoint: endpoint}
	if timeout > 0 {
		hc := mountspec.HTTPClient(timeout)
		if endpoint == "" {
			// The service: the SDK's credentials over the bounded
			// connections. The client is not bound to ctx, only built
			// under it.
			rt, err := htransport.NewTransport(context.WithoutCancel(ctx), hc.Transport, option.WithScopes(storage.ScopeFullControl))
			if err != nil {
				return nil, fmt.Errorf("gcsadapter: the client's transport: %w", err)
			}
			hc.Transport = rt
		}
		cfg.ClientOptions = append(cfg.ClientOptions, option.WithHTTPClient(hc))
	}
	c, err := NewClient(context.WithoutCancel(ctx), cfg)
	if err != nil {
		return nil, err
	}
	s.clients[key] = c
	return c, nil
}

// Close closes every client the scheme built; the backends opened over
// them fail after it.
func (s *MountScheme) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var first error
	for k, c := range s.clients {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
		delete(s.clients, k)
	}
	return first
}

// nopCloser is what a mount over a shared client releases: nothing; the
// client lives as long as the scheme.
type nopCloser struct{}

func (nopCloser) Close() error { return nil }
