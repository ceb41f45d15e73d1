package rg

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"

	"github.com/fencefs/fencefs/tools/internal/textsearch"
)

// A search asks rg for its standard output with --null, --with-filename,
// --line-number, --no-heading and --no-context-separator, which holds
// three kinds of record:
//
//	PATH NUL NUMBER ':' TEXT '\n'    a matching line
//	PATH NUL NUMBER '-' TEXT '\n'    a context line
//	PATH ': binary file matches (found "\0" byte around offset N)\n'
//
// A line's text holds no line break, and --max-columns with
// --max-columns-preview cuts a long one to a preview followed by
// " [... omitted end of long line]", so rg never gathers the matches of
// a long line. (Its JSON output lists every match with its position: a
// 50 MB line of "a" searched for "a" makes rg hold 2.4 GB and print
// 2.7 GB.) The binary notice, printed after whatever lines of the file
// came before its first NUL, is the only record without a NUL.
//
// A path holds no NUL but may hold line breaks, so the reader works on
// the output's physical lines: one with a NUL ends a line record whose
// path began after the previous record; one without is the end of a
// binary notice when it ends as a notice does, and otherwise a piece of
// a path that goes on. Only a file name built to end like a notice can
// mislead this, and then only as to which file a record belongs to: the
// caller checks every path and line it is given against storage.

// maxPathBytes bounds a path; no file system path comes near it.
const maxPathBytes = 1 << 16

// errOutput is returned for output rg cannot have printed.
var errOutput = errors.New("malformed output")

// Binary notices: rg prints the first with --binary, the second without.
var (
	noticeBinary  = []byte(`: binary file matches (found "\0" byte around offset `)
	noticeStopped = []byte(`: WARNING: stopped searching binary file after match (found "\0" byte around offset `)
)

// record is one record of rg's output.
type record struct {
	path []byte
	// binary is the offset of a binary notice, or -1 for a line.
	binary int64
	line   textsearch.Line
}

// outputReader reads records from rg's output.
type outputReader struct {
	r *bufio.Reader
	// keep is how many bytes of a line's text are kept; negative for all.
	keep    int
	maxCols int
	path    []byte // the record read so far, up to its NUL
	num     []byte
	text    []byte
	cut     bool // text left bytes out
}

func newOutputReader(r *bufio.Reader, maxCols int) *outputReader {
	return &outputReader{r: r, keep: textsearch.DisplayBytes(maxCols), maxCols: maxCols}
}

// read returns the next piece of a physical line; whole reports that it
// ends the line.
func (o *outputReader) read() (piece []byte, whole bool, err error) {
	piece, err = o.r.ReadSlice('\n')
	switch {
	case err == nil:
		return piece, true, nil
	case errors.Is(err, bufio.ErrBufferFull):
		return piece, false, nil
	case err == io.EOF && len(piece) > 0:
		return nil, false, io.ErrUnexpectedEOF
	}
	return nil, false, err
}

// next reads the next record into rec, whose path stays valid until the
// following call. It returns io.EOF at the end of the output.
func (o *outputReader) next(rec *record) error {
	o.path = o.path[:0]
	for {
		piece, whole, err := o.read()
		if err == io.EOF && len(o.path) > 0 {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return err
		}
		i := bytes.IndexByte(piece, 0)
		n := len(piece)
		if i >= 0 {
			n = i
		}
		if len(o.path)+n > maxPathBytes {
			return errOutput
		}
		o.path = append(o.path, piece[:n]...)
		if i >= 0 {
			rec.path, rec.binary = o.path, -1
			return o.line(rec, piece[i+1:], whole)
		}
		if !whole {
			continue
		}
		// A physical line without a NUL: a binary notice, or a piece of a
		// path with a line break.
		if n, off, ok := notice(o.path[:len(o.path)-1]); ok {
			rec.path, rec.binary, rec.line = o.path[:n], off, textsearch.Line{}
			return nil
		}
	}
}

