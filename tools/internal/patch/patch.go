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
	// Copy creates MoveTo from Path (as read) with the hunks applied;
	// Path is unchanged (git's copy from/copy to).
	Copy
)

func (k Kind) String() string {
	switch k {
	case Add:
		return "add"
	case Update:
		return "update"
	case Delete:
		return "delete"
	case Copy:
		return "copy"
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
	// SoftLead and SoftTrail count the blank lines (without their
	// leading space) that open and close a V4A hunk: context, or only
	// the blank lines a patch puts between its hunks and sections. A
	// hunk is located with them first, then without.
	SoftLead, SoftTrail int
}

// WithoutSoft returns h without the blank lines that open and close it.
func (h Hunk) WithoutSoft() Hunk {
	h.Lines = h.Lines[h.SoftLead : len(h.Lines)-h.SoftTrail]
	h.SoftLead, h.SoftTrail = 0, 0
	return h
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
		t := strings.TrimSpace(l)
		if isFileMarker(t) {
			break
		}
		if t == "" {
			// Blank lines before the next section separate it.
			k := j
			for k < last && strings.TrimSpace(lines[k]) == "" {
				k++
			}
			if k == last || isFileMarker(strings.TrimSpace(lines[k])) {
				j = k
				break
			}
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

// isHunkLine reports a V4A hunk line: context, removed or added. A line
// that starts with a space is context whatever it holds, so a document
// quoting a patch (" @@ ...", " *** End Patch") is updated as text, as
// the V4A reference reads it.
func isHunkLine(l string) bool {
	return l != "" && (l[0] == ' ' || l[0] == '-' || l[0] == '+')
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
	// body: h has a line that is not blank, so a further @@ starts a new
	// hunk; blanks counts the blank lines that end h so far.
	body, blanks := false, 0
	// end closes h: blank lines at its start and end may be separators.
	end := func() {
		if h != nil {
			h.SoftTrail = blanks
			f.Hunks = append(f.Hunks, *h)
		}
		h, body, blanks = nil, false, 0
	}
	for ; j < last; j++ {
		l := lines[j]
		if isHunkLine(l) && strings.TrimSpace(l) != "" {
			if h == nil {
				// The first hunk may leave out its @@ line.
				h = &Hunk{Line: j + 1}
			}
			if !body {
				h.SoftLead = len(h.Lines)
			}
			h.Lines = append(h.Lines, Line{Op(l[0]), l[1:]})
			body, blanks = true, 0
			continue
		}
		t := strings.TrimSpace(l)
		if isFileMarker(t) {
			break
		}
		switch {
		case t == "":
			// A blank line: context inside a hunk (an empty line, or one
			// of spaces, whose leading space may be lost), nothing before
			// the first hunk.
			if h != nil {
				if strings.HasPrefix(l, " ") {
					l = l[1:]
				} else {
					l = ""
				}
				h.Lines = append(h.Lines, Line{' ', l})
				blanks++
			}
		case strings.HasPrefix(t, "@@"):
			if h != nil && body {
				end()
			}
			if h == nil {
				h = &Hunk{Line: j + 1}
			}
			if a := strings.TrimSpace(strings.TrimPrefix(t, "@@")); a != "" {
				h.Anchors = append(h.Anchors, a)
			}
		case t == eofMarker:
			if h == nil || !body {
				return File{}, 0, errorf(j+1, "'%s' follows no hunk line", eofMarker)
			}
			h.EOF = true
			end()
		default:
			return File{}, 0, errorf(j+1, "a hunk line starts with ' ' (context), '-' (removed) or '+' (added), got '%s'", clip(l))
		}
	}
	if h != nil {
		if !body {
			return File{}, 0, errorf(h.Line, "hunk %d of '%s' has no lines", len(f.Hunks)+1, path)
		}
		end()
	}
	if len(f.Hunks) == 0 && f.MoveTo == "" {
		return File{}, 0, errorf(i+1, "'%s %s' has no hunks", updateMarker, path)
	}
	return f, j, nil
}

// isUnified reports whether lines hold a unified diff's file header or a
// git section (which may have no ---/+++ lines: a rename, a new empty
// file).
func isUnified(lines []string) bool {
	for i, l := range lines {
		if strings.HasPrefix(l, "diff --git ") || strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ ") {
			return true
		}
	}
	return false
}

// gitSection is what the header lines of one `diff --git` section say.
type gitSection struct {
	line int
	// oldName and newName come from the `diff --git` line, "" when it
	// cannot be split.
	oldName, newName     string
	renameFrom, renameTo string
	copyFrom, copyTo     string
	oldMode, newMode     string
	newFileMode          string
	isNew, isDelete      bool
}

// regularMode is the mode of a regular file that is not executable: the
// one a new file gets, so a section creating one loses nothing.
const regularMode = "100644"

// parseUnified parses a unified diff of one or more files, git's sections
// (with their extended headers) and `git format-patch` mails: text before
// a diff, a mail's signature (`-- `) and what follows it until the next
// diff are skipped, as git apply skips them.
func parseUnified(lines []string) (*Patch, error) {
	p := &Patch{Format: "unified"}
	var f *File
	var g *gitSection
	// skip: outside any diff (a mail's headers and message, a signature).
	skip := true
	flush := func() error {
		if f == nil {
			return nil
		}
		if len(f.Hunks) == 0 && f.Kind != Delete && f.MoveTo == "" {
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
		case strings.HasPrefix(l, "diff --git "):
			if err := flush(); err != nil {
				return nil, err
			}
			var err error
			if g, i, err = parseGitHeader(lines, i); err != nil {
				return nil, err
			}
			skip = false
			if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "--- ") && i+2 < len(lines) && strings.HasPrefix(lines[i+2], "+++ ") {
				continue
			}
			if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "@@") && g.oldName != "" && !g.isNew && !g.isDelete {
				// Hunks right after the header, without ---/+++ lines:
				// the header's names say which file they change.
				nf := File{Kind: Update, Path: g.oldName, Line: g.line}
				if g.newName != g.oldName {
					nf.MoveTo = g.newName
				}
				if err := g.apply(&nf); err != nil {
					return nil, err
				}
				f, g = &nf, nil
				continue
			}
			// A section without ---/+++ lines has no hunks.
			nf, err := g.file()
			if err != nil {
				return nil, err
			}
			p.Files = append(p.Files, nf)
			g = nil
		case strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ "):
			if err := flush(); err != nil {
				return nil, err
			}
			from, err := diffPath(l[4:], "a/", i)
			if err != nil {
				return nil, err
			}
			to, err := diffPath(lines[i+1][4:], "b/", i+1)
			if err != nil {
				return nil, err
			}
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
			if g != nil {
				if err := g.apply(&nf); err != nil {
					return nil, err
				}
				g = nil
			}
			f, skip = &nf, false
			i++
		case strings.HasPrefix(l, "Binary files ") && strings.HasSuffix(l, " differ"), l == "GIT binary patch":
			return nil, errorf(i+1, "'%s' has a binary diff ('%s'); apply_patch applies text changes only", binaryName(l, g), clip(l))
		case isMailStart(lines, i):
			// The next mail of a series, or a mail's signature.
			if err := flush(); err != nil {
				return nil, err
			}
			g, skip = nil, true
		case skip:
		case strings.HasPrefix(l, "@@"):
			if f == nil {
				return nil, errorf(i+1, "a hunk before any '--- a/<path>' and '+++ b/<path>' header")
			}
			h, next, err := parseUnifiedHunk(lines, i)
			if err != nil {
				return nil, err
			}
			if f.Kind != Delete {
				// A deletion's removed lines are the whole file: nothing
				// to locate.
				f.Hunks = append(f.Hunks, h)
			}
			i = next - 1
		case f == nil || isGitHeader(l):
			// Text before the first header, and extended headers.
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

// isMailStart reports a line that ends a diff in a `git format-patch`
// mail: its signature ("-- " then the version, or "--" where trailing
// whitespace was stripped) or the "From <commit> <date>" line of the
// next mail of a series.
func isMailStart(lines []string, i int) bool {
	l := lines[i]
	if l == "-- " || l == "--" && (i+1 == len(lines) || !isDiffLine(lines[i+1])) {
		return true
	}
	rest, ok := strings.CutPrefix(l, "From ")
	if !ok {
		return false
	}
	commit, _, _ := strings.Cut(rest, " ")
	if len(commit) != 40 && len(commit) != 64 {
		return false
	}
	for _, c := range commit {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// isDiffLine reports a line a hunk could hold.
func isDiffLine(l string) bool {
	return l != "" && (l[0] == ' ' || l[0] == '-' || l[0] == '+' || l[0] == '\\')
}

// parseGitHeader reads the `diff --git` line at i and the extended
// header lines after it; it returns the section and the index of its
// last header line. A binary section is refused here, naming the file.
func parseGitHeader(lines []string, i int) (*gitSection, int, error) {
	g := &gitSection{line: i + 1}
	g.oldName, g.newName = splitGitNames(strings.TrimPrefix(lines[i], "diff --git "))
	j := i + 1
	for ; j < len(lines); j++ {
		l := lines[j]
		var err error
		var v string
		switch {
		case cut(l, "old mode ", &v):
			g.oldMode = strings.TrimSpace(v)
		case cut(l, "new mode ", &v):
			g.newMode = strings.TrimSpace(v)
		case cut(l, "new file mode ", &v):
			g.isNew, g.newFileMode = true, strings.TrimSpace(v)
		case cut(l, "deleted file mode ", &v):
			g.isDelete = true
		case cut(l, "rename from ", &v):
			g.renameFrom, err = gitPath(v, j)
		case cut(l, "rename to ", &v):
			g.renameTo, err = gitPath(v, j)
		case cut(l, "copy from ", &v):
			g.copyFrom, err = gitPath(v, j)
		case cut(l, "copy to ", &v):
			g.copyTo, err = gitPath(v, j)
		case strings.HasPrefix(l, "similarity index "), strings.HasPrefix(l, "dissimilarity index "), strings.HasPrefix(l, "index "):
		case strings.HasPrefix(l, "Binary files ") || l == "GIT binary patch":
			return nil, 0, errorf(j+1, "'%s' has a binary diff ('%s'); apply_patch applies text changes only", g.name(), clip(l))
		default:
			return g, j - 1, nil
		}
		if err != nil {
			return nil, 0, err
		}
	}
	return g, j - 1, nil
}

// binaryName names the file of a binary diff line outside a git
// section's headers ("Binary files a/x and b/x differ").
func binaryName(l string, g *gitSection) string {
	if g != nil {
		return g.name()
	}
	names := strings.TrimSuffix(strings.TrimPrefix(l, "Binary files "), " differ")
	a, b, ok := strings.Cut(names, " and ")
	if !ok {
		return names
	}
	if n, err := diffPath(b, "b/", 0); err == nil && n != "" {
		return n
	}
	n, _ := diffPath(a, "a/", 0)
	return n
}

// cut sets *rest to what follows prefix in l, and reports whether l
// starts with it.
func cut(l, prefix string, rest *string) bool {
	r, ok := strings.CutPrefix(l, prefix)
	*rest = r
	return ok
}

// name is the section's file in messages.
func (g *gitSection) name() string {
	for _, n := range []string{g.renameTo, g.copyTo, g.newName, g.oldName} {
		if n != "" {
			return n
		}
	}
	return "?"
}

// modeErr refuses what the section says about modes that a write cannot
// keep: a mode change, and a new file that is not a plain one
// (executable, a symbolic link, a submodule).
func (g *gitSection) modeErr() error {
	switch {
	case g.oldMode != "" && g.newMode != "" && g.oldMode != g.newMode:
		return errorf(g.line, "'%s' changes mode from %s to %s; apply_patch does not set file modes", g.name(), g.oldMode, g.newMode)
	case g.isNew && g.newFileMode != regularMode:
		return errorf(g.line, "'%s' is created with mode %s; apply_patch creates plain files (mode %s) only", g.name(), g.newFileMode, regularMode)
	}
	return nil
}

// file returns the section as a file section when it has no hunks: a
// rename, a copy, a new or deleted empty file.
func (g *gitSection) file() (File, error) {
	if err := g.modeErr(); err != nil {
		return File{}, err
	}
	f := File{Line: g.line}
	switch {
	case g.renameFrom != "" && g.renameTo != "":
		f.Kind, f.Path, f.MoveTo = Update, g.renameFrom, g.renameTo
	case g.copyFrom != "" && g.copyTo != "":
		f.Kind, f.Path, f.MoveTo = Copy, g.copyFrom, g.copyTo
	case g.isNew && g.newName != "":
		f.Kind, f.Path = Add, g.newName
	case g.isDelete && g.oldName != "":
		f.Kind, f.Path = Delete, g.oldName
	case g.oldName == "":
		return File{}, errorf(g.line, "the names in 'diff --git' cannot be told apart, and no header names the file")
	case g.oldMode != "":
		return File{}, errorf(g.line, "'%s' has a mode line and no change", g.name())
	default:
		return File{}, errorf(g.line, "the diff of '%s' changes nothing", g.name())
	}
	return f, nil
}

// apply completes f, read from the ---/+++ lines of a git section, with
// what the section's headers say.
func (g *gitSection) apply(f *File) error {
	if err := g.modeErr(); err != nil {
		return err
	}
	switch {
	case g.copyFrom != "" && g.copyTo != "":
		f.Kind, f.Path, f.MoveTo = Copy, g.copyFrom, g.copyTo
	case g.renameFrom != "" && g.renameTo != "":
		f.Path, f.MoveTo = g.renameFrom, g.renameTo
	}
	return nil
}

// splitGitNames returns the two names of a `diff --git` line, without
// their a/ and b/ prefixes; "" when they cannot be told apart (unquoted
// names with spaces that differ).
func splitGitNames(s string) (string, string) {
	if strings.HasPrefix(s, `"`) {
		a, rest, ok := unquoteC(s)
		if !ok {
			return "", ""
		}
		b, err := gitPath(strings.TrimPrefix(rest, " "), 0)
		if err != nil {
			return "", ""
		}
		return strings.TrimPrefix(a, "a/"), strings.TrimPrefix(b, "b/")
	}
	if k := strings.Index(s, ` "`); k >= 0 {
		b, _, ok := unquoteC(s[k+1:])
		if !ok {
			return "", ""
		}
		return strings.TrimPrefix(s[:k], "a/"), strings.TrimPrefix(b, "b/")
	}
	// Unquoted: the split where both names are the same, as git does for
	// a section that neither renames nor copies.
	for k := strings.IndexByte(s, ' '); k >= 0; {
		a, b := strings.TrimPrefix(s[:k], "a/"), strings.TrimPrefix(s[k+1:], "b/")
		if a == b {
			return a, b
		}
		n := strings.IndexByte(s[k+1:], ' ')
		if n < 0 {
			break
		}
		k += 1 + n
	}
	return "", ""
}

// gitPath reads a path of a git header line: C-quoted as git writes a
// name with special bytes, or as it is.
func gitPath(s string, i int) (string, error) {
	if !strings.HasPrefix(s, `"`) {
		return s, nil
	}
	p, _, ok := unquoteC(s)
	if !ok {
		return "", errorf(i+1, "the quoted path %s is not closed or has an unknown escape", clip(s))
	}
	return p, nil
}

// unquoteC reads the C-quoted string git writes for a name with special
// bytes ("a/caf\303\251.txt"): the escapes \a \b \t \n \v \f \r \" \\
// and three octal digits. It returns the name and what follows the
// closing quote.
func unquoteC(s string) (string, string, bool) {
	if !strings.HasPrefix(s, `"`) {
		return "", "", false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			return b.String(), s[i+1:], true
		case '\\':
		default:
			b.WriteByte(c)
			continue
		}
		if i++; i >= len(s) {
			return "", "", false
		}
		switch c = s[i]; c {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'v':
			b.WriteByte('\v')
		case 'f':
			b.WriteByte('\f')
		case 'r':
			b.WriteByte('\r')
		case '"', '\\':
			b.WriteByte(c)
		case '0', '1', '2', '3':
			if i+2 >= len(s) || !isOctal(s[i+1]) || !isOctal(s[i+2]) {
				return "", "", false
			}
			b.WriteByte((c-'0')<<6 | (s[i+1]-'0')<<3 | (s[i+2] - '0'))
			i += 2
		default:
			return "", "", false
		}
	}
	return "", "", false
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// isGitHeader reports the extended header lines git prints between files.
func isGitHeader(l string) bool {
	for _, p := range []string{"diff ", "index ", "new file mode", "deleted file mode", "old mode", "new mode",
		"similarity index", "dissimilarity index", "rename from", "rename to", "copy from", "copy to"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// diffPath returns the path of a file header ("a/x" -> "x"), "" for
// /dev/null; a C-quoted name is unquoted, and a tab and timestamp after
// the name are dropped.
func diffPath(s, prefix string, i int) (string, error) {
	if strings.HasPrefix(s, `"`) {
		p, err := gitPath(s, i)
		return strings.TrimPrefix(p, prefix), err
	}
	if k := strings.IndexByte(s, '\t'); k >= 0 {
		s = s[:k]
	}
	s = strings.TrimSpace(s)
	if s == "/dev/null" {
		return "", nil
	}
	return strings.TrimPrefix(s, prefix), nil
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
		if oldCount <= 0 && newCount <= 0 && isMailStart(lines, j) {
			// A format-patch mail's signature after the last hunk.
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
