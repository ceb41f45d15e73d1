package azureadapter

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/mountspec"
)

// MountScheme opens azblob:// mount specs for a server: a program
// registers it as mountspec.Schemes{"azblob://": &azureadapter.MountScheme{}},
// and azblob:// specs then work in --mount, tenant templates and
// configuration files. Mounts of one account, endpoint and timeout share
// one client (Clients); a spec without timeout= takes the server's storage
// timeout; every mount is probed when it is opened (the container exists,
// the account has no hierarchical namespace). The zero value is ready to
// use.
type MountScheme struct {
	clients Clients
}

var _ mountspec.Scheme = (*MountScheme)(nil)

// Parse checks rest, the spec after "azblob://", as ParseMountSpec does.
func (s *MountScheme) Parse(rest string) (mountspec.Spec, error) {
	m, err := ParseMountSpec(Scheme + "://" + rest)
	if err != nil {
		return mountspec.Spec{}, err
	}
	return mountspec.Spec{ReadOnly: m.ReadOnly, Timeout: m.Timeout, Opaque: strings.TrimPrefix(m.String(), Scheme+"://")}, nil
}

// Open opens the container and prefix of sp over the shared client of its
// account, endpoint and timeout, probed within ctx.
func (s *MountScheme) Open(ctx context.Context, sp mountspec.Spec, timeout time.Duration) (backend.Backend, io.Closer, error) {
	m, err := ParseMountSpec(Scheme + "://" + sp.Opaque)
	if err != nil {
		return nil, nil, err
	}
	m.ReadOnly = m.ReadOnly || sp.ReadOnly
	if m.Timeout == 0 {
		m.Timeout = timeout
	}
	fs, err := OpenMount(ctx, m, &s.clients)
	if err != nil {
		return nil, nil, err
	}
	return fs, nopCloser{}, nil
}

// nopCloser is what a mount over a shared client releases: nothing; the
// client lives as long as the scheme.
type nopCloser struct{}

func (nopCloser) Close() error { return nil }