// line reads the rest of a line record: rest is what followed the NUL in
// the piece read, whole when that piece ended the physical line.
func (o *outputReader) line(rec *record, rest []byte, whole bool) error {
	o.num = o.num[:0]
	var sep byte
	for sep == 0 {
		d := 0
		for d < len(rest) && '0' <= rest[d] && rest[d] <= '9' {
			d++
		}
		o.num = append(o.num, rest[:d]...)
		switch {
		case len(o.num) > 18:
			return errOutput
		case d < len(rest):
			sep, rest = rest[d], rest[d+1:]
			continue
		case whole:
			return errOutput
		}
		var err error
		if rest, whole, err = o.read(); err != nil {
			return unexpected(err)
		}
	}
	if len(o.num) == 0 || (sep != ':' && sep != '-') {
		return errOutput
	}
	number, _ := strconv.Atoi(string(o.num))
	rec.line = textsearch.Line{Number: number, Match: sep == ':'}
	o.text, o.cut = o.text[:0], false
	o.add(rest)
	for !whole {
		var err error
		if rest, whole, err = o.read(); err != nil {
			return unexpected(err)
		}
		o.add(rest)
	}
	text := o.text
	if !o.cut {
		text = bytes.TrimSuffix(text, []byte{'\n'})
	}
	rec.line.Text = textsearch.Display(text, o.maxCols)
	return nil
}

// add keeps as much of p as the line's text may hold.
func (o *outputReader) add(p []byte) {
	if o.keep >= 0 && len(o.text)+len(p) > o.keep {
		p, o.cut = p[:max(o.keep-len(o.text), 0)], true
	}
	o.text = append(o.text, p...)
}

// unexpected turns the end of the output inside a record into an error.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// notice reports whether line (without its line break) ends as a binary
// notice does, with the length of the path before the notice and the
// offset it names.
func notice(line []byte) (pathLen int, offset int64, ok bool) {
	if len(line) == 0 || line[len(line)-1] != ')' {
		return 0, 0, false
	}
	body := line[:len(line)-1]
	d := len(body)
	for d > 0 && '0' <= body[d-1] && body[d-1] <= '9' {
		d--
	}
	if d == len(body) || len(body)-d > 18 {
		return 0, 0, false
	}
	for _, prefix := range [][]byte{noticeBinary, noticeStopped} {
		if bytes.HasSuffix(body[:d], prefix) {
			off, err := strconv.ParseInt(string(body[d:]), 10, 64)
			return d - len(prefix), off, err == nil
		}
	}
	return 0, 0, false
}

// limits bound what parseOutput takes of one file's report.
type limits struct {
	// maxLines is SearchQuery.MaxLines.
	maxLines int
	// maxOutput is how many bytes of output one file's report may take
	// before the file is abandoned; 0 means no bound. It needs offset.
	maxOutput int64
	// offset returns how many bytes of the output were consumed.
	offset func() int64
}

// parseOutput reads rg's output and calls fn per file, once its records
// end or once it has lim.maxLines lines. It reports whether it read to
// the end of the output, and the path of the file it abandoned when that
// file's report outgrew lim.maxOutput (reported Incomplete first, unless
// fn had it already); the output after that is left unread.
func parseOutput(out *bufio.Reader, maxCols int, lim limits, fn func(File) bool) (complete bool, abandoned string, err error) {
	o := newOutputReader(out, maxCols)
	var rec record
	var cur File
	open := false   // cur holds a file
	handed := false // fn had cur; the rest of its report is dropped
	var start int64 // the offset at which cur's report began
	finish := func() bool {
		ok := !open || handed || fn(cur)
		open = false
		return ok
	}
	for {
		var at int64
		if lim.offset != nil {
			at = lim.offset()
		}
		err := o.next(&rec)
		if err == io.EOF {
			return finish(), "", nil
		}
		if err != nil {
			return false, "", err
		}
		if !open || string(rec.path) != cur.Path {
			if !finish() {
				return false, "", nil
			}
			cur, open, handed, start = File{Path: string(rec.path), BinaryOffset: -1}, true, false, at
		}
		switch {
		case handed:
		case rec.binary >= 0:
			cur.BinaryOffset = rec.binary
		default:
			cur.Lines = append(cur.Lines, rec.line)
			if lim.maxLines > 0 && len(cur.Lines) >= lim.maxLines {
				handed = true
				if !fn(cur) {
					return false, "", nil
				}
			}
		}
		if lim.maxOutput > 0 && lim.offset != nil && lim.offset()-start > lim.maxOutput {
			if !handed {
				cur.Incomplete, cur.BinaryOffset = true, -1
				if !fn(cur) {
					return false, "", nil
				}
			}
			return false, cur.Path, nil
		}
	}
}
