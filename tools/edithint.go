package tools

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Tolerances of Options.EditTolerance.
const (
	// ToleranceWhitespace lets edit_file and apply_patch apply a match
	// that is unique only once indentation and trailing whitespace are
	// ignored.
	ToleranceWhitespace = "whitespace"
)

// lineNorm rewrites one line (without its "\n") for a tolerant
// comparison; it never adds or removes a line break, so line numbers in
// the normalised text are those of the original.
type lineNorm func(line string) string

func stripIndent(l string) string   { return strings.TrimLeft(l, " \t") }
func stripTrailing(l string) string { return strings.TrimRight(l, " \t\r") }
func stripSpace(l string) string    { return stripTrailing(stripIndent(l)) }

// straightQuotes maps typographic quotes to their ASCII forms.
var straightQuotes = strings.NewReplacer("\u201c", `"`, "\u201d", `"`, "\u201e", `"`, "\u201f", `"`, "\u2033", `"`,
	"\u2018", "'", "\u2019", "'", "\u201a", "'", "\u201b", "'", "\u2032", "'")

func straighten(l string) string {
	if !mayHaveCurly(l) {
		return l
	}
	return straightQuotes.Replace(l)
}

// mayHaveCurly reports whether s holds a character straighten replaces,
// all of which are U+2018-U+201F or U+2032-U+2033: E2 80 98-9F or
// E2 80 B2-B3 in UTF-8. It looks for their lead byte, so a long line
// costs a vectorised scan, not a decode per character.
func mayHaveCurly(s string) bool {
	for {
		i := strings.IndexByte(s, 0xE2)
		if i < 0 || i+2 >= len(s) {
			return false
		}
		if c := s[i+2]; s[i+1] == 0x80 && (c >= 0x98 && c <= 0x9F || c == 0xB2 || c == 0xB3) {
			return true
		}
		s = s[i+1:]
	}
}

func hasCurly(s string) bool { return mayHaveCurly(s) }

