// Package overlayspec adds overlay mounts to mount specs: the mountspec
// Scheme of "overlay:BASE+UPPER", where BASE and UPPER are mount specs of
// their own (local:, s3://, sftp:// or a kind of the schemes given to
// New), so a tenant template can give each tenant its own upper layer
// over a shared base:
//
//	ws=overlay:local:/srv/repo:ro+s3://scratch/tenants/{tenant}/ws
//
// A '+' or '%' inside BASE or UPPER is written %2B or %25, so the one
// bare '+' always separates them; nothing else is escaped, so a template's
// {tenant} stays a whole path segment of its nested spec. The overlay is
// read-only when UPPER is. An overlay is never the base or upper layer
// of another.
package overlayspec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/mountspec"
	"github.com/fencefs/fencefs/overlay"
)

// Prefix starts the specs of overlay mounts; it is the key of Scheme in a
// mountspec.Schemes.
const Prefix = "overlay:"

// Scheme parses and opens overlay: specs. It is safe for concurrent use.
type Scheme struct {
	schemes mountspec.Schemes
	opts    mountspec.Options
	once    sync.Once
	opener  *mountspec.Opener // made by the first Open
}

// New returns the Scheme of overlay: specs. Their nested specs are parsed
// with opts.Schemes (an overlay: among them is refused) and opened by an
// Opener of opts of its own (made when a spec is first opened), which
// Close releases.
func New(opts mountspec.Options) *Scheme {
	schemes := mountspec.Schemes{}
	for p, s := range opts.Schemes {
		if p != Prefix {
			schemes[p] = s
		}
	}
	opts.Schemes = schemes
	return &Scheme{schemes: schemes, opts: opts}
}

// layers returns the Opener of the layers.
func (s *Scheme) layers() *mountspec.Opener {
	s.once.Do(func() { s.opener = mountspec.New(s.opts) })
	return s.opener
}

// Close releases the storage clients of the layers opened so far; the
// backends Open returned must not be used after.
func (s *Scheme) Close() { s.layers().Close() }

// Parse parses rest, "BASE+UPPER", checking both nested specs, and returns
// the overlay's Spec: Opaque is both specs as mountspec prints them,
// escaped and joined; ReadOnly is UPPER's.
func (s *Scheme) Parse(rest string) (mountspec.Spec, error) {
	base, upper, err := s.parse(rest)
	if err != nil {
		return mountspec.Spec{}, err
	}
	return mountspec.Spec{ReadOnly: upper.ReadOnly, Opaque: Join(base.String(), upper.String())}, nil
}

// Layers implements mountspec.Layered: the base and upper layer of sp,
// parsed, so that a server proves the layers of overlay templates
// disjoint from its other mounts.
func (s *Scheme) Layers(sp mountspec.Spec) ([]mountspec.Spec, error) {
	base, upper, err := s.parse(sp.Opaque)
	if err != nil {
		return nil, err
	}
	return []mountspec.Spec{base, upper}, nil
}

// parse splits rest and parses its two specs.
func (s *Scheme) parse(rest string) (base, upper mountspec.Spec, err error) {
	b, u, err := Split(rest)
	if err != nil {
		return base, upper, err
	}
	for _, n := range []struct {
		what, spec string
		out        *mountspec.Spec
	}{{"base", b, &base}, {"upper layer", u, &upper}} {
		if strings.HasPrefix(n.spec, Prefix) {
			return base, upper, fmt.Errorf("overlay: the %s %q is an overlay: an overlay's layers are other mounts", n.what, n.spec)
		}
		if *n.out, err = s.schemes.Parse(n.spec); err != nil {
			return base, upper, fmt.Errorf("overlay: the %s: %w", n.what, err)
		}
	}
	return base, upper, nil
}

// Open opens both layers of sp, each within timeout, and returns the
// overlay over them; closing the io.Closer releases both.
func (s *Scheme) Open(ctx context.Context, sp mountspec.Spec, timeout time.Duration) (backend.Backend, io.Closer, error) {
	o, c, err := s.OpenFS(ctx, sp, timeout)
	if err != nil {
		return nil, nil, err
	}
	return o, c, nil
}

// OpenFS is Open returning the overlay itself, for reviewing and landing
// its changes (overlay.FS's Changes, Diff, Commit and Discard).
func (s *Scheme) OpenFS(ctx context.Context, sp mountspec.Spec, timeout time.Duration) (*overlay.FS, io.Closer, error) {
	base, upper, err := s.parse(sp.Opaque)
	if err != nil {
		return nil, nil, err
	}
	bb, bc, err := s.layers().Open(ctx, "overlay-base", base, timeout)
	if err != nil {
		return nil, nil, fmt.Errorf("overlay: the base: %w", err)
	}
	ub, uc, err := s.layers().Open(ctx, "overlay-upper", upper, timeout)
	if err != nil {
		bc.Close()
		return nil, nil, fmt.Errorf("overlay: the upper layer: %w", err)
	}
	closer := closers{uc, bc}
	o, err := overlay.New(bb, ub, overlay.Options{})
	if err != nil {
		closer.Close()
		return nil, nil, err
	}
	return o, closer, nil
}

// closers closes each of its io.Closers.
type closers []io.Closer

func (cs closers) Close() error {
	var errs []error
	for _, c := range cs {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// Split splits rest, "BASE+UPPER", at its one bare '+' and unescapes
// %2B and %25 in each part. A '%' starting anything else, a second bare
// '+' and an empty part are errors.
func Split(rest string) (base, upper string, err error) {
	parts := strings.Split(rest, "+")
	if len(parts) != 2 {
		return "", "", fmt.Errorf("overlay: %q is not BASE+UPPER: it has %d bare '+' (write a '+' inside a spec as %%2B, a '%%' as %%25)", rest, len(parts)-1)
	}
	for i, p := range parts {
		if p == "" {
			return "", "", fmt.Errorf("overlay: %q is not BASE+UPPER: a spec is empty", rest)
		}
		if parts[i], err = unescape(p); err != nil {
			return "", "", fmt.Errorf("overlay: %q: %w", rest, err)
		}
	}
	return parts[0], parts[1], nil
}

// Join returns "BASE+UPPER" for the specs base and upper, their '%' and
// '+' escaped: what Split splits back into base and upper.
func Join(base, upper string) string {
	return escape(base) + "+" + escape(upper)
}

var escaper = strings.NewReplacer("%", "%25", "+", "%2B")

func escape(s string) string { return escaper.Replace(s) }

// unescape turns %25 and %2B (or %2b) back into '%' and '+'.
func unescape(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			sb.WriteByte(s[i])
			continue
		}
		switch esc := strings.ToUpper(s[i+1 : min(i+3, len(s))]); esc {
		case "25":
			sb.WriteByte('%')
		case "2B":
			sb.WriteByte('+')
		default:
			return "", fmt.Errorf("%q at byte %d is not %%25 or %%2B", s[i:min(i+3, len(s))], i)
		}
		i += 2
	}
	return sb.String(), nil
}
