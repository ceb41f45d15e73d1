package tools

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fencefs/fencefs/tools/internal/textsearch"
)

// binaryPrefix is how many leading bytes decide whether a file is binary,
// the same for every tool and both search engines.
const binaryPrefix = textsearch.BinaryPrefix

// isBinaryPrefix reports whether p, the start of a file, marks it binary:
// a NUL byte within its first 8192 bytes.
func isBinaryPrefix(p []byte) bool {
	if len(p) > binaryPrefix {
		p = p[:binaryPrefix]
	}
	return bytes.IndexByte(p, 0) >= 0
}

// shortHash returns the form of a full hex SHA-256 shown to the model:
// its first 12 characters.
func shortHash(full string) string {
	if len(full) > 12 {
		return full[:12]
	}
	return full
}

// hashBytes returns the lowercase hex SHA-256 of b.
func hashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// displayText decodes b for display: UTF-8, each invalid byte shown as
// one U+FFFD.
func displayText(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + 8)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			sb.WriteRune(utf8.RuneError)
		} else {
			sb.Write(b[:n])
		}
		b = b[n:]
	}
	return sb.String()
}

// countLines counts lines split on "\n": a final line without a
// terminator counts, an empty text has none.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// withCommas formats n with thousands separators (1234567 -> 1,234,567).
func withCommas(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// runeCounter counts the display characters of a byte stream fed in
// pieces that may split a UTF-8 sequence: one per valid sequence, one per
// invalid byte, as displayText shows them.
type runeCounter struct {
	carry []byte
	n     int
}

// write counts the characters of p, keeping an incomplete sequence at its
// end for the next call.
func (c *runeCounter) write(p []byte) {
	if k := len(c.carry); k > 0 {
		take := min(utf8.UTFMax, len(p))
		buf := append(c.carry, p[:take]...)
		i := 0
		for i < k {
			if !utf8.FullRune(buf[i:]) {
				// Only when p was too short to finish the sequence.
				c.carry = append(c.carry[:0], buf[i:]...)
				return
			}
			_, size := utf8.DecodeRune(buf[i:])
			c.n++
			i += size
		}
		p = p[i-k:]
		c.carry = c.carry[:0]
	}
	for i := len(p) - 1; i >= 0 && i >= len(p)-(utf8.UTFMax-1); i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				c.carry = append(c.carry[:0], p[i:]...)
				p = p[:i]
			}
			break
		}
	}
	// RuneCount counts each invalid byte as one, as displayText shows it.
	c.n += utf8.RuneCount(p)
}

// total returns the count, with any incomplete trailing sequence counted
// byte by byte.
func (c *runeCounter) total() int {
	return c.n + len(c.carry)
}

// count returns n and the noun in the form its number takes: "1 line",
// "2 lines", "0 lines".
func count[N ~int | ~int64](n N, one, many string) string {
	return strconv.FormatInt(int64(n), 10) + " " + plural(n, one, many)
}

// plural returns the form of a noun that follows the number n; it
// allocates nothing, for the texts every call prints ("%d %s").
func plural[N ~int | ~int64](n N, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
