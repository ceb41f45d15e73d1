package tools

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/fencefs/fencefs/backend"
)

// maxPooledWindow bounds the window buffers kept for reuse, so that one
// huge window does not stay in memory.
const maxPooledWindow = 1 << 20

// readBufferSize is the read-ahead of streamed reads; lines longer than
// this are handled in pieces, so memory stays bounded by the window.
const readBufferSize = 64 << 10

func (s *Set) readFileTool() *Tool {
	desc := fmt.Sprintf("Read a text file. Each line is shown with its 1-based line number, a tab, and the line; "+
		"the header gives the path, the total number of lines and a content hash. Reads at most %d lines by default: "+
		"use offset (lines to skip) and limit (lines to show) to page through longer files. "+
		"Binary files are reported by size, never dumped.", s.opts.MaxReadLines)
	desc += s.pathRule()
	if s.opts.NoContentHashes {
		desc = strings.Replace(desc, " and a content hash", "", 1)
	}
	if s.opts.MaxReadChars > 0 {
		desc += fmt.Sprintf(" A result holds at most %d characters; a longer window ends early with a hint how to continue.", s.opts.MaxReadChars)
	}
	return &Tool{
		Name:        nameReadFile,
		Description: desc,
		InputSchema: objectSchema([]string{"path"},
			prop{"path", `{"type":"string","description":"The file to read, relative to the working directory, or starting with '/'."}`},
			prop{"offset", `{"type":"integer","minimum":0,"default":0,"description":"Number of lines to skip from the start of the file."}`},
			prop{"limit", fmt.Sprintf(`{"type":"integer","minimum":1,"default":%d,"description":"Maximum number of lines to show."}`, s.opts.MaxReadLines)},
		),
		Annotations: Annotations{Title: "Read file", ReadOnly: true, Idempotent: true},
	}
}

func (s *Set) readFile(ctx context.Context, raw json.RawMessage) (string, error) {
	var p string
	var offset, limit *int
	if err := decodeArgs(raw, arg{"path", &p, true}, arg{"offset", &offset, false}, arg{"limit", &limit, false}); err != nil {
		return "", err
	}
	win := window{offset: 0, limit: s.opts.MaxReadLines, maxChars: s.opts.MaxReadChars}
	if offset != nil {
		win.offset = *offset
	}
	if limit != nil {
		win.limit = *limit
	}
	if win.offset < 0 {
		return "", retryf(KindInvalid, "Invalid offset %d: offset must be 0 or greater.", win.offset)
	}
	if win.limit < 1 {
		return "", retryf(KindInvalid, "Invalid limit %d: limit must be 1 or greater.", win.limit)
	}
	t, r, err := s.openForRead(ctx, p)
	if err != nil {
		return "", err
	}
	defer r.Close()
	scan, err := s.scanFile(ctx, r, win)
	if err != nil {
		return "", s.storageErr(err, p)
	}
	if scan.binary {
		return s.readBinary(ctx, t, scan, r.Info())
	}
	if scan.lines > 0 && win.offset >= scan.lines {
		return "", retryf(KindInvalid, "Offset %d exceeds file length (%s).", win.offset, count(scan.lines, "line", "lines"))
	}
	s.guard.remember(t.resolved, scan.hash)
	if s.listened(ctx) {
		s.emit(ctx, FileRead{Path: s.canonical(t.resolved), ContentHash: scan.hash})
	}
	out := s.formatRead(p, scan, win)
	s.releaseScan(scan)
	return out, nil
}

// openForRead resolves and checks the path p as read_file does, and opens
// it. A path without links, the common case, is opened in one step where
// the backend can prove that it holds none (backend.NoLinksReader): the
// resolution would have given the path itself, and the policy judged it
// already. Anything else (a link on the way, an error, a backend that
// cannot tell, a Permission hook, which is asked before anything is
// opened) takes the resolution and then the open, whose refusals and
// texts are the contract's.
func (s *Set) openForRead(ctx context.Context, p string) (target, backend.FileReader, error) {
	if s.opts.Permission == nil {
		if written, err := s.lexical(p, s.cwd); err == nil {
			t := target{display: p, tool: nameReadFile, op: opOf(levelRead), written: written, resolved: written}
			if s.checkRules(t, levelRead) == nil {
				if r, ok := backend.OpenReadNoLinks(ctx, s.b, written); ok {
					return t, r, nil
				}
			}
		}
	}
	t, err := s.resolve(ctx, nameReadFile, p, levelRead)
	if err != nil {
		return t, nil, err
	}
	r, err := s.openFile(ctx, t)
	return t, r, err
}

