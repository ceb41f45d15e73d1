// Package textsearch is the built-in content search engine of the
// search_files and grep tools.
//
// It searches files line by line with a Go regular expression (RE2
// syntax) and reports matching lines and context lines in the same shape as
// ripgrep, so that a search through ripgrep and a search through this
// engine print the same text (see [Printer]). Lines are split on "\n" only,
// a file with a NUL byte in its first 8192 bytes is binary and skipped, and
// invalid UTF-8 is displayed as one U+FFFD per byte.
//
// Speed comes from searching whole buffers rather than single lines: a
// literal the pattern requires is looked for with bytes.Index, and the
// regular expression runs only on the lines that hold it.
package textsearch

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"regexp/syntax"
	"sync"
	"unicode"
	"unicode/utf8"
)

// MaxContext is the largest number of context lines a search may ask for.
const MaxContext = 20

// DefaultMaxColumns is the display width, in characters, after which a
// line is cut and marked with [LongLineMarker]. The ripgrep runner applies
// the same limit, so both engines cut at the same place.
const DefaultMaxColumns = 500

// LongLineMarker ends a displayed line that was cut.
const LongLineMarker = " [... omitted end of long line]"

// BinaryPrefix is the number of leading bytes inspected for a NUL byte.
const BinaryPrefix = 8192

// MaxLineBytes bounds the memory a search holds for one line: a longer
// line is matched and displayed on its first MaxLineBytes bytes only, and
// the rest of it is read and dropped up to its "\n". A huge or endless
// line thus costs reading time, never memory; a match beyond this prefix
// is not found.
const MaxLineBytes = 16 << 20

// Options adjust a search.
type Options struct {
	// IgnoreCase matches letters case-insensitively (Unicode simple folding).
	IgnoreCase bool
	// Literal treats the pattern as plain text rather than a regexp.
	Literal bool
	// Context is the number of lines shown before and after each match,
	// 0 to [MaxContext].
	Context int
	// MaxColumns is the display cut (see [DefaultMaxColumns]); 0 means the
	// default and a negative value means no cut.
	MaxColumns int
	// SkipBOM leaves a UTF-8 byte order mark at the start of the input
	// out of line 1, for matching and display, as ripgrep does.
	SkipBOM bool
}

// Matcher is a compiled search. It is safe for concurrent use.
type Matcher struct {
	re       *regexp.Regexp
	lit      []byte // a literal every match contains; nil when none is known
	find     finder // finds lit
	litFold  bool   // lit is ASCII-lowercased and must be found case-insensitively
	pureLit  bool   // a line holding lit always matches: the regexp need not run
	newline  bool   // the pattern held a literal line break, which can never match
	skipBOM  bool   // see Options.SkipBOM
	context  int
	maxCols  int
	maxLine  int // see MaxLineBytes; smaller in tests
	bufPool  sync.Pool
	foldPool sync.Pool
}

// Compile compiles pattern for line-oriented search. The error of an
// invalid pattern is the regexp package's, suitable for showing to a model.
func Compile(pattern string, o Options) (*Matcher, error) {
	if o.Literal {
		pattern = regexp.QuoteMeta(pattern)
	}
	flags := syntax.Perl
	if o.IgnoreCase {
		flags |= syntax.FoldCase
	}
	tree, err := syntax.Parse(pattern, flags)
	if err != nil {
		// regexp.Compile gives the familiar "error parsing regexp: ..." text.
		_, err = regexp.Compile(pattern)
		if err == nil {
			err = &syntax.Error{Code: syntax.ErrInternalError, Expr: pattern}
		}
		return nil, err
	}
	tree = tree.Simplify()
	newline := hasNewlineLiteral(tree)
	tree = lineOnly(tree)
	re, err := regexp.Compile(tree.String())
	if err != nil {
		return nil, err
	}
	m := &Matcher{re: re, context: min(max(o.Context, 0), MaxContext), maxCols: o.MaxColumns, maxLine: MaxLineBytes,
		newline: newline, skipBOM: o.SkipBOM}
	if m.maxCols == 0 {
		m.maxCols = DefaultMaxColumns
	}
	m.lit, m.litFold = requiredLiteral(tree)
	m.find = newFinder(m.lit)
	m.pureLit = m.lit != nil && isPureLiteral(tree)
	return m, nil
}

