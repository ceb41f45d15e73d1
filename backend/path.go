package backend

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"unicode/utf8"
)

// ValidPath reports whether name is a canonical storage path: "." for the
// root, or slash-separated components that are neither empty, "." nor
// "..", with no leading or trailing slash, no NUL, no backslash, and no
// component starting with "~". The first component must not look like a
// drive ("C:"). Backends call it on every path they receive.
func ValidPath(name string) bool {
	if name == "." {
		return true
	}
	if !fs.ValidPath(name) || strings.ContainsAny(name, "\x00\\") || hasDrive(name) {
		return false
	}
	// No component may start with "~"; checked without splitting, since
	// every backend call validates its path.
	return !strings.HasPrefix(name, "~") && !strings.Contains(name, "/~")
}

// CheckPath returns nil when name is canonical (see [ValidPath]) and
// otherwise an *fs.PathError wrapping ErrInvalidPath for operation op.
func CheckPath(op, name string) error {
	if ValidPath(name) {
		return nil
	}
	return &fs.PathError{Op: op, Path: name, Err: ErrInvalidPath}
}

// CleanRelative normalizes a relative storage path: "a//b/" becomes "a/b",
// "./x/../y" becomes "y", and "" is refused. It refuses absolute paths,
// NUL bytes, backslashes, drive prefixes ("C:"), components starting with
// "~", invalid UTF-8 and anything that climbs above the root, with an
// error wrapping an [*InvalidPathError] that says why (see [ReasonOf]).
// The result is "." or satisfies [ValidPath]. It is the zero [Cleaner]'s
// Relative.
func CleanRelative(p string) (string, error) { return Cleaner{}.Relative(p) }

// CleanVirtual normalizes a path in a rooted (virtual) namespace. A path
// starting with "/" starts at the namespace root; any other resolves from
// cwd, itself a rooted path (empty means "/"). The result always starts
// with "/" and has no empty, "." or ".." components: ("notes.md",
// "/sessions/current") gives "/sessions/current/notes.md" and
// "/one//two/./../three/" gives "/one/three". It refuses the same inputs as
// [CleanRelative] and ".." above "/". It never touches storage or the host.
// It is the zero [Cleaner]'s Virtual.
func CleanVirtual(p, cwd string) (string, error) { return Cleaner{}.Virtual(p, cwd) }

// PathReason says why a path normalizer refused a path.
type PathReason uint8

// The reasons of a refusal, in the order a normalizer checks them: a path
// with several faults is refused for the first one of this list it has.
const (
	// ReasonEmpty: the path is "".
	ReasonEmpty PathReason = iota + 1
	// ReasonNUL: the path holds a NUL byte.
	ReasonNUL
	// ReasonControl: the path holds another control character (U+0001 to
	// U+001F, U+007F); only a [Cleaner] with RefuseControl says so.
	ReasonControl
	// ReasonBackslash: the path holds a backslash.
	ReasonBackslash
	// ReasonAbsolute: a relative path was required and the path starts
	// with "/".
	ReasonAbsolute
	// ReasonNotRooted: the working directory given to a virtual
	// normalizer does not start with "/".
	ReasonNotRooted
	// ReasonDrive: the path as written starts with a drive prefix ("C:",
	// "c:foo").
	ReasonDrive
	// ReasonTooLong: the path or one of its components is longer than the
	// [Cleaner]'s limit. Such an error also matches [ErrNameTooLong].
	ReasonTooLong
	// ReasonTilde: a component starts with "~".
	ReasonTilde
	// ReasonInvalidUTF8: the path is not valid UTF-8.
	ReasonInvalidUTF8
	// ReasonClimb: ".." climbs above the root.
	ReasonClimb
	// ReasonCleanedDrive: the path is written without a drive prefix but
	// its cleaned form begins with a drive-like component ("x/../C:",
	// "/C:").
	ReasonCleanedDrive
)

var reasonText = [...]string{
	ReasonEmpty:        "empty path",
	ReasonNUL:          "NUL byte in path",
	ReasonControl:      "control character in path",
	ReasonBackslash:    "backslash in path",
	ReasonAbsolute:     "absolute path",
	ReasonNotRooted:    "working directory is not rooted",
	ReasonDrive:        "drive prefix in path",
	ReasonTooLong:      "name or path too long",
	ReasonTilde:        "component starts with ~",
	ReasonInvalidUTF8:  "invalid UTF-8 in path",
	ReasonClimb:        "path climbs above the root",
	ReasonCleanedDrive: "drive prefix in path after cleaning",
}

// String returns the reason in a few words ("path climbs above the root").
func (r PathReason) String() string {
	if int(r) < len(reasonText) && reasonText[r] != "" {
		return reasonText[r]
	}
	return fmt.Sprintf("PathReason(%d)", r)
}