// openFile opens the regular file t for reading, mapping the refusals to
// the messages of read_file and edit_file. It needs no Stat first: OpenRead
// refuses directories and special files itself, never blocking on a FIFO,
// and its stream's Info describes what it serves.
func (s *Set) openFile(ctx context.Context, t target) (backend.FileReader, error) {
	r, err := s.b.OpenRead(ctx, t.resolved)
	if err != nil {
		return nil, s.fileErr(err, t.display)
	}
	return r, nil
}

// fileErr maps the errors of opening a file for read_file and edit_file.
func (s *Set) fileErr(err error, display string) error {
	switch {
	case errors.Is(err, backend.ErrIsDir):
		return retryf(KindIsDir, "'%s' is a directory, not a file.", display)
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, backend.ErrNotRegular),
		errors.Is(err, backend.ErrNotDir), errors.Is(err, backend.ErrSymlink):
		return retryf(KindNotFound, "File not found: %s", display)
	}
	return s.storageErr(err, display)
}

// The read-ahead buffers of streamed reads and read_file's scan states
// are the process's, not each Set's: a server has a Set per tenant (and
// per session), and a pool of its own would give each new Set's first
// read a fresh 64 KiB buffer.
var (
	readBuffers sync.Pool
	scanStates  sync.Pool
)

// bufReader returns a pooled read-ahead buffer over r; scanFile returns
// it to the pool. Reusing the 64 KiB buffers keeps small reads cheap.
func (s *Set) bufReader(r io.Reader) *bufio.Reader {
	if br, ok := readBuffers.Get().(*bufio.Reader); ok {
		br.Reset(r)
		return br
	}
	return bufio.NewReaderSize(r, readBufferSize)
}

// window is the part of a file read_file shows.
type window struct {
	offset, limit int
	// maxChars caps the whole result; 0 means no cap.
	maxChars int
}

// scanResult is what one streaming pass over a file found.
type scanResult struct {
	binary bool
	// complete is set when the file was read to its end; lines, size and
	// hash are then known.
	complete bool
	size     int64
	lines    int
	hash     string
	// text holds the display text of the lines collected for the window,
	// from line offset+1 on, each ending in "\n"; ends[i] is where line
	// offset+1+i ends in text, and shownChars[i] its length in characters
	// (counted only with a character cap).
	text       []byte
	ends       []int
	shownChars []int
	// firstLen is the length in characters of line offset+1, including
	// its terminator.
	firstLen int
	// traits are what the header notes beside the lines.
	traits textTraits

	// The state of the scan, kept with the result so that one pooled
	// value serves a whole read (see Set.newScan).
	hr     hashingReader
	c      collector
	digest hash.Hash
	sum    [sha256.Size]byte
}

// newScan returns a scanResult for a scan of win, reusing a pooled one's
// digest and buffers.
func (s *Set) newScan(win window) *scanResult {
	res, _ := scanStates.Get().(*scanResult)
	if res == nil {
		return &scanResult{digest: sha256.New(), c: collector{win: win, collecting: true}}
	}
	digest := res.digest
	digest.Reset()
	c := collector{win: win, collecting: true, text: res.c.text[:0], ends: res.c.ends[:0], shownChars: res.c.shownChars[:0]}
	*res = scanResult{digest: digest, c: c}
	return res
}

// releaseScan returns res to the pool once its caller is done with it and
// with its text; a huge window is left to the collector.
func (s *Set) releaseScan(res *scanResult) {
	if cap(res.c.text) > maxPooledWindow || cap(res.c.ends) > maxPooledWindow/8 {
		return
	}
	res.hr = hashingReader{}
	res.text, res.ends, res.shownChars = nil, nil, nil
	scanStates.Put(res)
}

// setHash sets hash from the digest, without allocating but for the
// string.
func (res *scanResult) setHash() {
	var hx [2 * sha256.Size]byte
	hex.Encode(hx[:], res.digest.Sum(res.sum[:0]))
	res.hash = string(hx[:])
}

// hashingReader hashes and counts what is read through it, and stops
// when ctx is done.
type hashingReader struct {
	ctx context.Context
	r   io.Reader
	h   hash.Hash
	n   int64
	// eof is set once r reported its end, so that it is not asked again
	// (bufio asks again after a Peek that met the end).
	eof bool
	// traits, while set, counts the invalid UTF-8 of what is read, in
	// the reads' large pieces rather than line by line.
	traits *textTraits
}

