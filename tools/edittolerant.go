package tools

import (
	"context"
	"fmt"
	"strings"
)

// applyTolerant applies e to text (the whole of pt) when its old text
// occurs exactly once after ignoring indentation and trailing whitespace:
// the matched lines are replaced, new_text is given the file's own
// indentation characters and line endings. It reports false, with no
// error, when the old text does not occur that way either; several
// occurrences are a retry naming their lines.
func applyTolerant(ctx context.Context, pt *pieceText, text string, e replacement, label, display string) (bool, error) {
	nt, no, m, err := normMatches(ctx, text, e.OldText, stripSpace)
	if err != nil || m.count == 0 {
		return false, err
	}
	if m.count > 1 {
		return false, retryf(KindNoMatch, "%s not found in %s; ignoring indentation and trailing whitespace it occurs %s times (%s). Include more surrounding context to make the match unique. No changes were written.",
			label, display, countText(m), lineList(newPieceText(nt), m))
	}
	la, ca := lineCol(nt, m.starts[0])
	lb, cb := lineCol(nt, m.starts[0]+len(no))
	starts := lineStarts(text, la, lb)
	from, to := starts[0], starts[1]
	if ca > 0 {
		from += indentLen(text[from:]) + ca
	}
	if cb > 0 {
		to += indentLen(text[to:]) + cb
	}
	repl := reindent(e.OldText, e.NewText, text[starts[0]:], ca > 0)
	if strings.Contains(text[from:to], "\r\n") {
		repl = crlfText(repl)
	}
	pt.replace(from, to, repl)
	return true, nil
}

// lineCol returns the 0-based line of offset off in s and its column.
func lineCol(s string, off int) (line, col int) {
	line = strings.Count(s[:off], "\n")
	return line, off - (strings.LastIndexByte(s[:off], '\n') + 1)
}

// lineStarts returns the offsets where 0-based lines a and b (a <= b)
// of s start.
func lineStarts(s string, a, b int) [2]int {
	var out [2]int
	line, pos := 0, 0
	for _, want := range []int{a, b} {
		for line < want {
			i := strings.IndexByte(s[pos:], '\n')
			if i < 0 {
				pos = len(s)
				break
			}
			pos += i + 1
			line++
		}
		if want == a {
			out[0] = pos
		} else {
			out[1] = pos
		}
	}
	return out
}

// indentLen is the length of the spaces and tabs that start s.
func indentLen(s string) int { return len(s) - len(stripIndent(s)) }

// reindent gives each line of repl the indentation the file uses where
// old used the same: an indent of old maps to the indent of the file line
// it matched (file starts at the first matched line); an indent old never
// had is converted between tabs and spaces to the file's style. midLine:
// the match began inside its first line, whose indentation stays.
func reindent(old, repl, file string, midLine bool) string {
	oldLines := strings.Split(old, "\n")
	fileLines := strings.SplitN(file, "\n", len(oldLines)+1)
	mapped := make(map[string]string)
	var fileIndents, oldIndents []string
	for i, ol := range oldLines {
		if (i == 0 && midLine) || i >= len(fileLines) || stripSpace(ol) == "" {
			continue
		}
		oi, fi := ol[:indentLen(ol)], fileLines[i][:indentLen(fileLines[i])]
		if _, ok := mapped[oi]; !ok {
			mapped[oi] = fi
		}
		fileIndents, oldIndents = append(fileIndents, fi), append(oldIndents, oi)
	}
	lines := strings.Split(repl, "\n")
	for j, l := range lines {
		if (j == 0 && midLine) || stripSpace(l) == "" {
			continue
		}
		ni := l[:indentLen(l)]
		fi, ok := mapped[ni]
		if !ok {
			fi = convertIndent(ni, fileIndents, oldIndents)
		}
		lines[j] = fi + l[len(ni):]
	}
	return strings.Join(lines, "\n")
}

// convertIndent turns an indent into the file's style: spaces into tabs
// (one per unit of old's spaces) when the file indents with tabs, tabs
// into spaces (one unit of the file's spaces each) when it indents with
// spaces.
func convertIndent(ind string, fileIndents, oldIndents []string) string {
	switch indentKind(fileIndents) {
	case "tabs":
		if strings.Contains(ind, "\t") {
			return ind
		}
		unit := spaceUnit(oldIndents)
		return strings.Repeat("\t", len(ind)/unit) + strings.Repeat(" ", len(ind)%unit)
	case "spaces":
		return strings.ReplaceAll(ind, "\t", strings.Repeat(" ", spaceUnit(fileIndents)))
	}
	return ind
}

// spaceUnit is the indentation step of space indents: the greatest
// common divisor of their widths, 4 when there is none.
func spaceUnit(indents []string) int {
	g := 0
	for _, ind := range indents {
		if n := strings.Count(ind, " "); n > 0 && !strings.Contains(ind, "\t") {
			a, b := g, n
			for b != 0 {
				a, b = b, a%b
			}
			g = a
		}
	}
	if g < 2 {
		return 4
	}
	return g
}

// toleranceNote is the sentence a result adds when labels matched only
// under the whitespace tolerance.
func toleranceNote(labels []string) string {
	if len(labels) == 0 {
		return ""
	}
	return fmt.Sprintf(" %s matched only after ignoring indentation and trailing whitespace; the file's indentation was kept.", strings.Join(labels, ", "))
}
