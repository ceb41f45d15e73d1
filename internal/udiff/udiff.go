// Package udiff renders the unified diffs that fencefs shows in change
// requests and edit events.
//
// The format is the one Python's difflib.unified_diff prints with three
// lines of context, over lines split after each "\n" (a "\r" stays part of
// its line), with git's "\ No newline at end of file" marker after a line
// that has no terminating newline, and without a newline at the end of the
// whole diff. Hunk grouping and hunk ranges follow difflib exactly
// ("@@ -1 +1 @@" for one line, "@@ -0,0 +1,2 @@" for an empty side).
// The line alignment comes from Myers' algorithm (sergi/go-diff) instead of
// difflib's SequenceMatcher; where several alignments are equally short
// the two may pick different ones, and either applies to the old text to
// give the new one.
package udiff

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// Bounds that keep a diff cheap to compute and small to forward.
const (
	// MaxDiffChars is the longest diff, in characters, before it is cut.
	MaxDiffChars = 8192
	// MaxSourceChars is the longest side, in characters, that is diffed.
	MaxSourceChars = 32768
	// MaxLineProduct bounds (old newlines + 1) * (new newlines + 1), the
	// size of the line-matching problem.
	MaxLineProduct = 65536
	// ContextLines is the number of unchanged lines around each change.
	ContextLines = 3
)

// noNewline is git's marker after a line without a terminating newline.
const noNewline = `\ No newline at end of file`

// Headers returns the two header lines of a diff of path, without a final
// newline: the whole diff of a change whose content cannot be shown.
func Headers(path string) string {
	return "--- a/" + path + "\n+++ b/" + path
}

// Unified returns the unified diff that turns old into new, with headers
// naming path as "a/<path>" and "b/<path>". Identical texts give "" and
// false: there is nothing to show and nothing was left out.
//
// truncated reports that the diff does not show the whole change: when
// either side is longer than MaxSourceChars characters, or the line
// product exceeds MaxLineProduct, nothing is diffed and the result is the
// headers alone; otherwise a diff longer than MaxDiffChars characters is
// cut after its last whole line that fits (the headers are always kept).
func Unified(path, old, new string) (diff string, truncated bool) {
	if old == new {
		return "", false
	}
	header := Headers(path)
	if tooLarge(old, new) {
		return header, true
	}
	a, b := splitLines(old), splitLines(new)
	var sb strings.Builder
	sb.WriteString(header)
	for _, group := range groupOpcodes(opcodes(a, b), ContextLines) {
		writeHunk(&sb, group, a, b)
	}
	return cut(sb.String(), len(header))
}

// tooLarge applies the bounds under which no diff is computed.
func tooLarge(old, new string) bool {
	// A string holds at least as many bytes as characters: only a long
	// one needs counting.
	if len(old) > MaxSourceChars && utf8.RuneCountInString(old) > MaxSourceChars ||
		len(new) > MaxSourceChars && utf8.RuneCountInString(new) > MaxSourceChars {
		return true
	}
	product := int64(strings.Count(old, "\n")+1) * int64(strings.Count(new, "\n")+1)
	return product > MaxLineProduct
}

// splitLines splits s after each "\n"; a final line without one is kept.
// go-diff's line mode splits the same way, so its line counts index these
// slices.
func splitLines(s string) []string {
	lines := make([]string, 0, strings.Count(s, "\n")+1)
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

// opcode is one of difflib's opcodes: tag applied to a[i1:i2] and b[j1:j2].
type opcode struct {
	tag            byte // 'e'qual, 'r'eplace, 'd'elete, 'i'nsert
	i1, i2, j1, j2 int
}

// opcodes diffs the lines a and b and returns the result as difflib-style
// opcodes: runs of deletions and insertions between two equal runs become
// a single replace, delete or insert.
func opcodes(a, b []string) []opcode {
	dmp := diffmatchpatch.New()
	// No deadline: the bounds above keep the work small, and a timeout
	// would make the output depend on the machine's load.
	dmp.DiffTimeout = 0
	// Each distinct line stands for one character, as in go-diff's line
	// mode (DiffLinesToChars), from the lines split once here: the diff
	// compares characters only for equality, so its result is the same.
	ids := make(map[string]rune, len(a))
	ra, okA := lineRunes(a, ids)
	rb, okB := lineRunes(b, ids)
	if !okA || !okB {
		// More distinct lines than characters (Hunks of sides no bound
		// kept small): one replacement, a diff that still applies.
		return []opcode{{'r', 0, len(a), 0, len(b)}}
	}
	return opcodesOf(dmp.DiffMainRunes(ra, rb, false))
}

// opcodesOf turns go-diff's diffs of lines (a character each) into
// opcodes.
func opcodesOf(diffs []diffmatchpatch.Diff) []opcode {
	var ops []opcode
	i, j := 0, 0
	del, ins := 0, 0
	flush := func() {
		if del == 0 && ins == 0 {
			return
		}
		tag := byte('r')
		switch {
		case ins == 0:
			tag = 'd'
		case del == 0:
			tag = 'i'
		}
		ops = append(ops, opcode{tag, i, i + del, j, j + ins})
		i, j, del, ins = i+del, j+ins, 0, 0
	}
	for _, d := range diffs {
		// In line mode each character stands for one line.
		n := utf8.RuneCountInString(d.Text)
		if n == 0 {
			continue
		}
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			del += n
		case diffmatchpatch.DiffInsert:
			ins += n
		default:
			flush()
			if k := len(ops) - 1; k >= 0 && ops[k].tag == 'e' {
				ops[k].i2 += n
				ops[k].j2 += n
			} else {
				ops = append(ops, opcode{'e', i, i + n, j, j + n})
			}
			i, j = i+n, j+n
		}
	}
	flush()
	return ops
}

