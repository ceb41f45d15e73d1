package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/fencefs/fencefs/tools/internal/patch"
)

// maxHunkCompares bounds the line comparisons that locating one file's
// hunks may cost, so a patch of many identical lines against a file of
// identical lines is refused instead of running long.
const maxHunkCompares = 50_000_000

// fileLines is a file split for hunk matching.
type fileLines struct {
	text string
	// raw holds each line without its "\n" (a "\r" stays).
	raw []string
	// key holds what a hunk line is compared with: no "\r", no byte order
	// mark on line 1.
	key     []string
	finalNL bool
	eol     string
	bom     bool
}

func splitFile(text string) fileLines {
	f := fileLines{text: text, eol: "\n"}
	if text != "" {
		f.raw = strings.Split(text, "\n")
		if f.raw[len(f.raw)-1] == "" {
			f.raw, f.finalNL = f.raw[:len(f.raw)-1], true
		}
	}
	crlf := 0
	f.key = make([]string, len(f.raw))
	for i, l := range f.raw {
		if strings.HasSuffix(l, "\r") && f.hasBreak(i) {
			crlf++
		}
		f.key[i] = strings.TrimSuffix(l, "\r")
	}
	if len(f.key) > 0 && strings.HasPrefix(f.key[0], "\ufeff") {
		f.key[0], f.bom = f.key[0][len("\ufeff"):], true
	}
	// The line ending of most lines that have one: a last line without
	// a break does not count.
	broken := len(f.raw)
	if !f.finalNL && broken > 0 {
		broken--
	}
	if crlf*2 > broken {
		f.eol = "\r\n"
	}
	return f
}

// hasBreak reports whether line i ends with a line break.
func (f fileLines) hasBreak(i int) bool { return i < len(f.raw)-1 || f.finalNL }

// line returns line i's text and its line break ("\r\n", "\n", or ""
// for a last line without one).
func (f fileLines) line(i int) (text, brk string) {
	l := f.raw[i]
	switch {
	case !f.hasBreak(i):
		return l, ""
	case strings.HasSuffix(l, "\r"):
		return l[:len(l)-1], "\r\n"
	}
	return l, "\n"
}

// hunkEdit is a located hunk: it replaces n lines from pos.
type hunkEdit struct {
	pos, n   int
	h        patch.Hunk
	tolerant bool
}

// hunkLocator locates the hunks of one file section.
type hunkLocator struct {
	ctx      context.Context
	f        fileLines
	tolerant bool
	file     string // the file's name in messages
	compares int
}

// applyHunks applies the hunks of an update to text: each hunk's context
// and removed lines must occur exactly once after the previous hunk (and
// after its @@ anchors, up to the next line equal to the last anchor); a
// unified hunk is taken at its stated line when it matches there. It
// returns the new text and how many hunks matched only under the
// whitespace tolerance.
func applyHunks(ctx context.Context, text string, hunks []patch.Hunk, file string, tolerant bool) (string, int, error) {
	loc := &hunkLocator{ctx: ctx, f: splitFile(text), tolerant: tolerant, file: file}
	var edits []hunkEdit
	cursor := 0
	for i, h := range hunks {
		e, err := loc.locate(i+1, h, cursor)
		if err != nil && IsRetry(err) && h.SoftLead+h.SoftTrail > 0 {
			// The blank lines around the hunk may only separate it.
			e, err = loc.locate(i+1, h.WithoutSoft(), cursor)
		}
		if err != nil {
			return "", 0, err
		}
		edits = append(edits, e)
		cursor = e.pos + e.n
	}
	out, used := loc.f.render(edits)
	return out, used, nil
}

// locate finds where hunk number n goes, at or after line cursor.
func (l *hunkLocator) locate(n int, h patch.Hunk, cursor int) (hunkEdit, error) {
	label := fmt.Sprintf("'%s' hunk %d (patch line %d)", l.file, n, h.Line)
	end := len(l.f.key)
	for _, a := range h.Anchors {
		j := l.findLine(a, cursor, end)
		if j < 0 {
			msg := fmt.Sprintf("%s: the @@ line '%s' matches no line after line %d.", label, clipLine(a), cursor)
			if hint := notFoundHint(l.ctx, l.f.text, a, "the @@ line"); hint != "" {
				msg += " " + hint
			}
			return hunkEdit{}, retryf(KindNoMatch, "%s No changes were written.", msg)
		}
		cursor = j + 1
		if k := l.findLine(a, cursor, len(l.f.key)); k >= 0 {
			end = k
		} else {
			end = len(l.f.key)
		}
	}
	old := h.Old()
	if len(old) == 0 {
		// Only added lines: after the anchors, or at the end of the file.
		pos := len(l.f.key)
		if len(h.Anchors) > 0 {
			pos = cursor
		}
		if h.Unified {
			pos = min(max(h.OldStart, cursor), len(l.f.key))
		}
		return hunkEdit{pos: pos, h: h}, nil
	}
	if h.EOF {
		pos := len(l.f.key) - len(old)
		if pos >= cursor && l.matchAt(old, pos, false) {
			return hunkEdit{pos: pos, n: len(old), h: h}, nil
		}
		return hunkEdit{}, retryf(KindNoMatch, "%s: its context and removed lines do not end the file, as '*** End of File' says. No changes were written.", label)
	}
	if p := h.OldStart - 1; h.Unified && p >= cursor && l.matchAt(old, p, false) {
		return hunkEdit{pos: p, n: len(old), h: h}, nil
	}
	starts, count, err := l.search(old, cursor, end, false)
	if err != nil {
		return hunkEdit{}, err
	}
	tolerant := false
	if count == 0 && l.tolerant {
		if starts, count, err = l.search(old, cursor, end, true); err != nil {
			return hunkEdit{}, err
		}
		tolerant = count > 0
	}
	switch {
	case count == 1:
		return hunkEdit{pos: starts[0], n: len(old), h: h, tolerant: tolerant}, nil
	case count > 1:
		how := ""
		if tolerant {
			how = " once indentation and trailing whitespace are ignored"
		}
		return hunkEdit{}, retryf(KindNoMatch, "%s: its context and removed lines match %d times%s (lines %s). Add an @@ line naming the enclosing function or class, or more context lines. No changes were written.",
			label, count, how, joinLineNumbers(starts))
	}
	msg := fmt.Sprintf("%s: its context and removed lines were not found", label)
	if cursor > 0 {
		msg += fmt.Sprintf(" after line %d", cursor)
	}
	msg += "."
	if hint := notFoundHint(l.ctx, l.f.text, strings.Join(old, "\n"), "the hunk"); hint != "" {
		msg += " " + hint
	}
	if err := l.ctx.Err(); err != nil {
		return hunkEdit{}, err
	}
	return hunkEdit{}, retryf(KindNoMatch, "%s No changes were written.", msg)
}

