package tenant

import (
	"errors"
	"fmt"
	"strings"
)

// MaxIDLen is the length in bytes of the longest tenant id. It keeps an id
// well inside every storage's limit on one path component and one S3 key
// segment, with room for the template around it.
const MaxIDLen = 64

// ID is a tenant id that ParseID accepted: one path component made of
// ASCII letters, digits, '.', '_' and '-', not starting with '.', at most
// MaxIDLen bytes. Convert a string to an ID only through ParseID; the
// functions that take an ID check it again.
type ID string

// ErrInvalidID is the error, wrapped, of every id ParseID refuses. A
// verified token whose tenant claim is refused gets 403 (see StatusCode).
var ErrInvalidID = errors.New("not a safe tenant id")

// ParseID checks that s can name a tenant's namespace: one path component
// that no storage reads as something else. The characters are an allow
// list rather than a deny list, so a separator, a control character, an
// escape ('%'), a URL authority ('@', ':') or a Windows drive letter can
// never slip in; a leading '.' is refused so neither "." nor ".." nor a
// hidden name can be an id.
func ParseID(s string) (ID, error) {
	switch {
	case s == "":
		return "", fmt.Errorf("%w: empty", ErrInvalidID)
	case len(s) > MaxIDLen:
		return "", fmt.Errorf("%w: %d bytes, more than %d", ErrInvalidID, len(s), MaxIDLen)
	case s[0] == '.':
		return "", fmt.Errorf("%w: %q starts with '.'", ErrInvalidID, s)
	}
	for i := 0; i < len(s); i++ {
		if !idByte(s[i]) {
			return "", fmt.Errorf("%w: %q has %s at byte %d (allowed: letters, digits, '.', '_', '-')",
				ErrInvalidID, s, describeByte(s[i]), i)
		}
	}
	return ID(s), nil
}

// String returns the id as a string.
func (id ID) String() string { return string(id) }

// valid reports whether id is what ParseID returns, for functions that take
// an ID built by a conversion instead.
func (id ID) valid() error {
	_, err := ParseID(string(id))
	return err
}

func idByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '.' || c == '_' || c == '-'
}

func describeByte(c byte) string {
	switch {
	case c == '/' || c == '\\':
		return fmt.Sprintf("a path separator %q", c)
	case c < 0x20 || c == 0x7f:
		return fmt.Sprintf("a control character 0x%02x", c)
	case c >= 0x80:
		return fmt.Sprintf("a non-ASCII byte 0x%02x", c)
	default:
		return fmt.Sprintf("%q", c)
	}
}

// userID is the value the MCP SDK binds a session to. It holds the tenant
// and the subject, so a session id presented with another tenant's token is
// refused even where two tenants' issuers reuse a subject; the tenant
// cannot contain '/', so the pair reads back one way only.
func userID(t ID, subject string) string {
	return strings.Join([]string{string(t), subject}, "/")
}
