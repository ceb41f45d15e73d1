package overlay

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/fencefs/fencefs/backend"
)

// MaxDiffFileBytes is the largest side of a file change that Diff shows
// line by line; a larger or binary file shows as a one-line notice.
const MaxDiffFileBytes = 1 << 20

// diffContext is the number of unchanged lines around each change.
const diffContext = 3

// Diff returns the unified diff of the changes that paths select (all of
// them without paths; see Commit) against the base as it is now: one
// section per file, "a/" for the base's side and "b/" for the overlay's,
// /dev/null for a side that does not exist, in the format of `git diff`
// (three lines of context, "\ No newline at end of file"). Binary files
// and files over MaxDiffFileBytes show as "Binary files ... differ".
// Directories are left out.
func (o *FS) Diff(ctx context.Context, paths ...string) (string, error) {
	all, err := o.Changes(ctx)
	if err != nil {
		return "", err
	}
	cs, err := selectChanges(all, paths)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	for _, c := range cs {
		if c.Dir {
			continue
		}
		oldName, newName := c.Path, c.Path
		var old, cur []byte
		if c.Kind == Renamed {
			oldName = c.From
		}
		if c.Kind != Created {
			if old, err = readOrNil(ctx, o.base, oldName); err != nil {
				return "", err
			}
		}
		if c.Kind != Deleted {
			if cur, err = backend.ReadFile(ctx, o.upper, c.Path); err != nil {
				return "", err
			}
		}
		a, b := "a/"+oldName, "b/"+newName
		if c.Kind == Created {
			a = "/dev/null"
		}
		if c.Kind == Deleted {
			b = "/dev/null"
		}
		sb.WriteString(unified(a, b, old, cur))
	}
	return sb.String(), nil
}

// readOrNil reads name from b; a file gone since is empty.
func readOrNil(ctx context.Context, b backend.Reader, name string) ([]byte, error) {
	data, err := backend.ReadFile(ctx, b, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// unified returns the diff section turning old (named a) into cur (named
// b), ending with a newline, or "" when they are equal and the names are
// too.
func unified(a, b string, old, cur []byte) string {
	if bytes.Equal(old, cur) && a == b {
		return ""
	}
	header := "--- " + a + "\n+++ " + b + "\n"
	if bytes.Equal(old, cur) {
		return header
	}
	if binary(old) || binary(cur) {
		return "Binary files " + a + " and " + b + " differ\n"
	}
	oldText, curText := string(old), string(cur)
	la, lb := splitLines(oldText), splitLines(curText)
	var sb strings.Builder
	sb.WriteString(header)
	for _, group := range groupOpcodes(opcodes(oldText, curText), diffContext) {
		writeHunk(&sb, group, la, lb)
	}
	return sb.String()
}

// binary reports whether data is shown as binary: too large, not UTF-8,
// or holding a NUL byte.
func binary(data []byte) bool {
	return len(data) > MaxDiffFileBytes || !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0
}

// splitLines splits s after each "\n"; a final line without one is kept.
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

// opcode is tag applied to a[i1:i2] and b[j1:j2]: 'e'qual, 'r'eplace,
// 'd'elete or 'i'nsert.
type opcode struct {
	tag            byte
	i1, i2, j1, j2 int
}

// opcodes diffs old and cur line by line (Myers' algorithm, go-diff's
// line mode), runs of deletions and insertions between two equal runs
// becoming one replace, delete or insert.
func opcodes(old, cur string) []opcode {
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0 // the output must not depend on the machine's load
	c1, c2, _ := dmp.DiffLinesToChars(old, cur)
	var ops []opcode
	i, j, del, ins := 0, 0, 0, 0
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
	for _, d := range dmp.DiffMain(c1, c2, false) {
		n := utf8.RuneCountInString(d.Text) // one rune per line
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			del += n
		case diffmatchpatch.DiffInsert:
			ins += n
		default:
			flush()
			ops = append(ops, opcode{'e', i, i + n, j, j + n})
			i, j = i+n, j+n
		}
	}
	flush()
	return ops
}

// groupOpcodes trims the leading and trailing equal runs to n lines and
// splits the changes into hunks wherever an equal run is longer than 2n
// lines.
func groupOpcodes(codes []opcode, n int) [][]opcode {
	if len(codes) == 0 {
		return nil
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

// writeHunk writes one hunk.
func writeHunk(sb *strings.Builder, group []opcode, a, b []string) {
	first, last := group[0], group[len(group)-1]
	sb.WriteString("@@ -" + formatRange(first.i1, last.i2) + " +" + formatRange(first.j1, last.j2) + " @@\n")
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
		sb.WriteByte(tag)
		sb.WriteString(line)
		if !strings.HasSuffix(line, "\n") {
			sb.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// formatRange is "start" for one line and "start,length" otherwise, an
// empty range starting at the line before it.
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
