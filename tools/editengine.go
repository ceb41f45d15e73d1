package tools

import (
	"context"
	"sort"
	"strings"
	"unicode/utf8"
)

// MaxReplacements is the most replacements one edit_file call applies.
// Each one scans the whole text for its exactly-once check, so the cap
// keeps a call's work within a fixed multiple of the file's size.
const MaxReplacements = 100

// maxCountedMatches is where counting the occurrences of an ambiguous
// old_text stops: past it the message says "more than".
const maxCountedMatches = 10000

// keptMatchStarts is how many match offsets a search keeps for the line
// numbers of an ambiguity message.
const keptMatchStarts = 1000

// pieceText is the text under edit as a list of pieces, so applying a
// replacement splits a piece instead of copying the whole text. A
// replacement costs O(pieces), a search O(text + pieces x old_text).
type pieceText struct {
	pieces []string
	// offs[i] is the offset of pieces[i] in the whole text.
	offs []int
	size int
	// joined caches String() until the next replace.
	joined   string
	joinedOK bool
}

func newPieceText(s string) *pieceText {
	t := &pieceText{}
	if s != "" {
		t.pieces = []string{s}
	}
	t.reindex()
	return t
}

// reindex recomputes the piece offsets and the size.
func (t *pieceText) reindex() {
	t.offs = t.offs[:0]
	n := 0
	for _, p := range t.pieces {
		t.offs = append(t.offs, n)
		n += len(p)
	}
	t.size = n
	t.joinedOK = false
}

// String returns the whole text.
func (t *pieceText) String() string {
	if !t.joinedOK {
		if len(t.pieces) == 1 {
			t.joined = t.pieces[0]
		} else {
			t.joined = strings.Join(t.pieces, "")
		}
		t.pieces = nil
		if t.joined != "" {
			t.pieces = []string{t.joined}
		}
		t.reindex()
		t.joinedOK = true
	}
	return t.joined
}

// piece returns the index of the piece holding offset off (< size).
func (t *pieceText) piece(off int) int {
	return sort.Search(len(t.offs), func(i int) bool { return t.offs[i] > off }) - 1
}

// slice returns text[from:to], copying only that range.
func (t *pieceText) slice(from, to int) string {
	if from >= to {
		return ""
	}
	i := t.piece(from)
	var b strings.Builder
	b.Grow(to - from)
	for pos := from; pos < to; i++ {
		p := t.pieces[i]
		lo, hi := pos-t.offs[i], min(len(p), to-t.offs[i])
		b.WriteString(p[lo:hi])
		pos = t.offs[i] + hi
	}
	return b.String()
}

// replace puts repl in place of text[from:to].
func (t *pieceText) replace(from, to int, repl string) {
	out := t.appendRange(nil, 0, from)
	if repl != "" {
		out = append(out, repl)
	}
	t.pieces = t.appendRange(out, to, t.size)
	t.reindex()
}

// appendRange appends the pieces of text[from:to] to out, sharing their
// memory.
func (t *pieceText) appendRange(out []string, from, to int) []string {
	if from >= to {
		return out
	}
	for i := t.piece(from); i < len(t.pieces) && t.offs[i] < to; i++ {
		p := t.pieces[i]
		lo, hi := max(from-t.offs[i], 0), min(len(p), to-t.offs[i])
		out = append(out, p[lo:hi])
	}
	return out
}

// lineOf returns the 1-based line number of offset off.
func (t *pieceText) lineOf(off int) int {
	line := 1
	for i, p := range t.pieces {
		if t.offs[i] >= off {
			break
		}
		line += strings.Count(p[:min(len(p), off-t.offs[i])], "\n")
	}
	return line
}

// matches is the result of a search: how many occurrences (up to
// maxCountedMatches, more set beyond), and the first keptMatchStarts
// offsets.
type matches struct {
	count  int
	more   bool
	starts []int
}

func (m *matches) add(off int) bool {
	if m.count >= maxCountedMatches {
		m.more = true
		return false
	}
	m.count++
	if len(m.starts) < keptMatchStarts {
		m.starts = append(m.starts, off)
	}
	return true
}

// find returns the occurrences of sub in the text, overlapping ones
// included ("aa" occurs twice in "aaa"), in order; each starts at a
// character, never inside one. It checks ctx once
// per piece and every few thousand matches.
func (t *pieceText) find(ctx context.Context, sub string) (matches, error) {
	var m matches
	if sub == "" || !utf8.RuneStart(sub[0]) {
		// A text that begins inside a character (a stray continuation
		// byte) matches nowhere: a replacement never splits a character.
		return m, nil
	}
	for i, p := range t.pieces {
		if err := ctx.Err(); err != nil {
			return m, err
		}
		if !findIn(ctx, p, sub, t.offs[i], &m) {
			return m, ctx.Err()
		}
		if i+1 < len(t.pieces) && len(sub) > 1 {
			// Occurrences that start in this piece and end in a later one.
			b := t.offs[i+1]
			lo := max(t.offs[i], b-len(sub)+1)
			win := t.slice(lo, min(t.size, b+len(sub)-1))
			for from := 0; from < b-lo; {
				k := strings.Index(win[from:], sub)
				if k < 0 || from+k >= b-lo {
					break
				}
				if !m.add(lo + from + k) {
					return m, nil
				}
				from += k + runeStep(win[from+k:])
			}
		}
	}
	return m, nil
}

// findIn adds the occurrences of sub that lie wholly inside s (at offset
// base of the text) to m; false when m is full or ctx ended.
func findIn(ctx context.Context, s, sub string, base int, m *matches) bool {
	for from := 0; from <= len(s)-len(sub); {
		k := strings.Index(s[from:], sub)
		if k < 0 {
			return true
		}
		if !m.add(base + from + k) {
			return false
		}
		if m.count%4096 == 0 && ctx.Err() != nil {
			return false
		}
		from += k + runeStep(s[from+k:])
	}
	return true
}

// runeStep is the length of the first character of s, at least 1, so an
// overlapping search moves on by whole characters.
func runeStep(s string) int {
	_, size := utf8.DecodeRuneInString(s)
	return max(size, 1)
}
