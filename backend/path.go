package backend

import (
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
// "~", and anything that climbs above the root, with an error wrapping
// ErrInvalidPath. The result is "." or satisfies [ValidPath].
func CleanRelative(p string) (string, error) {
	if strings.HasPrefix(p, "/") {
		return "", invalid(p, "absolute path")
	}
	parts, err := clean(p, nil)
	if err != nil {
		return "", err
	}
	if len(parts) == 0 {
		return ".", nil
	}
	return strings.Join(parts, "/"), nil
}

// CleanVirtual normalizes a path in a rooted (virtual) namespace. A path
// starting with "/" starts at the namespace root; any other resolves from
// cwd, itself a rooted path (empty means "/"). The result always starts
// with "/" and has no empty, "." or ".." components: ("notes.md",
// "/sessions/current") gives "/sessions/current/notes.md" and
// "/one//two/./../three/" gives "/one/three". It refuses the same inputs as
// [CleanRelative] and ".." above "/". It never touches storage or the host.
func CleanVirtual(p, cwd string) (string, error) {
	if p == "" {
		return "", invalid(p, "empty path")
	}
	var base []string
	if !strings.HasPrefix(p, "/") {
		if cwd == "" {
			cwd = "/"
		}
		if !strings.HasPrefix(cwd, "/") {
			return "", invalid(cwd, "working directory is not rooted")
		}
		var err error
		if base, err = clean(cwd, nil); err != nil {
			return "", err
		}
	}
	parts, err := clean(p, base)
	if err != nil {
		return "", err
	}
	return "/" + strings.Join(parts, "/"), nil
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

// clean appends the components of p to base, applying "." and "..", and
// refuses the forbidden spellings.
func clean(p string, base []string) ([]string, error) {
	if p == "" {
		return nil, invalid(p, "empty path")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return nil, invalid(p, "NUL byte in path")
	}
	if strings.IndexByte(p, '\\') >= 0 {
		return nil, invalid(p, "backslash in path")
	}
	if !utf8.ValidString(p) {
		// ValidPath (like fs.ValidPath) requires UTF-8, so such a path
		// could never be handed to a backend.
		return nil, invalid(p, "invalid UTF-8 in path")
	}
	if hasDrive(p) {
		return nil, invalid(p, "drive prefix in path")
	}
	parts := append([]string(nil), base...)
	for _, c := range strings.Split(p, "/") {
		switch {
		case c == "" || c == ".":
		case c == "..":
			if len(parts) == 0 {
				return nil, invalid(p, "path climbs above the root")
			}
			parts = parts[:len(parts)-1]
		case strings.HasPrefix(c, "~"):
			return nil, invalid(p, "component starts with ~")
		default:
			parts = append(parts, c)
		}
	}
	// "./C:" or "x/../C:" only shows its drive-like first component after
	// cleaning; the result must still satisfy ValidPath.
	if len(parts) > 0 && hasDrive(parts[0]) {
		return nil, invalid(p, "drive prefix in path")
	}
	return parts, nil
}

// hasDrive reports whether p starts with a drive-like prefix ("C:").
func hasDrive(p string) bool {
	if len(p) < 2 || p[1] != ':' {
		return false
	}
	c := p[0] | 0x20
	return c >= 'a' && c <= 'z'
}

func invalid(p, why string) error {
	return &fs.PathError{Op: "normalize", Path: p, Err: fmt.Errorf("%w: %s", ErrInvalidPath, why)}
}