func (hr *hashingReader) Read(p []byte) (int, error) {
	if hr.eof {
		return 0, io.EOF
	}
	// A stream may be endless and its reader deaf to ctx: check the
	// deadline before each read. What lies between two reads is one
	// buffer, scanned in memory.
	if err := hr.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := hr.r.Read(p)
	hr.h.Write(p[:n])
	hr.n += int64(n)
	hr.eof = err == io.EOF
	if hr.traits != nil {
		hr.traits.countInvalid(p[:n])
	}
	return n, err
}

// scanFile reads r once: it detects a binary file from its first 8192
// bytes (and stops there), and otherwise counts every line, hashes every
// byte and collects the lines of win, never holding more than the window
// (or, with a character cap, what could fit it) in memory.
func (s *Set) scanFile(ctx context.Context, r io.Reader, win window) (*scanResult, error) {
	res := s.newScan(win)
	hr := &res.hr
	*hr = hashingReader{ctx: ctx, r: r, h: res.digest, traits: &res.traits}
	br := s.bufReader(hr)
	defer func() {
		br.Reset(nil)
		readBuffers.Put(br)
	}()
	head, err := br.Peek(binaryPrefix)
	if err != nil && err != io.EOF {
		return nil, err
	}
	if isBinaryPrefix(head) {
		hr.traits = nil
		res.binary = true
		res.size = -1
		return res, s.finishBinary(ctx, br, hr, res)
	}
	c := &res.c
	atStart := true
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			res.traits.observe(chunk, atStart)
			if atStart {
				c.startLine()
				atStart = false
			}
			c.add(chunk)
			if chunk[len(chunk)-1] == '\n' {
				c.endLine()
				atStart = true
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil && err != bufio.ErrBufferFull {
			return nil, err
		}
	}
	if !atStart {
		c.endLine()
	}
	res.traits.finish()
	c.finish(res.traits.invalid == 0)
	res.complete = true
	res.size = hr.n
	res.lines = c.line
	res.setHash()
	res.text = c.text
	res.ends = c.ends
	res.shownChars = c.shownChars
	res.firstLen = c.first.total()
	return res, nil
}

// finishBinary reads a binary file to its end when its hash is needed
// (RequireRead, or an event listener); otherwise the size comes from Stat
// and the rest of the file is never read.
func (s *Set) finishBinary(ctx context.Context, br *bufio.Reader, hr *hashingReader, res *scanResult) error {
	if !s.opts.RequireRead && s.opts.OnEvent == nil {
		return nil
	}
	if _, err := io.Copy(io.Discard, contextReader{ctx, br}); err != nil {
		return err
	}
	res.complete = true
	res.size = hr.n
	res.setHash()
	return nil
}

// contextReader stops a long copy when ctx is done.
type contextReader struct {
	ctx context.Context
	r   io.Reader
}