// InvalidPathError is the refusal of a path by a normalizer, carried as the
// Err of an *fs.PathError naming the path. It matches [ErrInvalidPath]
// (and so fs.ErrInvalid) with errors.Is, and [ErrNameTooLong] as well for
// ReasonTooLong.
type InvalidPathError struct {
	// Reason says what is wrong with the path.
	Reason PathReason
}

// Error returns "invalid path: " and the reason.
func (e *InvalidPathError) Error() string { return ErrInvalidPath.Error() + ": " + e.Reason.String() }

// Is reports whether target is ErrNameTooLong for an over-long path.
func (e *InvalidPathError) Is(target error) bool {
	return e.Reason == ReasonTooLong && target == ErrNameTooLong
}

// Unwrap returns ErrInvalidPath.
func (e *InvalidPathError) Unwrap() error { return ErrInvalidPath }

// ReasonOf returns the reason of a normalizer's refusal wrapped in err, or
// 0 when err holds no [*InvalidPathError].
func ReasonOf(err error) PathReason {
	var e *InvalidPathError
	if errors.As(err, &e) {
		return e.Reason
	}
	return 0
}

// Cleaner normalizes paths with the refusals a caller adds to the
// contract's own: control characters and length limits. Its zero value
// is the contract (see [CleanRelative]); tools use one built from the
// backend's Capabilities, so that every path a tool takes meets one
// pipeline that says why it refused.
type Cleaner struct {
	// RefuseControl refuses control characters besides NUL (which is
	// always refused): U+0001 to U+001F and U+007F.
	RefuseControl bool
	// MaxNameBytes is the longest component accepted; 0 means no limit.
	MaxNameBytes int
	// MaxPathBytes is the longest path accepted, as written; 0 means no
	// limit.
	MaxPathBytes int
}

// Check refuses p for the first reason it has that needs no cleaning
// (every reason but ReasonClimb and ReasonCleanedDrive), for a caller that
// maps an accepted p by other means (a host path, see [MapHostPath]).
func (c Cleaner) Check(p string) error {
	if r := c.screen(p); r != 0 {
		return invalid(p, r)
	}
	return nil
}

// Relative is [CleanRelative] with c's refusals.
func (c Cleaner) Relative(p string) (string, error) {
	if r := c.screen(p); r != 0 {
		return "", invalid(p, r)
	}
	if p[0] == '/' {
		return "", invalid(p, ReasonAbsolute)
	}
	parts, r := clean(p, nil)
	if r != 0 {
		return "", invalid(p, r)
	}
	if len(parts) == 0 {
		return ".", nil
	}
	return strings.Join(parts, "/"), nil
}

// Virtual is [CleanVirtual] with c's refusals, which apply to p only: cwd
// is checked against the contract alone.
func (c Cleaner) Virtual(p, cwd string) (string, error) {
	if r := c.screen(p); r != 0 {
		return "", invalid(p, r)
	}
	var base []string
	if p[0] != '/' {
		if cwd == "" {
			cwd = "/"
		}
		if cwd[0] != '/' {
			return "", invalid(cwd, ReasonNotRooted)
		}
		r := Cleaner{}.screen(cwd)
		if r == 0 {
			base, r = clean(cwd, nil)
		}
		if r != 0 {
			return "", invalid(cwd, r)
		}
	}
	parts, r := clean(p, base)
	if r != 0 {
		return "", invalid(p, r)
	}
	return "/" + strings.Join(parts, "/"), nil
}

// Resolve turns p, a path as a caller of b writes it, into its canonical
// storage path, resolving a relative p from the storage directory cwd:
// in a rooted namespace (rooted, see Capabilities.Rooted) p is a virtual
// path; in a plain one an absolute p is a host path where b maps them
// (see [MapHostPath]) and a path from the namespace root otherwise. The
// result satisfies [ValidPath]. A refusal of the spelling wraps an
// [*InvalidPathError]; a host path b maps outside its root fails with
// b's own error (ErrOutside, ErrInvalidPath).
func (c Cleaner) Resolve(b Backend, rooted bool, p, cwd string) (string, error) {
	if !rooted && strings.HasPrefix(p, "/") {
		if err := c.Check(p); err != nil {
			return "", err
		}
		out, err := MapHostPath(b, p)
		if err == nil && !ValidPath(out) {
			err = &fs.PathError{Op: "maphostpath", Path: p, Err: ErrInvalidPath}
		}
		if !errors.Is(err, ErrUnsupported) {
			return out, err
		}
	}
	v, err := c.Virtual(p, StorageToVirtual(cwd))
	if err != nil {
		return "", err
	}
	return VirtualToStorage(v), nil
}

// VirtualToStorage turns a canonical virtual path ("/a/b") into the
// storage path of the same object ("a/b"; "/" becomes ".").
func VirtualToStorage(v string) string {
	s := strings.TrimPrefix(v, "/")
	if s == "" {
		return "."
	}
	return s
}

