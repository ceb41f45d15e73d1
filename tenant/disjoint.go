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
	// SessionA and SessionB are the session ids of A's and B's expansion
	// when they have {session}: two sessions of one tenant that would
	// reach the same storage.
	SessionA, SessionB SessionID
}

func (e *OverlapError) Error() string {
	side := func(l Location, id ID, sid SessionID) string {
		if id == "" {
			return fmt.Sprintf("the shared mount %s (%s)", l.Name, l)
		}
		if sid != "" {
			return fmt.Sprintf("mount %s (%s) of session %q of tenant %q", l.Name, l, sid, id)
		}
		return fmt.Sprintf("mount %s (%s) of tenant %q", l.Name, l, id)
	}
	what := "a tenant id"
	if e.SessionA != "" || e.SessionB != "" {
		what = "a tenant or session id"
	}
	return fmt.Sprintf("tenant: %s and %s reach the same storage: %s must never reach a mount the operator did not give it",
		side(e.A, e.TenantA, e.SessionA), side(e.B, e.TenantB, e.SessionB), what)
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
//
// A SessionPlaceholder segment stands for any session id, a value that
// cannot contain a slash either (ParseSessionID): the proof holds for
// every tenant and every session at once, and it also refuses two
// sessions of one tenant that would reach the same storage
// ("/U/{tenant}/{session}" beside "/U/{tenant}/x/{session}"). A
// session's location inside its own tenant's (a home mount holding the
// sessions' directories) is the tenant's own, and allowed.
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
			if x, y, sx, sy, ok := clash(segs[i], segs[j], !a.Shared(), !b.Shared()); ok {
				return &OverlapError{A: a, B: b, TenantA: x, TenantB: y, SessionA: sx, SessionB: sy}
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
	tenantSeen := false
	for _, seg := range s {
		for _, ph := range []string{Placeholder, SessionPlaceholder} {
			if seg != ph && strings.Contains(seg, ph) {
				return nil, fmt.Errorf("tenant: mount %s (%s): %s is not a whole path segment", l.Name, l, ph)
			}
		}
		tenantSeen = tenantSeen || seg == Placeholder
		if seg == SessionPlaceholder && !tenantSeen {
			return nil, fmt.Errorf("tenant: mount %s (%s): %s does not follow a %s", l.Name, l, SessionPlaceholder, Placeholder)
		}
	}
	return s, nil
}

// clash looks for ids x (for a, when hasX) and y (for b, when hasY), x !=
// y when both are used, such that a expanded for x and b expanded for y
// are one a prefix of the other, segment-wise; or, when x must equal y,
// for two sessions sx != sy of that tenant whose locations are so. A
// location of one session beside a location of its whole tenant is the
// tenant's own and is no clash.
func clash(a, b []string, hasX, hasY bool) (x, y ID, sx, sy SessionID, ok bool) {
	// The variables: a's tenant, b's tenant, a's session, b's session.
	// Each is free, bound to a literal, or equal to others (a class).
	const vX, vY, vSX, vSY = 0, 1, 2, 3
	parent := [4]int{0, 1, 2, 3}
	var lit [4]string
	var find func(int) int
	find = func(v int) int {
		for parent[v] != v {
			v = parent[v]
		}
		return v
	}
	union := func(p, q int) bool {
		p, q = find(p), find(q)
		if p == q {
			return true
		}
		if lit[p] != "" && lit[q] != "" && lit[p] != lit[q] {
			return false
		}
		parent[q] = p
		lit[p] = cmpOr(lit[p], lit[q])
		return true
	}
	bind := func(v int, l string) bool {
		// A session id obeys the rules of a tenant id.
		if _, err := ParseID(l); err != nil {
			return false
		}
		v = find(v)
		if lit[v] != "" && lit[v] != l {
			return false
		}
		lit[v] = l
		return true
	}
	varOf := func(seg string, tenantVar, sessionVar int) int {
		switch seg {
		case Placeholder:
			return tenantVar
		case SessionPlaceholder:
			return sessionVar
		}
		return -1
	}
	hasSX, hasSY := false, false
	for _, seg := range a {
		hasSX = hasSX || seg == SessionPlaceholder
	}
	for _, seg := range b {
		hasSY = hasSY || seg == SessionPlaceholder
	}
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		va, vb := varOf(a[i], vX, vSX), varOf(b[i], vY, vSY)
		var good bool
		switch {
		case va < 0 && vb < 0:
			good = a[i] == b[i]
		case va >= 0 && vb >= 0:
			good = union(va, vb)
		case va >= 0:
			good = bind(va, b[i])
		default:
			good = bind(vb, a[i])
		}
		if !good {
			return "", "", "", "", false
		}
	}
	// differ reports whether p and q can take different values.
	differ := func(p, q int) bool {
		p, q = find(p), find(q)
		return p != q && (lit[p] == "" || lit[p] != lit[q])
	}
	switch {
	case hasX && hasY && differ(vX, vY):
	case hasX && hasY && hasSX && hasSY && differ(vSX, vSY):
	case hasX && hasY:
		return "", "", "", "", false
	}
	// Witnesses: each class its literal, or a name no other class has.
	val := map[int]string{}
	used := map[string]bool{}
	for v := range lit {
		if r := find(v); lit[r] != "" {
			val[r] = lit[r]
			used[lit[r]] = true
		}
	}
	name := func(v int, prefix string, start int) string {
		r := find(v)
		if val[r] == "" {
			for k := start; ; k++ {
				if c := fmt.Sprintf("%s%d", prefix, k); !used[c] {
					val[r], used[c] = c, true
					break
				}
			}
		}
		return val[r]
	}
	if hasX {
		x = ID(name(vX, "t", 1))
	}
	if hasY {
		y = ID(name(vY, "t", 2))
	}
	if hasSX {
		sx = SessionID(name(vSX, "s", 1))
	}
	if hasSY {
		sy = SessionID(name(vSY, "s", 2))
	}
	return x, y, sx, sy, true
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