// normalize applies f to every line of s; linear in s, and without a
// copy when f changes no line (the common case for a large file).
func normalize(s string, f lineNorm) string {
	var b strings.Builder
	copied := false
	for pos := 0; ; {
		end := strings.IndexByte(s[pos:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += pos
		}
		line := s[pos:end]
		if n := f(line); n != line && !copied {
			b.Grow(len(s))
			b.WriteString(s[:pos])
			copied = true
		}
		if copied {
			b.WriteString(f(line))
			if end < len(s) {
				b.WriteByte('\n')
			}
		}
		if end >= len(s) {
			break
		}
		pos = end + 1
	}
	if !copied {
		return s
	}
	return b.String()
}

// lineSpan is a range of 1-based lines, from first to last.
type lineSpan struct{ first, last int }

func (r lineSpan) String() string {
	if r.first == r.last {
		return fmt.Sprintf("line %d", r.first)
	}
	return fmt.Sprintf("lines %d-%d", r.first, r.last)
}

// spanOf returns the lines that text[start:start+n] covers.
func spanOf(text string, start, n int) lineSpan {
	first := strings.Count(text[:start], "\n") + 1
	body := strings.TrimSuffix(text[start:start+n], "\n")
	return lineSpan{first, first + strings.Count(body, "\n")}
}

// normMatches finds the occurrences of old in text once both are
// normalised by f: the spans they cover and how many there are.
func normMatches(ctx context.Context, text, old string, f lineNorm) (string, string, matches, error) {
	nt, no := normalize(text, f), normalize(old, f)
	if strings.TrimSpace(no) == "" || (nt == text && no == old) {
		// Nothing changed: the exact search has answered already.
		return nt, no, matches{}, nil
	}
	m, err := newPieceText(nt).find(ctx, no)
	return nt, no, m, err
}

// spansText renders up to three spans: "Lines 3-4" or "Lines 3-4, 9-10".
func spansText(nt string, n int, m matches) string {
	var parts []string
	for i, st := range m.starts {
		if i == 3 {
			parts = append(parts, "...")
			break
		}
		parts = append(parts, strings.TrimPrefix(strings.TrimPrefix(spanOf(nt, st, n).String(), "lines "), "line "))
	}
	word := "Lines"
	if len(m.starts) == 1 && !strings.Contains(parts[0], "-") {
		word = "Line"
	}
	return word + " " + strings.Join(parts, ", ")
}

// verb is "match" or "matches" as the spans text needs.
func verb(spans string) string {
	if strings.HasPrefix(spans, "Line ") {
		return "matches"
	}
	return "match"
}

// notFoundHint says where a missing old text (named noun in the hint:
// "old_text", "the hunk") nearly is and how it
// differs, in a sentence the model can act on, or "" when nothing close
// was found. Every check is linear in the text but the near-match
// search, whose work is capped.
func notFoundHint(ctx context.Context, text, old, noun string) string {
	if strings.Contains(old, `\n`) {
		un := strings.NewReplacer(`\r\n`, "\n", `\n`, "\n", `\t`, "\t", `\"`, `"`).Replace(old)
		for _, cand := range []string{un, crlfText(un)} {
			if m, _ := newPieceText(text).find(ctx, cand); m.count > 0 {
				return fmt.Sprintf(`%s contains a literal \n (a backslash and an n); with line breaks instead it %s %s. Send real line breaks.`,
					noun, verbFor(m), spanOf(text, m.starts[0], len(cand)))
			}
		}
	}
	if strings.Contains(old, "\r\n") && !strings.Contains(text, "\r\n") {
		lf := strings.ReplaceAll(old, "\r\n", "\n")
		if m, _ := newPieceText(text).find(ctx, lf); m.count > 0 {
			return fmt.Sprintf(`With \n line endings it %s %s: the file has \n line endings, %s has \r\n.`,
				verbFor(m), spanOf(text, m.starts[0], len(lf)), noun)
		}
	}
	checks := []struct {
		f    lineNorm
		what string
	}{
		{stripIndent, "if indentation is ignored"},
		{stripTrailing, "if trailing whitespace is ignored"},
		{stripSpace, "if indentation and trailing whitespace are ignored"},
		{straighten, "if curly and straight quotes are taken as equal"},
		{func(l string) string { return stripSpace(straighten(l)) }, "if quotes, indentation and trailing whitespace are ignored"},
	}
	for i, c := range checks {
		nt, no, m, err := normMatches(ctx, text, old, c.f)
		if err != nil {
			return ""
		}
		if m.count == 0 {
			continue
		}
		spans := spansText(nt, len(no), m)
		msg := fmt.Sprintf("%s %s %s", spans, verb(spans), c.what)
		switch {
		case i == 0 || i == 2 || i == 4:
			if why := indentWhy(nt, text, old, noun, m.starts[0]); why != "" {
				msg += ": " + why
			}
		case i == 3:
			if hasCurly(old) {
				msg += ": " + noun + " has curly quotes, the file straight ones"
			} else {
				msg += ": the file has curly quotes (\u201c \u201d \u2018 \u2019)"
			}
		}
		return msg + "."
	}
	return nearLineHint(ctx, text, old, noun)
}

// verbFor is "matches" for one place, "first matches" for several.
func verbFor(m matches) string {
	if m.count > 1 {
		return "first matches"
	}
	return "matches"
}

// indentWhy tells how the file's indentation at a match differs from
// old_text's: "the file indents with tabs, old_text with spaces".
func indentWhy(nt, text, old, noun string, start int) string {
	first := strings.Count(nt[:start], "\n")
	n := strings.Count(old, "\n") + 1
	lines := strings.SplitN(text, "\n", first+n+1)
	file := indentKind(lines[first:min(len(lines), first+n)])
	mine := indentKind(strings.Split(old, "\n"))
	if file == mine || file == "" {
		return ""
	}
	if mine == "" {
		return "the file indents with " + file + ", " + noun + " has no indentation"
	}
	return "the file indents with " + file + ", " + noun + " with " + mine
}

// indentKind says what indents lines: "tabs", "spaces", "tabs and
// spaces", or "" for no indentation.
func indentKind(lines []string) string {
	var tabs, spaces bool
	for _, l := range lines {
		ind := l[:len(l)-len(stripIndent(l))]
		tabs = tabs || strings.Contains(ind, "\t")
		spaces = spaces || strings.Contains(ind, " ")
	}
	switch {
	case tabs && spaces:
		return "tabs and spaces"
	case tabs:
		return "tabs"
	case spaces:
		return "spaces"
	}
	return ""
}

// Bounds of the near-match search: the probe line is cut to
// nearProbeRunes characters, and the search stops after nearBudget cells
// of edit distance.
const (
	nearProbeRunes = 400
	nearBudget     = 20_000_000
	nearShowRunes  = 200
)

// nearLineHint finds the first line of old_text that occurs nowhere in
// the file, then the file line closest to it within a few characters'
// difference, and shows that line.
func nearLineHint(ctx context.Context, text, old, noun string) string {
	var probe string
	probeNo := 0
	for i, l := range strings.Split(old, "\n") {
		l = stripSpace(l)
		if l != "" && !strings.Contains(text, l) {
			probe, probeNo = l, i+1
			break
		}
	}
	if probe == "" {
		return ""
	}
	pr := []rune(probe)
	if len(pr) < 5 || len(pr) > nearProbeRunes {
		return ""
	}
	// "A few characters": at most a fifth of the line, and never more
	// than ten.
	k := min(10, len(pr)/5)
	best, bestLine, bestText := k+1, 0, ""
	budget := nearBudget
	line := 0
	for rest := text; rest != "" && budget > 0; {
		line++
		raw := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			raw, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		l := stripSpace(raw)
		n := utf8.RuneCountInString(l)
		if n-len(pr) > k || len(pr)-n > k || l == "" {
			continue
		}
		if line%1024 == 0 && ctx.Err() != nil {
			return ""
		}
		budget -= len(pr) * (2*k + 1)
		if d := boundedDistance(pr, []rune(l), min(k, best-1)); d < best {
			best, bestLine, bestText = d, line, strings.TrimRight(raw, "\r")
		}
	}
	if bestLine == 0 {
		return ""
	}
	if r := []rune(bestText); len(r) > nearShowRunes {
		bestText = string(r[:nearShowRunes]) + "..."
	}
	chars := "characters differ"
	if best == 1 {
		chars = "character differs"
	}
	where := ""
	if strings.Contains(old, "\n") {
		where = fmt.Sprintf(" to line %d of %s", probeNo, noun)
	}
	return fmt.Sprintf("The closest line%s is line %d (%d %s): '%s'.", where, bestLine, best, chars, bestText)
}

// boundedDistance returns the Levenshtein distance of a and b when it is
// at most k, and k+1 otherwise, in O(len(a) x k).
func boundedDistance(a, b []rune, k int) int {
	if k < 0 {
		return 0
	}
	if d := len(a) - len(b); d > k || -d > k {
		return k + 1
	}
	inf := k + 1
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = min(j, inf)
	}
	for i := 1; i <= len(a); i++ {
		lo, hi := max(1, i-k), min(len(b), i+k)
		for j := range cur {
			cur[j] = inf
		}
		if i <= k {
			cur[0] = i
		}
		rowMin := cur[0]
		for j := lo; j <= hi; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j-1]+cost, prev[j]+1, cur[j-1]+1, inf)
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		if rowMin >= inf {
			return inf
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], inf)
}