// Context returns the number of context lines the matcher shows.
func (m *Matcher) Context() int { return m.context }

// HasNewline reports whether the pattern holds a literal line break
// ("\n"), which a line-by-line search never matches; ripgrep refuses such
// patterns.
func (m *Matcher) HasNewline() bool { return m.newline }

// hasNewlineLiteral reports whether re holds a literal "\n" rune.
func hasNewlineLiteral(re *syntax.Regexp) bool {
	if re.Op == syntax.OpLiteral {
		for _, r := range re.Rune {
			if r == '\n' {
				return true
			}
		}
	}
	for _, sub := range re.Sub {
		if hasNewlineLiteral(sub) {
			return true
		}
	}
	return false
}

// MatchLine reports whether line (without its "\n") matches.
func (m *Matcher) MatchLine(line []byte) bool { return m.re.Match(line) }

// lineOnly rewrites re so that it can never match across a "\n": classes
// lose "\n", "." never matches it, a literal holding it cannot match, and
// text anchors become line anchors. Running the result over a buffer of
// many lines then finds exactly the lines a per-line search would find,
// which is how ripgrep treats its line terminator too.
func lineOnly(re *syntax.Regexp) *syntax.Regexp {
	switch re.Op {
	case syntax.OpAnyChar:
		re.Op = syntax.OpAnyCharNotNL
	case syntax.OpBeginText:
		re.Op = syntax.OpBeginLine
	case syntax.OpEndText:
		re.Op = syntax.OpEndLine
		re.Flags &^= syntax.WasDollar
	case syntax.OpCharClass:
		re.Rune = withoutNewline(re.Rune)
		if len(re.Rune) == 0 {
			re.Op = syntax.OpNoMatch
		}
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r == '\n' {
				re.Op = syntax.OpNoMatch
				re.Rune = nil
				break
			}
		}
	}
	for i, sub := range re.Sub {
		re.Sub[i] = lineOnly(sub)
	}
	return re
}

// withoutNewline removes '\n' from a sorted list of rune ranges.
func withoutNewline(ranges []rune) []rune {
	out := make([]rune, 0, len(ranges)+2)
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if lo <= '\n' && '\n' <= hi {
			if lo < '\n' {
				out = append(out, lo, '\n'-1)
			}
			if hi > '\n' {
				out = append(out, '\n'+1, hi)
			}
			continue
		}
		out = append(out, lo, hi)
	}
	return out
}

// requiredLiteral returns the longest literal that every match of re must
// contain, and whether it is to be found case-insensitively (then it is
// returned in ASCII lower case). It returns nil when no usable literal is
// known.
func requiredLiteral(re *syntax.Regexp) ([]byte, bool) {
	best, bestFold := []byte(nil), false
	consider := func(lit []byte, fold bool) {
		// A case-sensitive literal filters better than a folded one of the
		// same length, so it wins ties.
		if len(lit) > len(best) || (len(lit) == len(best) && bestFold && !fold) {
			best, bestFold = lit, fold
		}
	}
	var walk func(re *syntax.Regexp)
	walk = func(re *syntax.Regexp) {
		switch re.Op {
		case syntax.OpLiteral:
			if re.Flags&syntax.FoldCase == 0 {
				consider([]byte(string(re.Rune)), false)
			} else if lit, ok := asciiFoldLiteral(re.Rune); ok {
				consider(lit, true)
			}
		case syntax.OpConcat:
			for _, sub := range re.Sub {
				walk(sub)
			}
		case syntax.OpCapture:
			walk(re.Sub[0])
		case syntax.OpPlus:
			walk(re.Sub[0])
		case syntax.OpRepeat:
			if re.Min >= 1 {
				walk(re.Sub[0])
			}
		}
	}
	walk(re)
	if len(best) == 0 {
		return nil, false
	}
	return best, bestFold
}