// findLine returns the first line in [from, to) equal to a once both are
// trimmed of surrounding whitespace, or -1.
func (l *hunkLocator) findLine(a string, from, to int) int {
	a = strings.TrimSpace(a)
	for i := from; i < to; i++ {
		if strings.TrimSpace(l.f.key[i]) == a {
			return i
		}
	}
	return -1
}

// matchAt reports whether old matches the file's lines from pos.
func (l *hunkLocator) matchAt(old []string, pos int, tolerant bool) bool {
	if pos < 0 || pos+len(old) > len(l.f.key) {
		return false
	}
	for k, o := range old {
		l.compares++
		a := l.f.key[pos+k]
		if tolerant {
			a, o = stripSpace(a), stripSpace(o)
		}
		if a != o {
			return false
		}
	}
	return true
}

// search returns the first starts (up to ten) and the number of the
// places in [from, to) where old matches.
func (l *hunkLocator) search(old []string, from, to int, tolerant bool) ([]int, int, error) {
	var starts []int
	count := 0
	for p := from; p+len(old) <= to; p++ {
		if l.compares > maxHunkCompares {
			return nil, 0, retryf(KindNoMatch, "Locating the hunks of '%s' takes too long: their lines repeat too often in the file. Add distinctive context lines or an @@ line. No changes were written.", l.file)
		}
		if p%4096 == 0 {
			if err := l.ctx.Err(); err != nil {
				return nil, 0, err
			}
		}
		if l.matchAt(old, p, tolerant) {
			count++
			if len(starts) < maxMatchLines {
				starts = append(starts, p)
			}
		}
	}
	return starts, count, nil
}

// joinLineNumbers renders 0-based line indexes as 1-based numbers.
func joinLineNumbers(starts []int) string {
	parts := make([]string, len(starts))
	for i, s := range starts {
		parts[i] = fmt.Sprint(s + 1)
	}
	return strings.Join(parts, ", ")
}

// clipLine shortens a line for a message.
func clipLine(s string) string {
	if r := []rune(s); len(r) > nearShowRunes {
		return string(r[:nearShowRunes]) + "..."
	}
	return s
}

// render applies the located edits. Context lines keep the file's own
// bytes; added lines get the file's line ending (and, for a tolerant
// match, its indentation). Every line keeps its line break, so a missing
// final line break stays while the file's last line stays last; a line
// that stops being last gets the file's line ending, and an added last
// line ends with one, unless a unified hunk's `\ No newline at end of
// file` says otherwise.
func (f fileLines) render(edits []hunkEdit) (string, int) {
	var b strings.Builder
	b.Grow(len(f.text) + 64)
	// pending is the line break owed after the line last written.
	pending, started := "", false
	put := func(text, brk string) {
		if started {
			if pending == "" {
				pending = f.eol
			}
			b.WriteString(pending)
		}
		b.WriteString(text)
		pending, started = brk, true
	}
	used, next := 0, 0
	noNewline := false
	for _, e := range edits {
		for ; next < e.pos; next++ {
			put(f.line(next))
		}
		added := addedLines(e, f)
		if e.tolerant {
			used++
		}
		k := 0
		for _, l := range e.h.Lines {
			switch l.Op {
			case ' ':
				put(f.line(next))
				next++
			case '-':
				next++
			case '+':
				put(added[k], f.eol)
				k++
			}
		}
		noNewline = next >= len(f.raw) && e.h.NoNewline
	}
	for ; next < len(f.raw); next++ {
		put(f.line(next))
		noNewline = false
	}
	if !noNewline {
		b.WriteString(pending)
	}
	out := b.String()
	if f.bom && !strings.HasPrefix(out, "\ufeff") {
		out = "\ufeff" + out
	}
	return out, used
}

// addedLines returns the texts of e's added lines, reindented to the
// file's style when e matched only under the whitespace tolerance.
func addedLines(e hunkEdit, f fileLines) []string {
	var added []string
	for _, l := range e.h.Lines {
		if l.Op == '+' {
			added = append(added, l.Text)
		}
	}
	if !e.tolerant || len(added) == 0 {
		return added
	}
	file := strings.Join(f.key[e.pos:e.pos+e.n], "\n")
	return strings.Split(reindent(strings.Join(e.h.Old(), "\n"), strings.Join(added, "\n"), file, false), "\n")
}
