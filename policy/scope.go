package policy

import (
	"context"
	"errors"
	"strings"

	"github.com/fencefs/fencefs/backend"
)

// Scope confines a rooted namespace to a few subtrees, such as one tenant
// ("/tenant1") or one session ("/tenant/sessions/s1"). Roots are compared
// by whole components: "/tenant1" never admits "/tenant10", and a session
// root never admits a sibling session. A Scope is a [Checker].
type Scope struct {
	roots []string
}

// NewScope returns a Scope admitting each of roots and everything below
// them. Each root is a rooted virtual path, normalized with
// [backend.CleanVirtual] ("/a//b/" becomes "/a/b"; "/" admits everything).
// At least one root is required, and a relative root is an error.
func NewScope(roots ...string) (*Scope, error) {
	if len(roots) == 0 {
		return nil, errors.New("policy: a scope needs at least one root")
	}
	s := &Scope{roots: make([]string, 0, len(roots))}
	for _, r := range roots {
		if !strings.HasPrefix(r, "/") {
			return nil, errors.New("policy: scope root " + quote(r) + " is not a rooted path")
		}
		clean, err := backend.CleanVirtual(r, "/")
		if err != nil {
			return nil, errors.New("policy: scope root " + quote(r) + " is not valid: " + err.Error())
		}
		s.roots = append(s.roots, clean)
	}
	return s, nil
}

// Roots returns a copy of the normalized roots.
func (s *Scope) Roots() []string { return append([]string(nil), s.roots...) }

// Allows reports whether virtualPath is one of the roots or lies below
// one. The path is normalized lexically first, and one that cannot be
// normalized (or is empty) is refused. A path without a leading "/" is read as a storage
// path relative to the namespace root ("." is the root), so that the same
// Scope serves a [Request] from a plain namespace.
func (s *Scope) Allows(virtualPath string) bool {
	p, ok := scopePath(virtualPath)
	if !ok {
		return false
	}
	for _, r := range s.roots {
		if r == "/" || p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

// Check refuses a request whose path the scope does not allow, or that
// reached it through a path outside (req.Via: the written path, a link of
// the chain; the ancestors of a root, which every path below it passes,
// are allowed there), with the message "Path '<p>' is outside the allowed
// scope.", p being req.Path.
func (s *Scope) Check(_ context.Context, req Request) error {
	ok := s.Allows(req.Path)
	for _, v := range req.Via {
		ok = ok && (s.Allows(v) || s.above(v))
	}
	if ok {
		return nil
	}
	return newDenied(req.Path, "", func(p string) string { return "Path " + quote(p) + " is outside the allowed scope." })
}

// above reports whether virtualPath is an ancestor of one of the roots,
// as a resolution passes on its way down to them.
func (s *Scope) above(virtualPath string) bool {
	p, ok := scopePath(virtualPath)
	if !ok {
		return false
	}
	for _, r := range s.roots {
		if p == "/" || strings.HasPrefix(r, p+"/") {
			return true
		}
	}
	return false
}

// scopePath normalizes a request path for comparison with the roots: a
// storage path is read from the namespace root, and an empty path or one
// that cannot be cleaned is refused.
func scopePath(p string) (string, bool) {
	if p == "" {
		return "", false
	}
	if !strings.HasPrefix(p, "/") {
		p = backend.StorageToVirtual(p)
	}
	p, err := backend.CleanVirtual(p, "/")
	return p, err == nil
}
