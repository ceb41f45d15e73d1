package rg

import (
	"bufio"
	"encoding/base64"
	"errors"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/fencefs/fencefs/tools/internal/textsearch"
)

// rg --json reports every submatch of a line and the whole line, so one
// long line can make a message of hundreds of megabytes (a 50 MB line of
// "a" searched for "a" prints 50 million submatches). The reader below
// therefore decodes a message as a stream, byte by byte from the
// buffered output: it keeps the few fields the runner uses, at most as
// much of a line's text as can be displayed, and skips everything else
// without holding it, so memory stays bounded whatever rg prints.

// maxPathBytes bounds a decoded path; no file system path comes near it.
const maxPathBytes = 1 << 16

// maxSkipDepth bounds the nesting of values skipped inside a message.
const maxSkipDepth = 64

var errJSON = errors.New("malformed JSON message")

// message is the part of one rg --json message the runner uses.
type message struct {
	typ          string
	path         jsonField
	lines        jsonField
	lineNumber   int
	binaryOffset int64 // -1 when absent or null
}

// jsonField is a decoded {"text": ...} or {"bytes": ...} object, cut
// after a limit.
type jsonField struct {
	data []byte
	// cut is set when data holds only a prefix of the value.
	cut bool
}

// decoder reads JSON values from rg's output.
type decoder struct {
	r *bufio.Reader
	// keepLine is how many bytes of a line's text are kept; negative for
	// all of it.
	keepLine int
	scratch  []byte
}

// newDecoder returns a decoder keeping enough of each line to display
// maxCols characters (see textsearch.Display) and to know there are more.
func newDecoder(r *bufio.Reader, maxCols int) *decoder {
	d := &decoder{r: r, keepLine: -1}
	if maxCols == 0 {
		maxCols = textsearch.DefaultMaxColumns
	}
	if maxCols > 0 {
		// A character takes at most utf8.UTFMax bytes, or one byte when
		// invalid; one more character shows that the line is longer.
		d.keepLine = (maxCols + 1) * utf8.UTFMax
	}
	return d
}

// next returns the next byte that is not JSON white space.
func (d *decoder) next() (byte, error) {
	for {
		c, err := d.r.ReadByte()
		if err != nil {
			return 0, err
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c, nil
	}
}

// message reads one message. It returns io.EOF when the output ended
// before a message started.
func (d *decoder) message(m *message) error {
	*m = message{binaryOffset: -1}
	c, err := d.next()
	if err != nil {
		return err
	}
	return d.object(c, func(key string) error {
		switch key {
		case "type":
			b, _, err := d.valueString(d.scratch[:0], 32)
			m.typ = string(b)
			return err
		case "data":
			c, err := d.next()
			if err != nil {
				return unexpected(err)
			}
			return d.object(c, func(key string) error { return d.data(m, key) })
		}
		return d.skip()
	})
}

// data reads one member of a message's data object.
func (d *decoder) data(m *message, key string) error {
	switch key {
	case "path":
		return d.field(&m.path, maxPathBytes)
	case "lines":
		return d.field(&m.lines, d.keepLine)
	case "line_number":
		n, null, err := d.number()
		if !null {
			m.lineNumber = int(n)
		}
		return err
	case "binary_offset":
		n, null, err := d.number()
		if !null {
			m.binaryOffset = n
		}
		return err
	}
	return d.skip()
}

// field reads a {"text": ...} or {"bytes": ...} object, keeping at most
// keep decoded bytes (all when keep < 0).
func (d *decoder) field(f *jsonField, keep int) error {
	c, err := d.next()
	if err != nil {
		return unexpected(err)
	}
	if c == 'n' {
		return d.literal("ull")
	}
	text := false
	return d.object(c, func(key string) error {
		switch {
		case key == "text":
			text = true
			f.data, f.cut, err = d.valueString(f.data[:0], keep)
			return err
		case key == "bytes" && !text:
			// rg sends one of the two; were both there, text would win.
			k := keep
			if k >= 0 {
				k = (k + 2) / 3 * 4 // whole base64 quanta covering keep bytes
			}
			var enc []byte
			enc, f.cut, err = d.valueString(d.scratch[:0], k)
			d.scratch = enc[:0]
			if err != nil {
				return err
			}
			f.data = make([]byte, base64.StdEncoding.DecodedLen(len(enc)))
			n, err := base64.StdEncoding.Decode(f.data, enc)
			f.data = f.data[:n]
			return err
		}
		return d.skip()
	})
}

// object reads an object whose "{" is c, calling member for each key
// with the reader placed before the value, which member must consume.
func (d *decoder) object(c byte, member func(key string) error) error {
	if c != '{' {
		return errJSON
	}
	var key []byte
	for first := true; ; first = false {
		c, err := d.next()
		if err != nil {
			return unexpected(err)
		}
		if c == '}' && first {
			return nil
		}
		if c != '"' {
			return errJSON
		}
		var cut bool
		if key, cut, err = d.string(key[:0], 64); err != nil {
			return err
		}
		if cut {
			key = key[:0] // no key the reader uses is that long
		}
		if c, err = d.next(); err != nil {
			return unexpected(err)
		}
		if c != ':' {
			return errJSON
		}
		if err := member(string(key)); err != nil {
			return err
		}
		if c, err = d.next(); err != nil {
			return unexpected(err)
		}
		switch c {
		case ',':
		case '}':
			return nil
		default:
			return errJSON
		}
	}
}

// valueString reads a string value, appending at most keep decoded bytes
// to dst (see string).
func (d *decoder) valueString(dst []byte, keep int) ([]byte, bool, error) {
	c, err := d.next()
	if err != nil {
		return dst, false, unexpected(err)
	}
	if c != '"' {
		return dst, false, errJSON
	}
	return d.string(dst, keep)
}

// string reads a string whose opening quote was read, appending at most
// keep decoded bytes to dst (all when keep < 0) and skipping the rest.
// cut reports whether bytes were left out. Escapes decode as
// encoding/json decodes them.
func (d *decoder) string(dst []byte, keep int) (out []byte, cut bool, err error) {
	start := len(dst)
	add := func(p []byte) {
		if keep >= 0 && len(dst)-start+len(p) > keep {
			p, cut = p[:max(keep-(len(dst)-start), 0)], true
		}
		dst = append(dst, p...)
	}
	var buf [utf8.UTFMax]byte
	for {
		c, err := d.r.ReadByte()
		if err != nil {
			return dst, cut, unexpected(err)
		}
		switch {
		case c == '"':
			return dst, cut, nil
		case c < 0x20:
			return dst, cut, errJSON
		case c != '\\':
			buf[0] = c
			add(buf[:1])
			continue
		}
		e, err := d.r.ReadByte()
		if err != nil {
			return dst, cut, unexpected(err)
		}
		switch e {
		case '"', '\\', '/':
			buf[0] = e
		case 'b':
			buf[0] = '\b'
		case 'f':
			buf[0] = '\f'
		case 'n':
			buf[0] = '\n'
		case 'r':
			buf[0] = '\r'
		case 't':
			buf[0] = '\t'
		case 'u':
			if err := d.unicode(func(r rune) { add(utf8.AppendRune(buf[:0], r)) }); err != nil {
				return dst, cut, err
			}
			continue
		default:
			return dst, cut, errJSON
		}
		add(buf[:1])
	}
}

// unicode reads the hex digits of a \u escape and emits its rune; a high
// surrogate pairs with a following \u low surrogate. As in
// encoding/json, a surrogate that does not pair becomes U+FFFD, and the
// escape after it is taken on its own.
func (d *decoder) unicode(emit func(rune)) error {
	r, err := d.hex4()
	for err == nil {
		if !utf16.IsSurrogate(r) {
			emit(r)
			return nil
		}
		if b, perr := d.r.Peek(2); perr != nil || b[0] != '\\' || b[1] != 'u' {
			emit(utf8.RuneError)
			return nil
		}
		d.r.Discard(2)
		var r2 rune
		if r2, err = d.hex4(); err != nil {
			break
		}
		if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
			emit(dec)
			return nil
		}
		emit(utf8.RuneError)
		r = r2
	}
	return err
}

