// Package patch parses the multi-file patches agents send: the V4A
// envelope (`*** Begin Patch` ... `*** End Patch` with Add, Update and
// Delete File sections, `*** Move to:` and `@@` anchors) and unified diffs
// (`--- a/x`, `+++ b/x`, `@@ -l,s +l,s @@`). The format is detected from
// the text. Parsing is pure and linear in the patch; locating hunks in
// files is the caller's.
package patch

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind is what a file section does.
type Kind int

// Kinds of file sections.
const (
	Add Kind = iota + 1
	Update
	Delete
)

func (k Kind) String() string {
	switch k {
	case Add:
		return "add"
	case Update:
		return "update"
	case Delete:
		return "delete"
	}
	return "unknown"
}

// Patch is a parsed patch.
type Patch struct {
	// Format is "v4a" or "unified".
	Format string
	Files  []File
}

// File is one file section.
type File struct {
	Kind Kind
	// Path is the file as the patch names it; MoveTo, when not empty, is
	// where an updated file moves.
	Path, MoveTo string
	// Content is the whole text of an added file.
	Content string
	// Hunks change an updated file, in file order.
	Hunks []Hunk
	// Line is the patch line (1-based) of the section's header.
	Line int
}

// Op is the kind of a hunk line: ' ' context, '-' removed, '+' added.
type Op byte

// Line is one line of a hunk, without its line break.
type Line struct {
	Op   Op
	Text string
}

// Hunk is one change to a file.
type Hunk struct {
	// Anchors are the texts of V4A `@@ <text>` lines: each names a line
	// to find, in order, before the hunk's own lines.
	Anchors []string
	Lines   []Line
	// EOF: the hunk's old lines end the file (`*** End of File`).
	EOF bool
	// OldStart is the first old line of a unified hunk (1-based; for a
	// hunk that only adds, the line it adds after, 0 for the top).
	OldStart int
	// Unified: the hunk comes from a unified diff, so OldStart holds.
	Unified bool
	// NoNewline: the new side ends without a line break (unified
	// `\ No newline at end of file` after an added or context line).
	NoNewline bool
	// Line is the patch line (1-based) where the hunk starts.
	Line int
}

// Old returns the lines the hunk expects: context and removed lines.
func (h Hunk) Old() []string { return h.side('-') }

// New returns the lines the hunk leaves: context and added lines.
func (h Hunk) New() []string { return h.side('+') }

func (h Hunk) side(keep Op) []string {
	var out []string
	for _, l := range h.Lines {
		if l.Op == ' ' || l.Op == keep {
			out = append(out, l.Text)
		}
	}
	return out
}

// Error is a patch that cannot be parsed, at a 1-based patch line (0
// for the patch as a whole).
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return e.Msg
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}

