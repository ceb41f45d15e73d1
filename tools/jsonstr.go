package tools

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// unquoteJSON decodes the JSON string literal v as encoding/json does
// (invalid UTF-8 and lone surrogates become U+FFFD), for a v that
// json.Unmarshal already checked as part of the whole arguments object:
// decoding it again with json.Unmarshal would scan the content twice
// more, which for write_file's content is most of the call's decoding.
// ok is false when v is not a string literal.
func unquoteJSON(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	s := v[1 : len(v)-1]
	simple := true
	for _, c := range s {
		if c == '\\' || c == '"' || c < 0x20 || c >= utf8.RuneSelf {
			simple = false
			break
		}
	}
	if simple {
		return string(s), true
	}
	// A Builder's String is its buffer: the text is copied once.
	var out strings.Builder
	out.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 >= len(s) {
				return "", false
			}
			switch s[i+1] {
			case '"', '\\', '/':
				out.WriteByte(s[i+1])
			case 'b':
				out.WriteByte('\b')
			case 'f':
				out.WriteByte('\f')
			case 'n':
				out.WriteByte('\n')
			case 'r':
				out.WriteByte('\r')
			case 't':
				out.WriteByte('\t')
			case 'u':
				r, ok := hex4(s[i+2:])
				if !ok {
					return "", false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
						if r2, ok := hex4(s[i+2:]); ok {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								out.WriteRune(dec)
								i += 6
								continue
							}
						}
					}
					r = utf8.RuneError
				}
				out.WriteRune(r)
				continue
			default:
				return "", false
			}
			i += 2
		case c == '"' || c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			out.WriteByte(c)
			i++
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				out.WriteRune(utf8.RuneError)
			} else {
				out.Write(s[i : i+size])
			}
			i += size
		}
	}
	return out.String(), true
}

// hex4 reads the four hex digits of a \u escape.
func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