// lineRunes returns the character standing for each of lines, giving a
// line not in ids the next unused one; false when the characters run out
// (over 1,112,000 distinct lines). The characters skip the surrogates,
// which are no characters of a string.
func lineRunes(lines []string, ids map[string]rune) ([]rune, bool) {
	rs := make([]rune, len(lines))
	for i, l := range lines {
		r, ok := ids[l]
		if !ok {
			r = rune(len(ids) + 1)
			if r >= 0xD800 {
				r += 0x800
			}
			if r > utf8.MaxRune {
				return nil, false
			}
			ids[l] = r
		}
		rs[i] = r
	}
	return rs, true
}

// groupOpcodes is difflib's SequenceMatcher.get_grouped_opcodes: it trims
// the leading and trailing equal runs to n lines and splits the changes
// into hunks wherever an equal run is longer than 2n lines. It modifies
// codes.
func groupOpcodes(codes []opcode, n int) [][]opcode {
	if len(codes) == 0 {
		codes = []opcode{{'e', 0, 1, 0, 1}}
	}
	if c := &codes[0]; c.tag == 'e' {
		c.i1, c.j1 = max(c.i1, c.i2-n), max(c.j1, c.j2-n)
	}
	if c := &codes[len(codes)-1]; c.tag == 'e' {
		c.i2, c.j2 = min(c.i2, c.i1+n), min(c.j2, c.j1+n)
	}
	var groups [][]opcode
	var group []opcode
	for _, c := range codes {
		if c.tag == 'e' && c.i2-c.i1 > 2*n {
			group = append(group, opcode{'e', c.i1, min(c.i2, c.i1+n), c.j1, min(c.j2, c.j1+n)})
			groups = append(groups, group)
			group = nil
			c.i1, c.j1 = max(c.i1, c.i2-n), max(c.j1, c.j2-n)
		}
		group = append(group, c)
	}
	if len(group) > 0 && !(len(group) == 1 && group[0].tag == 'e') {
		groups = append(groups, group)
	}
	return groups
}

// writeHunk writes one hunk, each line preceded by a newline so that the
// diff never ends with one.
func writeHunk(sb *strings.Builder, group []opcode, a, b []string) {
	first, last := group[0], group[len(group)-1]
	sb.WriteString("\n@@ -")
	sb.WriteString(formatRange(first.i1, last.i2))
	sb.WriteString(" +")
	sb.WriteString(formatRange(first.j1, last.j2))
	sb.WriteString(" @@")
	for _, c := range group {
		if c.tag == 'e' {
			writeLines(sb, ' ', a[c.i1:c.i2])
			continue
		}
		if c.tag == 'r' || c.tag == 'd' {
			writeLines(sb, '-', a[c.i1:c.i2])
		}
		if c.tag == 'r' || c.tag == 'i' {
			writeLines(sb, '+', b[c.j1:c.j2])
		}
	}
}

func writeLines(sb *strings.Builder, tag byte, lines []string) {
	for _, line := range lines {
		sb.WriteByte('\n')
		sb.WriteByte(tag)
		if text, ok := strings.CutSuffix(line, "\n"); ok {
			sb.WriteString(text)
		} else {
			sb.WriteString(line)
			sb.WriteByte('\n')
			sb.WriteString(noNewline)
		}
	}
}

// formatRange is difflib's _format_range_unified: "start" for one line,
// "start,length" otherwise, where an empty range starts at the line
// before it.
func formatRange(start, stop int) string {
	beginning, length := start+1, stop-start
	if length == 1 {
		return strconv.Itoa(beginning)
	}
	if length == 0 {
		beginning--
	}
	return strconv.Itoa(beginning) + "," + strconv.Itoa(length)
}

// cut shortens diff to at most MaxDiffChars characters, ending on a line
// boundary, keeping at least its first keep bytes (the headers).
func cut(diff string, keep int) (string, bool) {
	if len(diff) <= MaxDiffChars || utf8.RuneCountInString(diff) <= MaxDiffChars {
		return diff, false
	}
	end := keep
	chars := utf8.RuneCountInString(diff[:keep])
	for pos := keep; pos < len(diff); {
		next := strings.IndexByte(diff[pos+1:], '\n')
		if next < 0 {
			break // the remainder is the last line, which does not fit
		}
		lineEnd := pos + 1 + next
		chars += utf8.RuneCountInString(diff[pos:lineEnd])
		if chars > MaxDiffChars {
			break
		}
		end, pos = lineEnd, lineEnd
	}
	return diff[:end], true
}

// Hunks returns the hunks of the unified diff that turns old into new, in
// the format Unified uses but without headers, bounds or cut, each line
// ending with a newline as in `git diff`: "" when the texts are equal.
// The caller bounds the sides (Myers' algorithm is quadratic at worst).
func Hunks(old, new string) string {
	if old == new {
		return ""
	}
	a, b := splitLines(old), splitLines(new)
	var sb strings.Builder
	for _, group := range groupOpcodes(opcodes(a, b), ContextLines) {
		writeHunk(&sb, group, a, b)
	}
	return strings.TrimPrefix(sb.String(), "\n") + "\n"
}
