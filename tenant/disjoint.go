package tenant

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// Location is where a mount's files lie, in the terms Disjoint compares:
// storage of one Scheme at one Authority, and a Path there that may hold
// Placeholder segments. A server builds one per mount from its parsed
// spec (the spec of a template with {tenant} left in place):
//
//	local:/srv/ws/{tenant}            {Scheme: "local", Path: "/srv/ws/{tenant}"}
//	s3://bucket/t/{tenant}?...        {Scheme: "s3", Authority: "bucket", Path: "t/{tenant}"}
//	sftp://u@host:22/data/{tenant}    {Scheme: "sftp", Authority: "host:22", Path: "/data/{tenant}"}
//
// Two locations can share files only when Scheme and Authority are equal;
// give locations that may be the same storage the same Authority (an
// SFTP root relative to the login directory should carry the user in its
// Authority, since another user's login directory is elsewhere).
type Location struct {
	// Name names the mount in errors.
	Name string
	// Scheme is the storage kind: "local", "s3", "sftp", or another
	// storage's name.
	Scheme string
	// Authority tells storages of one Scheme apart: "" for local disk,
	// the bucket for S3, the server's host:port for SFTP.
	Authority string
	// Path is the root of the mount on that storage, '/'-separated. For
	// "local" it must be absolute: a relative directory would resolve
	// against the server's working directory. A Placeholder must be a
	// whole segment.
	Path string
}

// String renders l for messages.
func (l Location) String() string {
	s := l.Scheme + ":"
	if l.Authority != "" {
		s += "//" + l.Authority + "/"
	}
	return s + l.Path
}

// Shared reports whether l has no Placeholder, so every tenant reaches it.
func (l Location) Shared() bool { return !strings.Contains(l.Path, Placeholder) }

// OverlapError is the error of Disjoint for two locations one tenant's
// files and another's (or a shared mount's) can both reach.
type OverlapError struct {
	// A and B are the two locations.
	A, B Location
	// TenantA and TenantB are ids for which A's expansion and B's lie
	// one inside the other; "" for a shared location.
	TenantA, TenantB ID
}

func (e *OverlapError) Error() string {
	side := func(l Location, id ID) string {
		if id == "" {
			return fmt.Sprintf("the shared mount %s (%s)", l.Name, l)
		}
		return fmt.Sprintf("mount %s (%s) of tenant %q", l.Name, l, id)
	}
	return fmt.Sprintf("tenant: %s and %s reach the same storage: a tenant id must never reach a mount the operator did not give it",
		side(e.A, e.TenantA), side(e.B, e.TenantB))
}

// ErrRelative is matched by the error of Disjoint for a local location
// whose Path is not absolute.
var ErrRelative = errors.New("relative local path")

// Disjoint proves, for every possible tenant id at once, that no tenant
// reaches another tenant's storage or a shared mount through locs: for
// any two ids x != y, no location expanded for x lies inside or around
// one expanded for y, and no location expanded for any id lies inside or
// around a shared one (a location without Placeholder). A tenant's own
// locations may overlap each other, as may shared ones. Paths are
// compared segment by segment after cleaning (local ones must be
// absolute), so "/D/{tenant}" beside "/D/notes/{tenant}" is refused
// (tenant "notes" would hold every tenant's notes) and so is
// "/D/{tenant}" beside a shared "/D/shared". Only ids ParseID accepts are
// considered, so a directory no id can name (".git") is never a clash.
// The error is an *OverlapError naming two ids that clash, or matches
// ErrRelative.
func Disjoint(locs []Location) error {
	segs := make([][]string, len(locs))
	for i, l := range locs {
		s, err := segments(l)
		if err != nil {
			return err
		}
		segs[i] = s
	}
	for i := range locs {
		for j := i; j < len(locs); j++ {
			a, b := locs[i], locs[j]
			if a.Scheme != b.Scheme || a.Authority != b.Authority || a.Shared() && b.Shared() {
				continue
			}
			if x, y, ok := clash(segs[i], segs[j], !a.Shared(), !b.Shared()); ok {
				return &OverlapError{A: a, B: b, TenantA: x, TenantB: y}
			}
		}
	}
	return nil
}

// segments returns l's path as cleaned segments, checking that each
// Placeholder is a whole one.
func segments(l Location) ([]string, error) {
	p := l.Path
	if l.Scheme == "local" && !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("tenant: mount %s (%s): %w: it would resolve against the server's working directory", l.Name, l, ErrRelative)
	}
	p = strings.Trim(path.Clean("/"+p), "/")
	if p == "" {
		return nil, nil
	}
	s := strings.Split(p, "/")
	for _, seg := range s {
		if seg != Placeholder && strings.Contains(seg, Placeholder) {
			return nil, fmt.Errorf("tenant: mount %s (%s): %s is not a whole path segment", l.Name, l, Placeholder)
		}
	}
	return s, nil
}

// clash looks for ids x (for a, when hasX) and y (for b, when hasY), x !=
// y when both are used, such that a expanded for x and b expanded for y
// are one a prefix of the other, segment-wise.
func clash(a, b []string, hasX, hasY bool) (x, y ID, ok bool) {
	// Each id is free, bound to a literal, or (y only) tied to x.
	var bx, by string
	tied := false
	bind := func(v *string, lit string) bool {
		if _, err := ParseID(lit); err != nil {
			return false
		}
		if *v != "" && *v != lit {
			return false
		}
		*v = lit
		return true
	}
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		pa, pb := a[i] == Placeholder, b[i] == Placeholder
		switch {
		case !pa && !pb:
			if a[i] != b[i] {
				return "", "", false
			}
		case pa && pb:
			tied = true
		case pa:
			if !bind(&bx, b[i]) {
				return "", "", false
			}
		default:
			if !bind(&by, a[i]) {
				return "", "", false
			}
		}
	}
	if tied {
		// x == y is forced wherever both are bound or tied; with both
		// templated, a tie means the same tenant only.
		if hasX && hasY {
			return "", "", false
		}
	}
	switch {
	case hasX && hasY:
		if bx != "" && bx == by {
			return "", "", false
		}
		return ID(pick(bx, by, "t1")), ID(pick(by, bx, "t2")), true
	case hasX:
		return ID(pick(bx, "", "t1")), "", true
	default:
		return "", ID(pick(by, "", "t1")), true
	}
}

// pick returns bound when set, else a witness id that differs from
// other.
func pick(bound, other, def string) string {
	if bound != "" {
		return bound
	}
	for _, c := range []string{def, "t1", "t2", "t3"} {
		if c != other {
			return c
		}
	}
	return def
}
