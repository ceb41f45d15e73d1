package spec

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/fencefs/fencefs/backend"
)

// A Scheme parses and opens the specs of a kind of storage this package
// does not know, such as gs://, azblob:// or overlay:. A Scheme is safe
// for concurrent use.
type Scheme interface {
	// Parse checks rest, the spec after its prefix, and returns its Spec:
	// ReadOnly, Timeout and Opaque set, Opaque being what Open needs and
	// such that the prefix followed by Opaque parses to the same Spec
	// (String prints it so). It holds no secret. Schemes.Parse sets Kind.
	Parse(rest string) (Spec, error)
	// Open opens s, bounding the check it makes and each later request
	// to the storage by timeout. Closing the io.Closer releases what the
	// backend holds.
	Open(ctx context.Context, s Spec, timeout time.Duration) (backend.Backend, io.Closer, error)
}

// A Layered Scheme makes each of its mounts of other mounts, as
// overlay:BASE+UPPER is made of its base and upper layer. Layers returns
// the parsed specs of the layers of s (a Spec of the Scheme), each with
// its Kind, so that what judges where a mount's files lie (a server
// proving its tenant templates disjoint) sees through the Scheme to the
// storage below; a layer may itself be of a Layered Scheme. A Scheme
// whose spec is its own and is not Layered is opaque to such a judge.
type Layered interface {
	Layers(s Spec) ([]Spec, error)
}

// Schemes are the Schemes a server opens besides its own kinds, by the
// prefix that starts their specs ("gs://", "overlay:"). Its Kind in a
// parsed Spec is that prefix.
type Schemes map[string]Scheme

// Parse parses spec as the package-level Parse does, and the specs of
// ss's prefixes with their Scheme.
func (ss Schemes) Parse(spec string) (Spec, error) {
	if strings.ContainsFunc(spec, isControl) {
		return Spec{}, fmt.Errorf("control character in mount spec")
	}
	for _, prefix := range ss.prefixes() {
		rest, ok := strings.CutPrefix(spec, prefix)
		if !ok || builtin(Kind(prefix)) {
			continue
		}
		s, err := ss[prefix].Parse(rest)
		if err != nil {
			return Spec{}, err
		}
		s.Kind = Kind(prefix)
		return s, nil
	}
	if len(ss) > 0 && !builtin(Kind(spec)) {
		return Spec{}, fmt.Errorf("unknown mount spec %q: use local:DIR, s3://BUCKET/PREFIX, sftp://USER@HOST/DIR or %s...", spec, strings.Join(ss.prefixes(), "..., "))
	}
	return Parse(spec)
}

// prefixes returns ss's prefixes, the longest first, so that a prefix
// never hides a longer one it starts.
func (ss Schemes) prefixes() []string {
	ps := make([]string, 0, len(ss))
	for p := range ss {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool {
		if len(ps[i]) != len(ps[j]) {
			return len(ps[i]) > len(ps[j])
		}
		return ps[i] < ps[j]
	})
	return ps
}

// builtin reports whether s starts with the prefix of a kind this package
// opens itself, or starts such a prefix: no Scheme replaces those.
func builtin(k Kind) bool {
	for _, p := range []string{"local:", "s3://", "sftp://"} {
		if strings.HasPrefix(p, string(k)) || strings.HasPrefix(string(k), p) {
			return true
		}
	}
	return false
}