// StorageToVirtual turns a storage path ("a/b") into its virtual form
// ("/a/b"; "." becomes "/").
func StorageToVirtual(s string) string {
	if s == "." || s == "" {
		return "/"
	}
	return "/" + s
}

// Join joins a storage directory and a single child name.
func Join(dir, name string) string {
	if dir == "." || dir == "" {
		return name
	}
	return dir + "/" + name
}

// Split returns the parent directory ("." at the top) and the final
// component of a canonical storage path.
func Split(name string) (dir, base string) {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return ".", name
	}
	return name[:i], name[i+1:]
}

// Rel returns the storage path name relative to the storage directory dir,
// with ".." components where name lies outside dir: Rel("a/b", "a/c/x")
// is "../c/x" and Rel("a", "a") is ".".
func Rel(dir, name string) string {
	if dir == "." {
		return name
	}
	if name == dir {
		return "."
	}
	if strings.HasPrefix(name, dir+"/") {
		return name[len(dir)+1:]
	}
	d := strings.Split(dir, "/")
	var n []string
	if name != "." {
		n = strings.Split(name, "/")
	}
	i := 0
	for i < len(d) && i < len(n) && d[i] == n[i] {
		i++
	}
	parts := make([]string, 0, len(d)-i+len(n)-i)
	for range d[i:] {
		parts = append(parts, "..")
	}
	parts = append(parts, n[i:]...)
	return strings.Join(parts, "/")
}

// IsWithin reports whether the storage path name is dir or lies below it,
// comparing whole components ("a" does not contain "ab").
func IsWithin(name, dir string) bool {
	if dir == "." {
		return true
	}
	return name == dir || strings.HasPrefix(name, dir+"/")
}

// screen returns the first reason of the order of [PathReason] that p has
// before any cleaning, or 0.
func (c Cleaner) screen(p string) PathReason {
	if p == "" {
		return ReasonEmpty
	}
	var nul, ctl, back bool
	for i := 0; i < len(p); i++ {
		switch b := p[i]; {
		case b == 0:
			nul = true
		case b < 0x20 || b == 0x7f:
			ctl = true
		case b == '\\':
			back = true
		}
	}
	switch {
	case nul:
		return ReasonNUL
	case ctl && c.RefuseControl:
		return ReasonControl
	case back:
		return ReasonBackslash
	case hasDrive(p):
		return ReasonDrive
	case c.MaxPathBytes > 0 && len(p) > c.MaxPathBytes:
		return ReasonTooLong
	}
	// One pass over the components, without splitting: "~" and the name
	// limit are judged in the order the components come.
	for rest := p; ; {
		comp := rest
		i := strings.IndexByte(rest, '/')
		if i >= 0 {
			comp = rest[:i]
		}
		if strings.HasPrefix(comp, "~") {
			return ReasonTilde
		}
		if c.MaxNameBytes > 0 && len(comp) > c.MaxNameBytes {
			return ReasonTooLong
		}
		if i < 0 {
			break
		}
		rest = rest[i+1:]
	}
	if !utf8.ValidString(p) {
		// ValidPath (like fs.ValidPath) requires UTF-8, so such a path
		// could never be handed to a backend.
		return ReasonInvalidUTF8
	}
	return 0
}

// clean appends the components of p, a screened path, to base, applying
// "." and "..".
func clean(p string, base []string) ([]string, PathReason) {
	parts := append([]string(nil), base...)
	for _, c := range strings.Split(p, "/") {
		switch c {
		case "", ".":
		case "..":
			if len(parts) == 0 {
				return nil, ReasonClimb
			}
			parts = parts[:len(parts)-1]
		default:
			parts = append(parts, c)
		}
	}
	// "./C:" or "x/../C:" only shows its drive-like first component after
	// cleaning; the result must still satisfy ValidPath.
	if len(parts) > 0 && hasDrive(parts[0]) {
		return nil, ReasonCleanedDrive
	}
	return parts, 0
}

// hasDrive reports whether p starts with a drive-like prefix ("C:").
func hasDrive(p string) bool {
	if len(p) < 2 || p[1] != ':' {
		return false
	}
	c := p[0] | 0x20
	return c >= 'a' && c <= 'z'
}

func invalid(p string, r PathReason) error {
	return &fs.PathError{Op: "normalize", Path: p, Err: &InvalidPathError{Reason: r}}
}

// CheckReserved returns an *fs.PathError wrapping ErrInvalidPath for
// operation op when a component of the storage path name is one an
// adapter reserves for its staged writes (reserved reports those names;
// see Capabilities.StagingPattern), and nil otherwise.
func CheckReserved(op, name string, reserved func(component string) bool) error {
	for rest := name; rest != ""; {
		comp, tail, _ := strings.Cut(rest, "/")
		if reserved(comp) {
			return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: %q is reserved for pending writes", ErrInvalidPath, comp)}
		}
		rest = tail
	}
	return nil
}
