package objstore

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/fencefs/fencefs/backend"
)

// Limits are the key limits of an object store; a 0 field sets no limit.
type Limits struct {
	// MaxKeyBytes is the longest key the store accepts.
	MaxKeyBytes int
	// MaxNameBytes is the longest path component the adapter accepts.
	MaxNameBytes int
	// MaxSegments is the most slash-separated segments a key may have.
	MaxSegments int
}

// over reports whether n is past the limit max (0 for none).
func over(n, max int) bool { return max > 0 && n > max }

// CheckPrefix returns the key prefix of the storage path prefix: "" for
// "" (the whole bucket), and otherwise prefix with one trailing slash
// ("tenant1" and "tenant1/" are the same). prefix must be a canonical
// storage path other than ".", and leave room for a key below it within
// l. The error says why a prefix is refused; a caller adds its own name.
func CheckPrefix(prefix string, l Limits) (string, error) {
	p := strings.TrimSuffix(prefix, "/")
	if p == "" {
		return "", nil
	}
	if p == "." || !backend.ValidPath(p) {
		return "", fmt.Errorf("prefix %q is not a canonical relative path", prefix)
	}
	p += "/"
	// A key below the prefix is at least one byte and one segment more.
	if over(len(p)+1, l.MaxKeyBytes) || over(strings.Count(p, "/")+1, l.MaxSegments) {
		return "", fmt.Errorf("prefix of %d bytes and %d segments is too long", len(p)-1, strings.Count(p, "/"))
	}
	return p, nil
}

// Keys maps the storage paths of one backend to the keys below its
// prefix. The zero Keys has no prefix and sets no limits.
type Keys struct {
	prefix string
	limits Limits
}

// NewKeys returns the keys below prefix, which [CheckPrefix] must accept.
func NewKeys(prefix string, l Limits) (Keys, error) {
	p, err := CheckPrefix(prefix, l)
	if err != nil {
		return Keys{}, err
	}
	return Keys{prefix: p, limits: l}, nil
}

// Prefix returns the key prefix: "" or a path with its trailing slash.
func (k Keys) Prefix() string { return k.prefix }

// Key returns the key of a checked storage path: the object's key, or
// for "." the prefix.
func (k Keys) Key(name string) string {
	if name == "." {
		return k.prefix
	}
	return k.prefix + name
}

// DirPrefix returns the key prefix of the directory name, with its
// trailing slash ("" for the root of a whole bucket).
func (k Keys) DirPrefix(name string) string {
	if name == "." {
		return k.prefix
	}
	return k.prefix + name + "/"
}

// Path turns a key below the prefix back into the storage path it stands
// for (a directory marker into its directory).
func (k Keys) Path(key string) string {
	return strings.TrimSuffix(strings.TrimPrefix(key, k.prefix), "/")
}

// Check refuses, as an *fs.PathError, non-canonical paths (with
// backend.ErrInvalidPath) and paths the store cannot hold (with
// backend.ErrNameTooLong): a component longer than MaxNameBytes, or a key,
// with room for a directory marker's slash, longer than MaxKeyBytes or of
// more than MaxSegments segments.
func (k Keys) Check(op, name string) error {
	if err := backend.CheckPath(op, name); err != nil {
		return err
	}
	if name == "." {
		return nil
	}
	key := k.prefix + name
	if over(len(key)+1, k.limits.MaxKeyBytes) || over(strings.Count(key, "/")+1, k.limits.MaxSegments) {
		return &fs.PathError{Op: op, Path: name, Err: backend.ErrNameTooLong}
	}
	for c := range strings.SplitSeq(name, "/") {
		if over(len(c), k.limits.MaxNameBytes) {
			return &fs.PathError{Op: op, Path: name, Err: backend.ErrNameTooLong}
		}
	}
	return nil
}

// Valid reports whether a name found in a listing is a storage path the
// backend can address (see [Keys.Check]), so that listings skip the
// others instead of showing them under another name.
func (k Keys) Valid(name string) bool {
	return name != "." && k.Check("list", name) == nil
}
