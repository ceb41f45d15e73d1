package tenant

import (
	"crypto/rand"
	"errors"
	"fmt"
)

// SessionPlaceholder is the text a mount template replaces by the id of
// the MCP session, so that each session of a tenant gets storage of its
// own (an overlay's upper layer, say) under its tenant's:
//
//	ws=overlay:local:/srv/repo:ro+local:/srv/up/{tenant}/{session}
//
// It obeys the rules of Placeholder (a whole path segment, not in a
// URL's host) and must follow a {tenant} in the same template, so a
// session's storage always lies inside its tenant's.
const SessionPlaceholder = "{session}"

// MaxSessionIDLen is the length in bytes of the longest session id.
const MaxSessionIDLen = 64

// SessionID is a session id that ParseSessionID accepted: the characters
// of an ID (ASCII letters, digits, '.', '_', '-', not starting with '.'),
// at most MaxSessionIDLen bytes, so it is one path component that cannot
// hold a separator, "." or "..". A server issues it (NewSessionID): it is
// never a name a client chose.
type SessionID string

// ErrInvalidSessionID is the error, wrapped, of every session id
// ParseSessionID refuses.
var ErrInvalidSessionID = errors.New("not a safe session id")

// ParseSessionID checks that s can name a session's storage, by the rules
// of ParseID.
func ParseSessionID(s string) (SessionID, error) {
	switch {
	case s == "":
		return "", fmt.Errorf("%w: empty", ErrInvalidSessionID)
	case len(s) > MaxSessionIDLen:
		return "", fmt.Errorf("%w: %d bytes, more than %d", ErrInvalidSessionID, len(s), MaxSessionIDLen)
	case s[0] == '.':
		return "", fmt.Errorf("%w: %q starts with '.'", ErrInvalidSessionID, s)
	}
	for i := 0; i < len(s); i++ {
		if !idByte(s[i]) {
			return "", fmt.Errorf("%w: %q has %s at byte %d (allowed: letters, digits, '.', '_', '-')",
				ErrInvalidSessionID, s, describeByte(s[i]), i)
		}
	}
	return SessionID(s), nil
}

// NewSessionID returns a new random session id: 26 characters of base32
// (A-Z, 2-7), 130 bits from crypto/rand, as the MCP SDK makes its own.
func NewSessionID() SessionID { return SessionID(rand.Text()) }

// String returns the id as a string.
func (s SessionID) String() string { return string(s) }

// valid reports whether s is what ParseSessionID returns.
func (s SessionID) valid() error {
	_, err := ParseSessionID(string(s))
	return err
}