func (c contextReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// readBinary answers read_file for a binary file; info describes the
// stream scanned, whose size stands in for what the scan did not read.
func (s *Set) readBinary(ctx context.Context, t target, scan *scanResult, info backend.FileInfo) (string, error) {
	size := scan.size
	if !scan.complete {
		size = info.Size
	}
	if scan.complete {
		s.guard.remember(t.resolved, scan.hash)
	}
	s.emit(ctx, FileRead{Path: s.canonical(t.resolved), ContentHash: scan.hash})
	return fmt.Sprintf("[Binary file: %s. It cannot be shown as text.]", count(size, "byte", "bytes")), nil
}

// collector gathers the lines of a window from a stream of pieces.
type collector struct {
	win  window
	line int // lines started so far
	// lineStart is where the current line starts in text: its raw bytes
	// are appended there and turned into display text when it ends.
	lineStart int
	// collecting is cleared when a character cap means no further line
	// could fit.
	collecting bool
	chars      int
	text       []byte
	ends       []int
	shownChars []int
	first      runeCounter
}

func (c *collector) inWindow() bool {
	return c.collecting && c.line > c.win.offset && c.line <= c.win.offset+c.win.limit
}

func (c *collector) startLine() {
	c.line++
	c.lineStart = len(c.text)
}

// add takes the next piece of the current line.
func (c *collector) add(p []byte) {
	if c.line == c.win.offset+1 {
		c.first.write(p)
	}
	if !c.inWindow() {
		return
	}
	c.text = append(c.text, p...)
	// A character takes at most 4 bytes, so a line this long cannot fit
	// what is left of the cap.
	if c.win.maxChars > 0 && len(c.text)-c.lineStart > utf8.UTFMax*(c.win.maxChars-c.chars) {
		c.collecting = false
		c.text = c.text[:c.lineStart]
	}
}

func (c *collector) endLine() {
	if !c.inWindow() {
		return
	}
	if c.win.maxChars > 0 {
		// The cap counts displayed characters, so each line is shown
		// as it ends.
		c.display(c.lineStart)
	}
	if len(c.text) == c.lineStart || c.text[len(c.text)-1] != '\n' {
		c.text = append(c.text, '\n')
	}
	c.ends = append(c.ends, len(c.text))
	if c.win.maxChars > 0 {
		n := utf8.RuneCount(c.text[c.lineStart:])
		c.shownChars = append(c.shownChars, n)
		c.chars += n
		if c.chars > c.win.maxChars {
			c.collecting = false
		}
	}
}

// display turns the raw bytes of text from start on into display text.
func (c *collector) display(start int) {
	if line := c.text[start:]; !utf8.Valid(line) {
		shown := displayText(line)
		c.text = append(c.text[:start], shown...)
	}
}

// finish turns the collected lines into display text, all at once where
// they were not shown line by line: most text is valid UTF-8 and needs
// one check for the whole window, none when valid says the whole file is.
func (c *collector) finish(valid bool) {
	if c.win.maxChars > 0 || valid || utf8.Valid(c.text) {
		return
	}
	raw := c.text
	c.text = make([]byte, 0, len(raw)+len(raw)/8)
	start := 0
	for i, e := range c.ends {
		lineStart := len(c.text)
		c.text = append(c.text, raw[start:e]...)
		c.display(lineStart)
		c.ends[i] = len(c.text)
		start = e
	}
}

// formatRead renders read_file's result: header, numbered lines and the
// continuation hint, shrunk to fit MaxReadChars on a complete line.
func (s *Set) formatRead(display string, scan *scanResult, win window) string {
	// The header is written straight into the result, which is sized
	// for the whole window, so that a read makes one string.
	notes := scan.traits.notes()
	size := len(display) + len(notes) + 64 + 80
	if len(scan.ends) > 0 {
		size += scan.ends[len(scan.ends)-1] + 8*len(scan.ends)
	}
	var b strings.Builder
	b.Grow(size)
	var num [20]byte
	b.WriteByte('[')
	b.WriteString(display)
	b.WriteString(" | ")
	b.Write(strconv.AppendInt(num[:0], int64(scan.lines), 10))
	b.WriteString(plural(scan.lines, " line", " lines"))
	if !s.opts.NoContentHashes {
		b.WriteString(" | hash:")
		b.WriteString(shortHash(scan.hash))
	}
	b.WriteString(notes)
	b.WriteString("]\n")
	if scan.lines == 0 {
		b.WriteString("(empty file)\n")
		return b.String()
	}
	k := len(scan.ends)
	if win.maxChars > 0 {
		k = fitWindow(utf8.RuneCountInString(b.String()), scan, win)
		if k == 0 {
			n := win.offset + 1
			fmt.Fprintf(&b, "... (Line %d is %s characters and does not fit the read window. Use offset=%d to skip it.)\n",
				n, withCommas(scan.firstLen), n)
			return b.String()
		}
	}
	start := 0
	for i, e := range scan.ends[:k] {
		b.Write(lineNumber(num[:0], win.offset+1+i))
		b.Write(scan.text[start:e])
		start = e
	}
	b.WriteString(readHint(scan.lines, win.offset+k))
	return b.String()
}

// fitWindow returns how many of the collected lines fit MaxReadChars with
// the header (of headerChars characters) and the continuation hint.
func fitWindow(headerChars int, scan *scanResult, win window) int {
	total, fit := headerChars, 0
	lineChars := func(i int) int { return len(lineNumber(nil, win.offset+1+i)) + scan.shownChars[i] }
	for fit < len(scan.ends) && total+lineChars(fit) <= win.maxChars {
		total += lineChars(fit)
		fit++
	}
	for fit > 0 && total+utf8.RuneCountInString(readHint(scan.lines, win.offset+fit)) > win.maxChars {
		fit--
		total -= lineChars(fit)
	}
	return fit
}

// lineNumber appends the 1-based line number n right-aligned in six
// columns and a tab, as read_file prints it.
func lineNumber(dst []byte, n int) []byte {
	var buf [20]byte
	digits := strconv.AppendInt(buf[:0], int64(n), 10)
	for i := len(digits); i < 6; i++ {
		dst = append(dst, ' ')
	}
	dst = append(dst, digits...)
	return append(dst, '\t')
}

// readHint is the continuation line when lines remain after next.
func readHint(total, next int) string {
	if next >= total {
		return ""
	}
	return fmt.Sprintf("... (%s. Use offset=%d to continue reading.)\n", count(total-next, "more line", "more lines"), next)
}