// asciiFoldLiteral lowercases a case-folded literal for a byte search of
// an ASCII-lowercased buffer. That is only sound when no non-ASCII rune
// folds onto a letter of the literal (the Kelvin sign folds onto "k", the
// long s onto "s"), so such literals are refused.
func asciiFoldLiteral(runes []rune) ([]byte, bool) {
	out := make([]byte, 0, len(runes))
	for _, r := range runes {
		if r >= utf8.RuneSelf {
			return nil, false
		}
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f >= utf8.RuneSelf {
				return nil, false
			}
		}
		out = append(out, lowerASCII(byte(r)))
	}
	return out, true
}

// isPureLiteral reports whether re is exactly one case-sensitive literal,
// so that finding the literal is the same as matching.
func isPureLiteral(re *syntax.Regexp) bool {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	return re.Op == syntax.OpLiteral && re.Flags&syntax.FoldCase == 0
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

// lowerInto writes the ASCII lower case of src into dst (same length).
func lowerInto(dst, src []byte) {
	for i, c := range src {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst[i] = c
	}
}

// nextMatch finds the first matching line that starts at or after pos and
// ends at or before end in buf. It returns the line's start and the index
// of its terminating "\n" (or end). An error is ctx's, met while matching
// a long line.
func (m *Matcher) nextMatch(ctx context.Context, buf, folded []byte, pos, end int) (int, int, bool, error) {
	if m.lit == nil {
		for pos < end {
			e := lineEnd(buf, pos, end)
			if ok, err := m.matchLine(ctx, buf[pos:e]); ok || err != nil {
				return pos, e, ok, err
			}
			pos = e + 1
		}
		return 0, 0, false, nil
	}
	hay := buf
	if m.litFold {
		hay = folded
	}
	for pos < end {
		i := m.find.index(hay[pos:end])
		if i < 0 {
			return 0, 0, false, nil
		}
		hit := pos + i
		s := bytes.LastIndexByte(buf[pos:hit], '\n') + 1 + pos
		e := lineEnd(buf, hit, end)
		if m.pureLit {
			return s, e, true, nil
		}
		if ok, err := m.matchLine(ctx, buf[s:e]); ok || err != nil {
			return s, e, ok, err
		}
		pos = e + 1
	}
	return 0, 0, false, nil
}

// interruptible is the length from which a line is matched through a
// reader that checks the context: the regexp package cannot be stopped,
// and its time on a line grows with the line's length times the
// pattern's size (13 s for [a-z]{1,50}q on a 16 MiB line of "a").
const interruptible = 64 << 10

// matchLine reports whether line matches. A long line is matched through
// a reader that ends it early once ctx is done, and then ctx's error is
// returned.
func (m *Matcher) matchLine(ctx context.Context, line []byte) (bool, error) {
	if len(line) < interruptible {
		return m.re.Match(line), nil
	}
	r := &ctxRuneReader{ctx: ctx, b: line}
	ok := m.re.MatchReader(r)
	if r.err != nil {
		return false, r.err
	}
	return ok, nil
}

// ctxRuneReader reads the runes of b as the regexp package decodes a
// byte slice (an invalid byte is U+FFFD of width 1), and ends early once
// ctx is done, noting ctx's error.
type ctxRuneReader struct {
	ctx context.Context
	b   []byte
	i   int
	n   int
	err error
}

func (r *ctxRuneReader) ReadRune() (rune, int, error) {
	if r.n++; r.n&0x3fff == 0 {
		if err := r.ctx.Err(); err != nil {
			r.err = err
			return 0, 0, io.EOF
		}
	}
	if r.i >= len(r.b) {
		return 0, 0, io.EOF
	}
	if c := r.b[r.i]; c < utf8.RuneSelf {
		r.i++
		return rune(c), 1, nil
	}
	c, size := utf8.DecodeRune(r.b[r.i:])
	r.i += size
	return c, size, nil
}

// lineEnd returns the index of the first "\n" at or after pos, or end.
func lineEnd(buf []byte, pos, end int) int {
	if i := bytes.IndexByte(buf[pos:end], '\n'); i >= 0 {
		return pos + i
	}
	return end
}