func errorf(line int, format string, args ...any) error {
	return &Error{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// Parse parses a V4A patch or a unified diff, whichever the text is.
func Parse(text string) (*Patch, error) {
	lines := splitLines(text)
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		if t == beginMarker || strings.HasPrefix(t, "<<") {
			return parseV4A(lines)
		}
		break
	}
	if isUnified(lines) {
		return parseUnified(lines)
	}
	return nil, errorf(0, "the patch is neither a V4A patch (starting with '%s') nor a unified diff ('--- a/<path>', '+++ b/<path>', '@@ -l,s +l,s @@')", beginMarker)
}

// splitLines splits text on "\n", dropping a "\r" before it and the empty
// element after a final line break.
func splitLines(text string) []string {
	lines := strings.Split(text, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// V4A markers.
const (
	beginMarker  = "*** Begin Patch"
	endMarker    = "*** End Patch"
	addMarker    = "*** Add File:"
	updateMarker = "*** Update File:"
	deleteMarker = "*** Delete File:"
	moveMarker   = "*** Move to:"
	eofMarker    = "*** End of File"
)

// parseV4A parses the V4A envelope. Markers may carry surrounding
// whitespace, and a shell heredoc around the envelope is dropped, as
// models send both.
func parseV4A(lines []string) (*Patch, error) {
	first, last := 0, len(lines)-1
	for first <= last && strings.TrimSpace(lines[first]) == "" {
		first++
	}
	for last >= first && strings.TrimSpace(lines[last]) == "" {
		last--
	}
	if first <= last && strings.HasPrefix(strings.TrimSpace(lines[first]), "<<") {
		first++
		if strings.Trim(strings.TrimSpace(lines[last]), `'"`) == "EOF" {
			last--
		}
	}
	if first > last || strings.TrimSpace(lines[first]) != beginMarker {
		return nil, errorf(first+1, "a V4A patch starts with '%s'", beginMarker)
	}
	if strings.TrimSpace(lines[last]) != endMarker {
		return nil, errorf(last+1, "a V4A patch ends with '%s'", endMarker)
	}
	p := &Patch{Format: "v4a"}
	i := first + 1
	for i < last {
		t := strings.TrimSpace(lines[i])
		switch {
		case t == "":
			i++
		case strings.HasPrefix(t, addMarker):
			f, next, err := parseAdd(lines, i, last)
			if err != nil {
				return nil, err
			}
			p.Files, i = append(p.Files, f), next
		case strings.HasPrefix(t, deleteMarker):
			path, err := markerPath(t, deleteMarker, i)
			if err != nil {
				return nil, err
			}
			p.Files, i = append(p.Files, File{Kind: Delete, Path: path, Line: i + 1}), i+1
		case strings.HasPrefix(t, updateMarker):
			f, next, err := parseUpdate(lines, i, last)
			if err != nil {
				return nil, err
			}
			p.Files, i = append(p.Files, f), next
		default:
			return nil, errorf(i+1, "expected '%s <path>', '%s <path>' or '%s <path>', got '%s'", addMarker, updateMarker, deleteMarker, clip(t))
		}
	}
	if len(p.Files) == 0 {
		return nil, errorf(0, "the patch changes no file")
	}
	return p, nil
}

// markerPath returns the path after a marker.
func markerPath(t, marker string, i int) (string, error) {
	path := strings.TrimSpace(strings.TrimPrefix(t, marker))
	if path == "" {
		return "", errorf(i+1, "'%s' names no path", marker)
	}
	return path, nil
}

// isFileMarker reports whether t starts a new file section or ends the
// patch.
func isFileMarker(t string) bool {
	return t == endMarker || strings.HasPrefix(t, addMarker) || strings.HasPrefix(t, updateMarker) || strings.HasPrefix(t, deleteMarker)
}

func parseAdd(lines []string, i, last int) (File, int, error) {
	path, err := markerPath(strings.TrimSpace(lines[i]), addMarker, i)
	if err != nil {
		return File{}, 0, err
	}
	f := File{Kind: Add, Path: path, Line: i + 1}
	var b strings.Builder
	j := i + 1
	for ; j < last; j++ {
		l := lines[j]
		if isFileMarker(strings.TrimSpace(l)) {
			break
		}
		if !strings.HasPrefix(l, "+") {
			return File{}, 0, errorf(j+1, "every line of an added file starts with '+', got '%s'", clip(l))
		}
		b.WriteString(l[1:])
		b.WriteByte('\n')
	}
	f.Content = b.String()
	return f, j, nil
}

func parseUpdate(lines []string, i, last int) (File, int, error) {
	path, err := markerPath(strings.TrimSpace(lines[i]), updateMarker, i)
	if err != nil {
		return File{}, 0, err
	}
	f := File{Kind: Update, Path: path, Line: i + 1}
	j := i + 1
	if j < last && strings.HasPrefix(strings.TrimSpace(lines[j]), moveMarker) {
		if f.MoveTo, err = markerPath(strings.TrimSpace(lines[j]), moveMarker, j); err != nil {
			return File{}, 0, err
		}
		j++
	}
	var h *Hunk
	// body: h has lines, so a further @@ starts a new hunk.
	body := false
	for ; j < last; j++ {
		l := lines[j]
		t := strings.TrimSpace(l)
		if isFileMarker(t) {
			break
		}
		switch {
		case strings.HasPrefix(t, "@@"):
			if h == nil || body {
				if h != nil {
					f.Hunks = append(f.Hunks, *h)
				}
				h, body = &Hunk{Line: j + 1}, false
			}
			if a := strings.TrimSpace(strings.TrimPrefix(t, "@@")); a != "" {
				h.Anchors = append(h.Anchors, a)
			}
			continue
		case t == eofMarker:
			if h == nil || !body {
				return File{}, 0, errorf(j+1, "'%s' follows no hunk line", eofMarker)
			}
			h.EOF = true
			f.Hunks = append(f.Hunks, *h)
			h, body = nil, false
			continue
		}
		if h == nil {
			// The first hunk may leave out its @@ line.
			h = &Hunk{Line: j + 1}
		}
		switch {
		case l == "":
			h.Lines = append(h.Lines, Line{' ', ""})
		case l[0] == ' ' || l[0] == '-' || l[0] == '+':
			h.Lines = append(h.Lines, Line{Op(l[0]), l[1:]})
		default:
			return File{}, 0, errorf(j+1, "a hunk line starts with ' ' (context), '-' (removed) or '+' (added), got '%s'", clip(l))
		}
		body = true
	}
	if h != nil {
		if !body {
			return File{}, 0, errorf(h.Line, "hunk %d of '%s' has no lines", len(f.Hunks)+1, path)
		}
		f.Hunks = append(f.Hunks, *h)
	}
	if len(f.Hunks) == 0 && f.MoveTo == "" {
		return File{}, 0, errorf(i+1, "'%s %s' has no hunks", updateMarker, path)
	}
	return f, j, nil
}

// isUnified reports whether lines hold a unified diff's file header.
func isUnified(lines []string) bool {
	for i := 0; i+1 < len(lines); i++ {
		if strings.HasPrefix(lines[i], "--- ") && strings.HasPrefix(lines[i+1], "+++ ") {
			return true
		}
	}
	return false
}

// parseUnified parses a unified diff of one or more files; git's extended
// headers are skipped, and a file section's hunks run to the next header.
func parseUnified(lines []string) (*Patch, error) {
	p := &Patch{Format: "unified"}
	var f *File
	flush := func() error {
		if f == nil {
			return nil
		}
		if len(f.Hunks) == 0 && f.Kind != Delete {
			return errorf(f.Line, "the diff of '%s' has no hunks", f.Path)
		}
		if f.Kind == Add {
			var b strings.Builder
			for _, h := range f.Hunks {
				for _, l := range h.Lines {
					if l.Op == '-' || l.Op == ' ' {
						return errorf(h.Line, "a new file's hunk has only '+' lines")
					}
					b.WriteString(l.Text)
					b.WriteByte('\n')
				}
			}
			f.Content = b.String()
			if n := len(f.Hunks); n > 0 && f.Hunks[n-1].NoNewline {
				f.Content = strings.TrimSuffix(f.Content, "\n")
			}
			f.Hunks = nil
		}
		p.Files = append(p.Files, *f)
		f = nil
		return nil
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ "):
			if err := flush(); err != nil {
				return nil, err
			}
			from, to := diffPath(l[4:], "a/"), diffPath(lines[i+1][4:], "b/")
			nf := File{Kind: Update, Path: from, Line: i + 1}
			switch {
			case from == "" && to == "":
				return nil, errorf(i+1, "both sides of the file header are /dev/null")
			case from == "":
				nf.Kind, nf.Path = Add, to
			case to == "":
				nf.Kind = Delete
			case to != from:
				nf.MoveTo = to
			}
			f = &nf
			i++
		case strings.HasPrefix(l, "@@"):
			if f == nil {
				return nil, errorf(i+1, "a hunk before any '--- a/<path>' and '+++ b/<path>' header")
			}
			h, next, err := parseUnifiedHunk(lines, i)
			if err != nil {
				return nil, err
			}
			if f.Kind == Delete {
				// The removed lines are the whole file: nothing to locate.
				i = next - 1
				continue
			}
			f.Hunks = append(f.Hunks, h)
			i = next - 1
		case f == nil || isGitHeader(l):
			// Text before the first header, and git's extended headers.
		case strings.TrimSpace(l) == "":
		default:
			return nil, errorf(i+1, "expected a hunk ('@@ -l,s +l,s @@') or a file header, got '%s'", clip(l))
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if len(p.Files) == 0 {
		return nil, errorf(0, "the diff changes no file")
	}
	return p, nil
}

// isGitHeader reports the extended header lines git prints between files.
func isGitHeader(l string) bool {
	for _, p := range []string{"diff ", "index ", "new file mode", "deleted file mode", "old mode", "new mode",
		"similarity index", "dissimilarity index", "rename from", "rename to", "copy from", "copy to", "Binary files"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// diffPath returns the path of a file header ("a/x" -> "x"), "" for
// /dev/null; a tab and timestamp after it are dropped.
func diffPath(s, prefix string) string {
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	if s == "/dev/null" {
		return ""
	}
	return strings.TrimPrefix(s, prefix)
}

// parseUnifiedHunk parses the hunk whose header is lines[i]; its lines
// run while the header's counts are not used up, or, when they are
// wrong, to the next header.
func parseUnifiedHunk(lines []string, i int) (Hunk, int, error) {
	h := Hunk{Line: i + 1}
	oldStart, oldCount, newCount, ok := hunkHeader(lines[i])
	if !ok {
		return h, 0, errorf(i+1, "a unified hunk header reads '@@ -<line>,<count> +<line>,<count> @@', got '%s'", clip(lines[i]))
	}
	h.OldStart, h.Unified = oldStart, true
	j := i + 1
	for ; j < len(lines); j++ {
		l := lines[j]
		if strings.HasPrefix(l, `\`) {
			// "\ No newline at end of file" after an old-side-only line
			// says nothing about the result.
			if n := len(h.Lines); n > 0 && h.Lines[n-1].Op != '-' {
				h.NoNewline = true
			}
			continue
		}
		if strings.HasPrefix(l, "@@") || isGitHeader(l) || (strings.HasPrefix(l, "--- ") && j+1 < len(lines) && strings.HasPrefix(lines[j+1], "+++ ")) {
			break
		}
		var op Op
		switch {
		case l == "" && oldCount <= 0 && newCount <= 0:
			// A blank line past the counts separates sections.
			return h, j, checkHunk(h)
		case l == "":
			op = ' '
		case l[0] == ' ' || l[0] == '-' || l[0] == '+':
			op, l = Op(l[0]), l[1:]
		default:
			return h, j, checkHunk(h)
		}
		h.Lines = append(h.Lines, Line{op, l})
		if op != '+' {
			oldCount--
		}
		if op != '-' {
			newCount--
		}
	}
	return h, j, checkHunk(h)
}

func checkHunk(h Hunk) error {
	if len(h.Lines) == 0 {
		return errorf(h.Line, "the hunk has no lines")
	}
	return nil
}

// hunkHeader parses "@@ -l[,s] +l[,s] @@ ...".
func hunkHeader(s string) (oldStart, oldCount, newCount int, ok bool) {
	f := strings.Fields(s)
	if len(f) < 3 || f[0] != "@@" || !strings.HasPrefix(f[1], "-") || !strings.HasPrefix(f[2], "+") {
		return 0, 0, 0, false
	}
	oldStart, oldCount, ok1 := rangeOf(f[1][1:])
	_, newCount, ok2 := rangeOf(f[2][1:])
	return oldStart, oldCount, newCount, ok1 && ok2
}

func rangeOf(s string) (start, count int, ok bool) {
	a, b, has := strings.Cut(s, ",")
	start, err := strconv.Atoi(a)
	if err != nil || start < 0 {
		return 0, 0, false
	}
	count = 1
	if has {
		if count, err = strconv.Atoi(b); err != nil || count < 0 {
			return 0, 0, false
		}
	}
	return start, count, true
}

// clip shortens a patch line for a message.
func clip(s string) string {
	if r := []rune(s); len(r) > 80 {
		return string(r[:80]) + "..."
	}
	return s
}