func (d *decoder) hex4() (rune, error) {
	var r rune
	for range 4 {
		c, err := d.r.ReadByte()
		if err != nil {
			return 0, unexpected(err)
		}
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, errJSON
		}
		r = r<<4 | rune(c)
	}
	return r, nil
}

// number reads an integer value, or null.
func (d *decoder) number() (n int64, null bool, err error) {
	c, err := d.next()
	if err != nil {
		return 0, false, unexpected(err)
	}
	if c == 'n' {
		return 0, true, d.literal("ull")
	}
	digits := []byte{c}
	for {
		b, err := d.r.Peek(1)
		if err != nil || !isNumberByte(b[0]) {
			break
		}
		d.r.ReadByte()
		digits = append(digits, b[0])
		if len(digits) > 32 {
			return 0, false, errJSON
		}
	}
	n, err = strconv.ParseInt(string(digits), 10, 64)
	if err != nil {
		return 0, false, errJSON
	}
	return n, false, nil
}

func isNumberByte(c byte) bool {
	return '0' <= c && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// literal reads the rest of true, false or null.
func (d *decoder) literal(rest string) error {
	for i := range len(rest) {
		c, err := d.r.ReadByte()
		if err != nil {
			return unexpected(err)
		}
		if c != rest[i] {
			return errJSON
		}
	}
	return nil
}

// skip reads and drops one value, holding none of it: strings are read
// through, containers by counting their nesting.
func (d *decoder) skip() error {
	depth := 0
	for {
		c, err := d.next()
		if err != nil {
			return unexpected(err)
		}
		switch {
		case c == '"':
			if err := d.skipString(); err != nil {
				return err
			}
		case c == '{' || c == '[':
			if depth++; depth > maxSkipDepth {
				return errJSON
			}
			continue
		case c == '}' || c == ']':
			if depth--; depth < 0 {
				return errJSON
			}
		case c == ',' || c == ':':
			if depth == 0 {
				return errJSON
			}
			continue
		case c == 't':
			err = d.literal("rue")
		case c == 'f':
			err = d.literal("alse")
		case c == 'n':
			err = d.literal("ull")
		case c == '-' || '0' <= c && c <= '9':
			for {
				b, perr := d.r.Peek(1)
				if perr != nil || !isNumberByte(b[0]) {
					break
				}
				d.r.ReadByte()
			}
		default:
			return errJSON
		}
		if err != nil {
			return err
		}
		if depth == 0 {
			return nil
		}
	}
}

// skipString reads through a string whose opening quote was read. A
// quote ends it unless an odd run of backslashes, which may span chunks,
// escapes it.
func (d *decoder) skipString() error {
	run := 0 // backslashes just before the current chunk
	for {
		chunk, err := d.r.ReadSlice('"')
		if err != nil && err != bufio.ErrBufferFull {
			return unexpected(err)
		}
		body := chunk
		if err == nil {
			body = chunk[:len(chunk)-1]
		}
		k := 0
		for k < len(body) && body[len(body)-1-k] == '\\' {
			k++
		}
		if k == len(body) {
			run += k
		} else {
			run = k
		}
		if err == nil {
			if run%2 == 0 {
				return nil
			}
			run = 0 // the escaped quote ends the run
		}
	}
}

// unexpected turns the end of the output inside a value into an error.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
