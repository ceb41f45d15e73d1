package textsearch

import (
	"strconv"
	"strings"
)

// Printer formats search results the way ripgrep prints them with
// --no-heading --line-number: matches as "<path>:<line>:<text>", context
// lines as "<path>-<line>-<text>", and, when context is shown, a "--" line
// between groups of lines that are not adjacent (also between files). It
// stops at a cap on the number of lines and remembers whether a line was
// dropped.
type Printer struct {
	b          strings.Builder
	maxLines   int
	separators bool
	lines      int
	matches    int
	truncated  bool
	lastPath   string
	lastNumber int
	// pathLens, when recording, holds the length of the path of each
	// printed line.
	pathLens  []int
	recording bool
}

// RecordPaths makes the printer remember where the path of each line it
// prints ends, for PathLens.
func (p *Printer) RecordPaths() { p.recording = true; p.pathLens = []int{} }

// PathLens returns, after RecordPaths, the byte length of the path that
// starts each printed match or context line, in order: the one exact way
// to split a line whose path itself holds ":12:". It is nil without
// RecordPaths.
func (p *Printer) PathLens() []int { return p.pathLens }

// NewPrinter returns a printer that keeps at most maxLines match and
// context lines ("--" separators are not counted); maxLines <= 0 means no
// cap. separators asks for the "--" lines, as ripgrep prints them when
// context lines are shown.
func NewPrinter(maxLines int, separators bool) *Printer {
	return &Printer{maxLines: maxLines, separators: separators}
}

// Add prints one file's lines under the displayed path. It returns false
// once the cap dropped a line, so the caller can stop searching.
func (p *Printer) Add(path string, lines []Line) bool {
	for _, l := range lines {
		if !p.AddLine(path, l) {
			return false
		}
	}
	return true
}

// AddLine prints one line; see [Printer.Add].
func (p *Printer) AddLine(path string, l Line) bool {
	if p.truncated {
		return false
	}
	if p.maxLines > 0 && p.lines >= p.maxLines {
		p.truncated = true
		return false
	}
	if p.lines > 0 {
		if p.separators && (path != p.lastPath || l.Number != p.lastNumber+1) {
			p.b.WriteString("\n--")
		}
		p.b.WriteByte('\n')
	}
	sep := byte('-')
	if l.Match {
		sep = ':'
		p.matches++
	}
	p.b.WriteString(path)
	p.b.WriteByte(sep)
	p.b.WriteString(strconv.Itoa(l.Number))
	p.b.WriteByte(sep)
	p.b.WriteString(l.Text)
	p.lines++
	if p.recording {
		p.pathLens = append(p.pathLens, len(path))
	}
	p.lastPath, p.lastNumber = path, l.Number
	return true
}

// String returns the printed lines joined by "\n", without a final newline.
func (p *Printer) String() string { return p.b.String() }

// Lines returns the number of match and context lines printed.
func (p *Printer) Lines() int { return p.lines }

// Matches returns the number of matching lines printed.
func (p *Printer) Matches() int { return p.matches }

// Truncated reports whether a line was dropped by the cap.
func (p *Printer) Truncated() bool { return p.truncated }
