package policy

import (
	"strings"
)

// DefaultProtectedPatterns returns a fresh copy of the patterns protected
// from writes unless a caller opts out: git metadata (a directory, or a
// file in a worktree), dotenv files at any depth, keys and certificates,
// and anything named secrets. With the "**/" rule and protection of every
// ancestor this covers ".git/config", "sub/.git/hooks/x", "apps/.env",
// "a/b.key" and "conf/secrets/x", but not ".gitignore" or
// "environment.md".
func DefaultProtectedPatterns() []string {
	return []string{"**/.git", "**/.env", "**/.env.*", "*.pem", "*.key", "**/secrets*"}
}

// Denied is the error of every refusal in this package. Its message is
// the exact text shown to the model.
type Denied struct {
	// Message is the whole text, as the tool contract words it.
	Message string
	// Path is the path the refusal names.
	Path string
	// Pattern is the pattern that decided, empty when none did (a path
	// outside the allowed patterns or a scope, an operation not approved).
	Pattern string
	// Protected reports a refusal by a protected pattern: the path may be
	// read but not changed. Any other refusal denies the access itself.
	Protected bool

	// render words the message for a path, so that [Denied.Naming] can
	// name another spelling of it without a second copy of the text.
	render func(path string) string
}

// Error returns the message.
func (e *Denied) Error() string { return e.Message }

// Naming returns a copy of the refusal that names path instead of e.Path,
// for a caller that shows paths in another spelling than the one judged
// (a rooted "/tenant/x" for the storage path "tenant/x"). A refusal made
// outside this package is copied with its message unchanged.
func (e *Denied) Naming(path string) *Denied {
	c := *e
	c.Path = path
	if e.render != nil {
		c.Message = e.render(path)
	}
	return &c
}

// newDenied builds a refusal of path whose message render words.
func newDenied(path, pattern string, render func(string) string) *Denied {
	return &Denied{Message: render(path), Path: path, Pattern: pattern, render: render}
}

// Rules holds the access patterns of a tool set. Paths given to its
// methods are canonical storage paths relative to the namespace root, with
// no leading "/" and "." for the root. The zero value and a nil *Rules
// allow everything.
//
// Every path is judged twice, as the caller wrote it and as its symlinks
// resolve, so that neither a link name nor an alias can launder a path. A
// refusal always names the path as written, never the target of a link,
// so that it tells nothing about where a link leads.
// Denied and protected patterns apply to the path and to each of its
// ancestors ("private" denies "private/x"); allowed patterns apply to the
// path itself only.
//
// The fields are exported for inspection; a Rules must not be modified
// once it is in use.
type Rules struct {
	// Allowed, when not empty, lists the patterns one of which each
	// directly accessed path must match.
	Allowed []string
	// Denied lists patterns no path or ancestor may match.
	Denied []string
	// Protected lists patterns no written path or ancestor may match. It
	// is the full list: callers merge [DefaultProtectedPatterns] in.
	Protected []string
}

// NewRules returns rules holding the three lists, each pattern normalized
// with [NormalizePattern]: "/ws/private", "./ws/private" and
// "ws/private/" all deny "ws/private". A pattern that could match nothing
// is an error naming it and the spelling to use.
func NewRules(allowed, denied, protected []string) (*Rules, error) {
	r := &Rules{}
	for _, l := range []struct {
		kind PatternKind
		in   []string
		out  *[]string
	}{{AllowedPattern, allowed, &r.Allowed}, {DeniedPattern, denied, &r.Denied}, {ProtectedPattern, protected, &r.Protected}} {
		for _, p := range l.in {
			n, err := NormalizePattern(l.kind, p)
			if err != nil {
				return nil, err
			}
			*l.out = append(*l.out, n)
		}
	}
	return r, nil
}

// CheckRead judges a read of a single target (read_file, file_info):
// denied patterns, then allowed patterns. written is the path as the
// caller wrote it, resolved its symlink-resolved target; either may be
// empty when it is not known (when both are, the root "." is judged), and
// the same path may be passed twice. A refusal names the full written
// path, even when only an ancestor or the resolved target matched.
func (r *Rules) CheckRead(written, resolved string) error {
	return r.check(levelRead, written, resolved)
}

// CheckWrite judges a change of a single target (write_file, edit_file,
// create_directory): protected patterns, then denied, then allowed.
func (r *Rules) CheckWrite(written, resolved string) error {
	return r.check(levelWrite, written, resolved)
}

// CheckWalkRoot judges the root of a walk (list_directory, find_files,
// ...): denied patterns only. Allowed patterns name files, which a
// directory such as "." never matches, so they filter the walk's entries
// instead (see [Rules.Visible]).
func (r *Rules) CheckWalkRoot(written, resolved string) error {
	return r.check(levelWalkRoot, written, resolved)
}

