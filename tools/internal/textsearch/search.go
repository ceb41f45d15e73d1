package textsearch

import (
	"bytes"
	"context"
	"errors"
	"io"
)

// Line is one line of search output.
type Line struct {
	// Number is the 1-based line number.
	Number int
	// Text is the line as displayed: without its "\n", invalid UTF-8 shown
	// as U+FFFD, cut after the display width.
	Text string
	// Match is true for a matching line and false for a context line.
	Match bool
}

// initialBuffer is the size of the read buffer; it grows only for a line
// longer than the buffer.
const initialBuffer = 64 << 10

// maxPooledBuffer bounds the buffers kept for reuse between files.
const maxPooledBuffer = 1 << 20

// scan is the state of one file's search.
type scan struct {
	ctx         context.Context
	m           *Matcher
	buf, folded []byte
	n           int  // bytes in buf
	eof         bool // the reader is exhausted
	pos         int  // first unsearched byte in buf
	lineNo      int  // number of the line starting at pos
	lastPrinted int  // number of the last line emitted, 0 for none
	afterLeft   int  // context lines still owed after the last match
	emit        func(Line) error
}

// UTF8BOM is the UTF-8 byte order mark.
const UTF8BOM = "\xef\xbb\xbf"

// ErrBinary is returned by [Matcher.Search] for a file with a NUL byte in
// its first [BinaryPrefix] bytes.
var ErrBinary = errors.New("textsearch: binary file")

// Search reads r to its end and calls emit, in order, for every matching
// line and every context line. A binary file gives ErrBinary before any
// call of emit. An error returned by emit stops the search and is returned,
// and so is the context's error when it is cancelled, checked before every
// read. A line longer than [MaxLineBytes] is searched on its first
// MaxLineBytes bytes only.
func (m *Matcher) Search(ctx context.Context, r io.Reader, emit func(Line) error) error {
	s := &scan{ctx: ctx, m: m, lineNo: 1, emit: emit}
	s.buf = m.getBuf(&m.bufPool)
	defer func() {
		// A buffer grown for a long line is not kept for the next file.
		if len(s.buf) <= maxPooledBuffer {
			m.bufPool.Put(&s.buf)
		}
	}()
	if m.litFold {
		s.folded = m.getBuf(&m.foldPool)
		defer func() {
			if len(s.folded) <= maxPooledBuffer {
				m.foldPool.Put(&s.folded)
			}
		}()
	}
	if err := s.fill(ctx, r); err != nil {
		return err
	}
	if bytes.IndexByte(s.buf[:min(s.n, BinaryPrefix)], 0) >= 0 {
		return ErrBinary
	}
	if m.skipBOM && bytes.HasPrefix(s.buf[:s.n], []byte(UTF8BOM)) {
		s.n = copy(s.buf, s.buf[len(UTF8BOM):s.n])
	}
	for {
		end := s.n
		if !s.eof {
			end = bytes.LastIndexByte(s.buf[:s.n], '\n') + 1
		}
		if end > s.pos || s.eof {
			if err := s.process(end); err != nil {
				return err
			}
		}
		if s.eof {
			return nil
		}
		s.compact(end)
		if err := s.fill(ctx, r); err != nil {
			return err
		}
	}
}

func (m *Matcher) getBuf(pool interface{ Get() any }) []byte {
	if b, ok := pool.Get().(*[]byte); ok {
		return *b
	}
	return make([]byte, initialBuffer)
}

