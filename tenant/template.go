package tenant

import (
	"errors"
	"fmt"
	"strings"
)

// Placeholder is the text a mount template replaces by the tenant id.
const Placeholder = "{tenant}"

// Template is a mount spec that may name the tenant, such as
//
//	ws=s3://bucket/tenants/{tenant}/ws?region=eu-west-1
//
// Every {tenant} must be a whole path segment: after '/' or ':' and
// before '/', '?', '#', ':' or the end, and not in a URL's host. So
// the expansion for t1 is a path that t10's expansion does not start
// with, and no id can change what the spec points at other than that one
// segment. A template without a placeholder is shared by every tenant.
type Template struct {
	spec string
}

// ParseTemplate checks spec and returns its Template. Braces other than
// {tenant} and {session} are errors, so a misspelt placeholder
// ({tenant_id}) does not become a literal directory shared by all
// tenants; a {session} before the first {tenant} is an error too, so a
// session's storage lies inside its tenant's.
func ParseTemplate(spec string) (Template, error) {
	tenantSeen := false
	for i := 0; i < len(spec); {
		j := strings.IndexAny(spec[i:], "{}")
		if j < 0 {
			break
		}
		at := i + j
		ph := ""
		switch {
		case strings.HasPrefix(spec[at:], Placeholder):
			ph, tenantSeen = Placeholder, true
		case strings.HasPrefix(spec[at:], SessionPlaceholder):
			ph = SessionPlaceholder
			if !tenantSeen {
				return Template{}, fmt.Errorf("tenant: template %q: %s at byte %d does not follow a %s: a session's storage must lie inside its tenant's", spec, ph, at, Placeholder)
			}
		default:
			return Template{}, fmt.Errorf("tenant: template %q: %q at byte %d is not %s or %s", spec, spec[at], at, Placeholder, SessionPlaceholder)
		}
		if err := checkSegment(spec, at, ph); err != nil {
			return Template{}, fmt.Errorf("tenant: template %q: %w", spec, err)
		}
		i = at + len(ph)
	}
	return Template{spec: spec}, nil
}

// checkSegment reports whether the placeholder ph at spec[at:] is a whole
// path segment outside a URL's host.
func checkSegment(spec string, at int, ph string) error {
	end := at + len(ph)
	if at == 0 || !strings.ContainsRune("/:", rune(spec[at-1])) {
		return fmt.Errorf("%s at byte %d does not follow '/' or ':'", ph, at)
	}
	if end < len(spec) && !strings.ContainsRune("/?#:", rune(spec[end])) {
		return fmt.Errorf("%s at byte %d is not followed by '/', '?', '#', ':' or the end", ph, at)
	}
	if inHost(spec, at) {
		return fmt.Errorf("%s at byte %d is in the URL's host", ph, at)
	}
	return nil
}

// inHost reports whether spec[at] lies in the authority of a URL: after
// the last "://" before it, with no '/' in between. The last, not the
// first: a spec may nest others (overlay:BASE+UPPER), and the placeholder
// must not name the host of any of them.
func inHost(spec string, at int) bool {
	scheme := strings.LastIndex(spec[:at], "://")
	if scheme < 0 {
		return false
	}
	return !strings.Contains(spec[scheme+3:at], "/")
}

// String returns the template as written.
func (t Template) String() string { return t.spec }

// Shared reports whether t has no placeholder, so every tenant mounts the
// same thing and the mount's backend can be opened once.
func (t Template) Shared() bool { return !strings.Contains(t.spec, Placeholder) }

// PerSession reports whether t has a {session}, so each MCP session of
// a tenant mounts storage of its own; such a template needs ExpandSession.
func (t Template) PerSession() bool { return strings.Contains(t.spec, SessionPlaceholder) }

// Expand returns the spec for tenant id. id is checked again, so an ID made
// by a conversion rather than by ParseID is refused, not substituted. A
// template with {session} is refused: it needs ExpandSession.
func (t Template) Expand(id ID) (string, error) {
	if t.PerSession() {
		return "", fmt.Errorf("tenant: template %q names %s: it is expanded for a session only", t.spec, SessionPlaceholder)
	}
	return t.ExpandSession(id, "")
}

// ExpandSession returns the spec for session sid of tenant id. Both are
// checked again; sid may be "" for a template without {session}.
func (t Template) ExpandSession(id ID, sid SessionID) (string, error) {
	if err := id.valid(); err != nil {
		return "", fmt.Errorf("tenant: template %q: %w", t.spec, err)
	}
	s := strings.ReplaceAll(t.spec, Placeholder, string(id))
	if !t.PerSession() {
		return s, nil
	}
	if _, err := ParseSessionID(string(sid)); err != nil {
		return "", fmt.Errorf("tenant: template %q: %w", t.spec, err)
	}
	return strings.ReplaceAll(s, SessionPlaceholder, string(sid)), nil
}

// Prefix returns the location the namespace of id lies under: t's
// expansion up to the first tenant segment, then '/', for instance
// "ws=s3://bucket/tenants/t1/" for "ws=s3://bucket/tenants/{tenant}/ws". No
// other id's expansion starts with it, which is what keeps t1 out of t10's
// namespace. A shared template has no prefix, and gets an error.
func (t Template) Prefix(id ID) (string, error) {
	at := strings.Index(t.spec, Placeholder)
	if at < 0 {
		return "", errors.New("tenant: template " + t.spec + " is shared: it has no tenant prefix")
	}
	s, err := Template{spec: t.spec[:at+len(Placeholder)]}.ExpandSession(id, "")
	if err != nil {
		return "", err
	}
	return s + "/", nil
}
