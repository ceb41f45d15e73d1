package tools

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// textTraits records, as read_file streams a text file, what its
// numbered lines cannot show: line endings, a byte order mark, a missing
// final line break, invalid UTF-8 and tab indentation.
type textTraits struct {
	crlf, lf     int
	bom          bool
	lastByte     byte
	invalid      int
	tabs, spaces int
	// carry holds an incomplete UTF-8 sequence at the end of a chunk
	// that did not end a line.
	carry []byte
	seen  bool
}

// observe takes the next chunk of the file; atLineStart says whether it
// starts a line.
func (tr *textTraits) observe(chunk []byte, atLineStart bool) {
	if !tr.seen {
		tr.seen = true
		tr.bom = bytes.HasPrefix(chunk, []byte("\ufeff"))
	}
	if atLineStart && len(chunk) > 0 {
		switch chunk[0] {
		case '\t':
			tr.tabs++
		case ' ':
			tr.spaces++
		}
	}
	if n := len(chunk); n > 0 {
		tr.lastByte = chunk[n-1]
		if chunk[n-1] == '\n' {
			if n > 1 && chunk[n-2] == '\r' {
				tr.crlf++
			} else {
				tr.lf++
			}
		}
	}
}

// countInvalid counts the invalid UTF-8 bytes of chunk, the next piece of
// the file, carrying an incomplete sequence at its end over to the next
// piece. As a line break is never part of a sequence, the count is the
// same whether the file comes in lines or in reads.
func (tr *textTraits) countInvalid(chunk []byte) {
	if len(tr.carry) == 0 && utf8.Valid(chunk) {
		return
	}
	b := chunk
	if len(tr.carry) > 0 {
		b = append(tr.carry, chunk...)
		tr.carry = nil
	}
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			if !utf8.FullRune(b) && len(b) < utf8.UTFMax && b[len(b)-1] != '\n' {
				tr.carry = append([]byte(nil), b...)
				return
			}
			tr.invalid++
		}
		b = b[size:]
	}
}

// finish counts a sequence left incomplete at the end of the file.
func (tr *textTraits) finish() {
	tr.invalid += len(tr.carry)
	tr.carry = nil
}

// notes returns the header's notes, "" when none applies (the common
// case, whose header stays as it was).
func (tr *textTraits) notes() string {
	var n []string
	switch {
	case tr.crlf > 0 && tr.lf > 0:
		n = append(n, fmt.Sprintf("mixed line endings: %d CRLF, %d LF", tr.crlf, tr.lf))
	case tr.crlf > 0:
		n = append(n, "CRLF line endings (each line's \\r is shown before its line break)")
	}
	if tr.bom {
		n = append(n, "starts with a UTF-8 byte order mark (the U+FEFF that begins line 1)")
	}
	if tr.seen && tr.lastByte != '\n' {
		n = append(n, "no line break at the end of the file")
	}
	if tr.invalid > 0 {
		if tr.invalid == 1 {
			n = append(n, "not valid UTF-8: 1 invalid byte, shown as U+FFFD (\ufffd)")
		} else {
			n = append(n, fmt.Sprintf("not valid UTF-8: %d invalid bytes, each shown as U+FFFD (\ufffd)", tr.invalid))
		}
	}
	switch {
	case tr.tabs > 0 && tr.spaces > 0:
		n = append(n, "indented with tabs and spaces (the tab after each line number is not part of the line)")
	case tr.tabs > 0:
		n = append(n, "indented with tabs (the tab after each line number is not part of the line)")
	}
	if len(n) == 0 {
		return ""
	}
	return " | " + strings.Join(n, "; ")
}