// Visible reports whether a walker may show an entry: the entry passes
// the read-level checks as listed (written) and as resolved. Protection
// does not hide anything. Visible says nothing about whether a walker
// should descend into a directory entry.
func (r *Rules) Visible(written, resolved string) bool {
	v := r.verdict(levelRead, written, resolved)
	return v.kind == verdictOK
}

type level uint8

const (
	levelWalkRoot level = iota
	levelRead
	levelWrite
)

type verdictKind uint8

const (
	verdictOK verdictKind = iota
	verdictProtected
	verdictDenied
	verdictNotAllowed
)

// verdict is the outcome of a check, kept free of allocation so that
// walkers can filter many entries cheaply.
type verdict struct {
	kind    verdictKind
	path    string
	pattern string
}

func (r *Rules) check(lv level, written, resolved string) error {
	v := r.verdict(lv, written, resolved)
	pat := v.pattern
	switch v.kind {
	case verdictProtected:
		d := newDenied(v.path, pat, func(p string) string {
			return "Path " + quote(p) + " is protected (matches " + quote(pat) + ")."
		})
		d.Protected = true
		return d
	case verdictDenied:
		return newDenied(v.path, pat, func(p string) string {
			return "Path " + quote(p) + " is denied by pattern " + quote(pat) + "."
		})
	case verdictNotAllowed:
		return newDenied(v.path, "", func(p string) string {
			return "Path " + quote(p) + " does not match any allowed pattern."
		})
	}
	return nil
}

// verdict applies the checks in the contract's order: protected (writes
// only), denied, allowed (not for walk roots). Within each check the
// written path is judged before the resolved one, and the first pattern in
// the configured order that matches the path or one of its ancestors
// decides. The verdict names the written path whichever of the two was
// refused (the resolved one only when the written one is not known).
func (r *Rules) verdict(lv level, written, resolved string) verdict {
	if r == nil {
		return verdict{}
	}
	both, n := candidates(written, resolved)
	paths := both[:n]
	named := paths[0]
	if lv == levelWrite {
		for _, p := range paths {
			if pat, ok := matchWithAncestors(r.Protected, p); ok {
				return verdict{kind: verdictProtected, path: named, pattern: pat}
			}
		}
	}
	for _, p := range paths {
		if pat, ok := matchWithAncestors(r.Denied, p); ok {
			return verdict{kind: verdictDenied, path: named, pattern: pat}
		}
	}
	if lv != levelWalkRoot && len(r.Allowed) > 0 {
		for _, p := range paths {
			if !matchAny(r.Allowed, p) {
				return verdict{kind: verdictNotAllowed, path: named}
			}
		}
	}
	return verdict{}
}

// candidates lists the paths to judge: the written one first, then the
// resolved one when it differs. An empty string stands for "not known";
// when neither is known the root is judged. An array keeps this free of
// allocation.
func candidates(written, resolved string) (paths [2]string, n int) {
	switch {
	case resolved == "" && written == "":
		return [2]string{"."}, 1
	case resolved == "" || resolved == written:
		return [2]string{written}, 1
	case written == "":
		return [2]string{resolved}, 1
	}
	return [2]string{written, resolved}, 2
}

// matchAny returns whether name matches one of patterns.
func matchAny(patterns []string, name string) bool {
	for _, pat := range patterns {
		if Match(pat, name) {
			return true
		}
	}
	return false
}

// matchWithAncestors returns the first of patterns that matches name or
// one of its ancestor directories ("a" and "a/b" for "a/b/c").
func matchWithAncestors(patterns []string, name string) (string, bool) {
	for _, pat := range patterns {
		if Match(pat, name) {
			return pat, true
		}
		for i := strings.IndexByte(name, '/'); i >= 0; {
			if Match(pat, name[:i]) {
				return pat, true
			}
			j := strings.IndexByte(name[i+1:], '/')
			if j < 0 {
				break
			}
			i += 1 + j
		}
	}
	return "", false
}

// HiddenBelow reports whether any component of name below root starts
// with ".", which makes walkers skip it whatever the patterns say (naming
// a hidden directory as the walk root walks it). root and name are
// canonical paths of the same kind: storage paths ("." for the root) or
// rooted virtual paths ("/" for the root). A name that is not below root
// is judged on all its components.
func HiddenBelow(root, name string) bool {
	rest := belowRoot(root, name)
	for rest != "" {
		c, tail, _ := strings.Cut(rest, "/")
		if strings.HasPrefix(c, ".") && c != "." {
			return true
		}
		rest = tail
	}
	return false
}

// belowRoot returns the part of name below root, or all of name (without
// a leading "/") when name does not lie below root.
func belowRoot(root, name string) string {
	switch {
	case name == root:
		return ""
	case root == "." || root == "/" || root == "":
		return strings.TrimPrefix(name, "/")
	case strings.HasPrefix(name, root+"/"):
		return name[len(root)+1:]
	}
	if name == "." {
		return ""
	}
	return strings.TrimPrefix(name, "/")
}
