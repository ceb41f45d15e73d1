package policy

import (
	"strings"
	"unicode/utf8"
)

// PatternError reports a pattern that [ValidatePattern] refuses.
type PatternError struct {
	// Pattern is the pattern as given.
	Pattern string
	// Reason says what is wrong with it.
	Reason string
}

// Error returns a message naming the pattern and the reason.
func (e *PatternError) Error() string {
	return "policy: invalid pattern " + quote(e.Pattern) + ": " + e.Reason
}

// ValidatePattern reports whether p can be used as a policy pattern. Every
// string is a well-formed fnmatch pattern (an unmatched "[" is a literal),
// so only an empty pattern, which could never match a canonical path, and
// a pattern holding a NUL byte, which no path can hold, are refused.
func ValidatePattern(p string) error {
	switch {
	case p == "":
		return &PatternError{Pattern: p, Reason: "empty pattern"}
	case strings.IndexByte(p, 0) >= 0:
		return &PatternError{Pattern: p, Reason: "NUL byte in pattern"}
	}
	return nil
}

// Match reports whether name matches the fnmatch pattern. The syntax is
// Python's fnmatch.fnmatchcase: "*" matches any run of characters,
// including "/"; "?" matches one character; "[seq]" matches one character
// in seq and "[!seq]" (or "[^seq]") one character not in seq, where seq may
// hold ranges such as "a-z" and a "]" right after the opening bracket (or
// its negation mark) is a member. A "[" without a closing "]" is a literal,
// and so is every other character, backslash included. Matching is
// case-sensitive and works on characters (runes); each byte of invalid
// UTF-8 counts as one character.
//
// A pattern starting with "**/" is also tried without that prefix, so
// "**/.env" matches ".env" at the top as well as "apps/.env".
func Match(pattern, name string) bool {
	if match(pattern, name) {
		return true
	}
	rest, ok := strings.CutPrefix(pattern, "**/")
	return ok && match(rest, name)
}

// match is the classic wildcard algorithm: advance greedily and, on a
// mismatch, let the most recent "*" absorb one more character. Because "*"
// matches every character, only the latest star ever needs revisiting,
// which bounds the work at O(len(pattern) * len(name)) without allocating.
func match(pattern, name string) bool {
	p, n := 0, 0
	starP, starN := -1, -1
	for n < len(name) {
		if p < len(pattern) {
			switch t := nextToken(pattern, p); t.kind {
			case tokStar:
				p = t.next
				if n = skipTo(pattern, p, name, n); n < 0 {
					return false
				}
				starP, starN = p, n
				continue
			default:
				c, size := decode(name, n)
				if t.matches(pattern, c) {
					p, n = t.next, n+size
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		_, size := decode(name, starN)
		if starN = skipTo(pattern, starP, name, starN+size); starN < 0 {
			return false
		}
		p, n = starP, starN
	}
	for p < len(pattern) {
		t := nextToken(pattern, p)
		if t.kind != tokStar {
			return false
		}
		p = t.next
	}
	return true
}

// skipTo returns the first position at or after n where the token at
// pattern[p], which follows a star, can start matching: when that token is
// a literal character the star may skip straight to its next occurrence,
// and when there is none no match is possible (-1). A valid UTF-8 encoding
// found by strings.Index always starts on a character boundary, so the
// skip never splits a character.
func skipTo(pattern string, p int, name string, n int) int {
	if p >= len(pattern) {
		return n
	}
	t := nextToken(pattern, p)
	if t.kind != tokLiteral || t.lit >= invalidBase {
		return n
	}
	i := strings.Index(name[n:], pattern[p:t.next])
	if i < 0 {
		return -1
	}
	return n + i
}

type tokenKind uint8

const (
	tokLiteral tokenKind = iota
	tokAny
	tokStar
	tokClass
)

// token is one element of a pattern, parsed on the fly so that matching
// needs no compiled form and no allocation.
type token struct {
	kind tokenKind
	lit  rune // tokLiteral: the character
	body string
	neg  bool // tokClass: body holds the members, neg inverts the set
	next int  // index in the pattern just after the token
}

// nextToken parses the token starting at pattern[p], with the bracket
// rules of Python's fnmatch: an optional "!" (or "^"), then a "]" that is
// a member, then everything up to the next "]". Without that "]" the
// bracket is an ordinary character.
func nextToken(pattern string, p int) token {
	switch pattern[p] {
	case '*':
		return token{kind: tokStar, next: p + 1}
	case '?':
		return token{kind: tokAny, next: p + 1}
	case '[':
		j := p + 1
		neg := false
		if j < len(pattern) && (pattern[j] == '!' || pattern[j] == '^') {
			neg = true
			j++
		}
		start := j
		if j < len(pattern) && pattern[j] == ']' {
			j++
		}
		if end := strings.IndexByte(pattern[j:], ']'); end >= 0 {
			j += end
			return token{kind: tokClass, body: pattern[start:j], neg: neg, next: j + 1}
		}
	}
	c, size := decode(pattern, p)
	return token{kind: tokLiteral, lit: c, next: p + size}
}

// matches reports whether the single character c matches the token t.
func (t token) matches(pattern string, c rune) bool {
	switch t.kind {
	case tokAny:
		return true
	case tokClass:
		return classContains(t.body, c) != t.neg
	default:
		return t.lit == c
	}
}

// classContains reports whether c is a member of the class body: single
// characters and ranges "lo-hi". A "-" first or last in the body is a
// literal; a range whose ends are reversed is empty, as in Python.
func classContains(body string, c rune) bool {
	for q := 0; q < len(body); {
		lo, size := decode(body, q)
		q += size
		if q+1 < len(body) && body[q] == '-' {
			hi, hsize := decode(body, q+1)
			q += 1 + hsize
			if lo <= c && c <= hi {
				return true
			}
			continue
		}
		if lo == c {
			return true
		}
	}
	return false
}

// invalidBase maps each byte of invalid UTF-8 to its own value above the
// Unicode range, so that two different invalid bytes never compare equal
// and a range of valid characters never contains one.
const invalidBase = utf8.MaxRune + 1

// decode returns the character at s[i] and its width in bytes.
func decode(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && size == 1 {
		return invalidBase + rune(s[i]), 1
	}
	return r, size
}

// quote wraps s in single quotes, as the contract's messages do.
func quote(s string) string { return "'" + s + "'" }