// fill reads until the buffer is full or the reader ends, growing the
// buffer first when it is full of one unfinished line, or cutting that
// line at maxLine bytes when it is longer. The context is checked before
// every read, so a reader that never ends and ignores the context still
// stops at the deadline.
func (s *scan) fill(ctx context.Context, r io.Reader) error {
	if s.n == len(s.buf) {
		start := bytes.LastIndexByte(s.buf[:s.n], '\n') + 1
		if s.n-start > s.m.maxLine {
			if err := s.cutLine(ctx, r, start); err != nil || s.eof {
				return err
			}
		} else {
			size := 2 * len(s.buf)
			if limit := start + s.m.maxLine + 1; limit < size {
				// One byte past the cap is enough to know that the line
				// is too long.
				size = limit
			}
			grown := make([]byte, size)
			copy(grown, s.buf[:s.n])
			s.buf = grown
		}
	}
	for s.n < len(s.buf) {
		if err := ctx.Err(); err != nil {
			return err
		}
		k, err := r.Read(s.buf[s.n:])
		s.n += k
		if err == io.EOF {
			s.eof = true
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// cutLine ends the unfinished line starting at start after maxLine bytes
// with a "\n" standing for its own, and reads and drops the rest of the
// line up to that "\n", keeping what follows it.
func (s *scan) cutLine(ctx context.Context, r io.Reader, start int) error {
	s.n = start + s.m.maxLine
	s.buf[s.n] = '\n'
	s.n++
	scratch := make([]byte, initialBuffer)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		k, err := r.Read(scratch)
		if i := bytes.IndexByte(scratch[:k], '\n'); i >= 0 {
			rest := scratch[i+1 : k]
			if len(s.buf)-s.n < len(rest) {
				grown := make([]byte, s.n+len(rest))
				copy(grown, s.buf[:s.n])
				s.buf = grown
			}
			s.n += copy(s.buf[s.n:], rest)
			s.eof = err == io.EOF
			if err == io.EOF {
				return nil
			}
			return err
		}
		if err == io.EOF {
			s.eof = true
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// compact drops the searched bytes before end, keeping the last Context
// lines for before-context, and moves the rest to the buffer's start.
func (s *scan) compact(end int) {
	keep := end
	for k := 0; k < s.m.context && keep > 0; k++ {
		keep = bytes.LastIndexByte(s.buf[:keep-1], '\n') + 1
	}
	copy(s.buf, s.buf[keep:s.n])
	s.n -= keep
	s.pos -= keep
}

// process searches the complete lines in buf[pos:end].
func (s *scan) process(end int) error {
	if s.m.litFold {
		if len(s.folded) < len(s.buf) {
			s.folded = make([]byte, len(s.buf))
		}
		lowerInto(s.folded[s.pos:end], s.buf[s.pos:end])
	}
	for s.pos < end {
		ms, me, found, err := s.m.nextMatch(s.ctx, s.buf, s.folded, s.pos, end)
		if err != nil {
			return err
		}
		limit := end
		if found {
			limit = ms
		}
		if err := s.after(limit); err != nil {
			return err
		}
		if !found {
			s.lineNo += bytes.Count(s.buf[s.pos:end], []byte{'\n'})
			s.pos = end
			return nil
		}
		matchNo := s.lineNo + bytes.Count(s.buf[s.pos:ms], []byte{'\n'})
		if err := s.before(ms, matchNo); err != nil {
			return err
		}
		if err := s.line(matchNo, s.buf[ms:me], true); err != nil {
			return err
		}
		s.afterLeft = s.m.context
		s.lineNo = matchNo + 1
		s.pos = me + 1
	}
	return nil
}

// after emits the context lines owed after the last match, from pos up to
// limit.
func (s *scan) after(limit int) error {
	for s.afterLeft > 0 && s.pos < limit {
		e := lineEnd(s.buf, s.pos, limit)
		if err := s.line(s.lineNo, s.buf[s.pos:e], false); err != nil {
			return err
		}
		s.afterLeft--
		s.lineNo++
		s.pos = min(e+1, limit)
	}
	return nil
}

// before emits up to Context lines before the match starting at ms, those
// not yet emitted.
func (s *scan) before(ms, matchNo int) error {
	start, first := ms, matchNo
	for k := 0; k < s.m.context && first-1 > s.lastPrinted && start > 0; k++ {
		start = bytes.LastIndexByte(s.buf[:start-1], '\n') + 1
		first--
	}
	for no := first; no < matchNo; no++ {
		e := lineEnd(s.buf, start, ms)
		if err := s.line(no, s.buf[start:e], false); err != nil {
			return err
		}
		start = e + 1
	}
	return nil
}

func (s *scan) line(no int, raw []byte, match bool) error {
	s.lastPrinted = no
	return s.emit(Line{Number: no, Text: Display(raw, s.m.maxCols), Match: match})
}
