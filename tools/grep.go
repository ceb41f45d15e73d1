package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/tools/internal/rg"
	"github.com/fencefs/fencefs/tools/internal/textsearch"
)

func (s *Set) grepTool() *Tool {
	return &Tool{
		Name: nameGrep,
		Description: fmt.Sprintf("Search file contents with ripgrep. pattern is a regular expression (ripgrep's "+
			"Rust syntax) unless literal is set. path may name a file or a directory, searched recursively in "+
			"path order, leaving out files excluded by .gitignore (inside a git repository), .ignore or .rgignore, "+
			"binary files and hidden (dot-named) entries. Prints matching lines as '<path>:<line>:<text>' and "+
			"context lines as '<path>-<line>-<text>', with '--' between groups; at most %d lines, and lines longer "+
			"than %d characters are cut.", s.opts.MaxSearchResults, textsearch.DefaultMaxColumns),
		InputSchema: objectSchema([]string{"pattern"},
			prop{"pattern", `{"type":"string","description":"Regular expression to look for in each line, or plain text with literal set."}`},
			prop{"path", `{"type":"string","default":".","description":"File or directory to search, relative to the working directory or starting with '/'."}`},
			prop{"glob", `{"type":"string","description":"Optional ripgrep glob the files must match, relative to path, such as '*.py' or '!*_test.go'."}`},
			prop{"file_type", `{"type":"string","description":"Optional ripgrep file type, such as 'py', 'go', 'js', 'rust' or 'md'."}`},
			prop{"ignore_case", `{"type":"boolean","default":false,"description":"Match letters case-insensitively."}`},
			prop{"literal", `{"type":"boolean","default":false,"description":"Treat pattern as plain text, not a regular expression."}`},
			prop{"context", fmt.Sprintf(`{"type":"integer","minimum":0,"maximum":%d,"default":0,"description":"Number of lines to show before and after each match."}`, textsearch.MaxContext)},
		),
		Annotations: Annotations{Title: "Grep", ReadOnly: true, Idempotent: true},
	}
}

// grepQuery is a decoded grep call.
type grepQuery struct {
	pattern    string
	ignoreCase bool
	literal    bool
	context    int
	sel        selection
}

func (s *Set) grep(ctx context.Context, raw json.RawMessage) (string, error) {
	var q grepQuery
	p := "."
	var g, fileType *string
	if err := decodeArgs(raw, arg{"pattern", &q.pattern, true}, arg{"path", &p, false}, arg{"glob", &g, false},
		arg{"file_type", &fileType, false}, arg{"ignore_case", &q.ignoreCase, false}, arg{"literal", &q.literal, false},
		arg{"context", &q.context, false}); err != nil {
		return "", err
	}
	if q.context < 0 || q.context > textsearch.MaxContext {
		return "", retryf(KindInvalid, "Invalid context %d: context must be between 0 and %d.", q.context, textsearch.MaxContext)
	}
	var err error
	if q.sel, err = newSelection(g, fileType); err != nil {
		return "", err
	}
	root, info, err := s.walkRoot(ctx, nameGrep, p)
	if err != nil {
		return "", err
	}
	f := s.newWalkFilter(root)
	f.relevant = q.sel.mayKeep
	pr := newPrinter(ctx, s.opts.MaxSearchResults, q.context > 0)
	if info.IsDir() || s.fileRootVisible(root, info) {
		err = s.grepFiles(ctx, f, q, info, pr)
		if errors.Is(err, rg.ErrOutOfMemory) || errors.Is(err, rg.ErrNotInstalled) || errors.Is(err, rg.ErrSpecialFile) {
			// ripgrep met a line too long for its memory bound, went
			// missing, or was held by a FIFO swapped in under it: the
			// built-in engine, which holds at most
			// textsearch.MaxLineBytes of a line and never opens a special
			// file, does the whole search again.
			f = s.newWalkFilter(root)
			f.relevant = q.sel.mayKeep
			pr = newPrinter(ctx, s.opts.MaxSearchResults, q.context > 0)
			err = s.builtinGrep(ctx, f, q, info, pr)
		}
	}
	if err != nil {
		return "", s.grepErr(err, q, p)
	}
	capMarker := ""
	if pr.Truncated() {
		capMarker = fmt.Sprintf("[... truncated at %s]", count(s.opts.MaxSearchResults, "line", "lines"))
	}
	s.emit(ctx, FilesSearched{Path: s.canonical(root.resolved), Pattern: q.pattern, Search: "grep", MatchCount: pr.Matches(), Truncated: pr.Truncated()})
	reportPrinted(ctx, pr)
	var lines []string
	if out := pr.String(); out != "" {
		lines = []string{out}
	}
	return finishOutput(lines, "No matches found.", capMarker, f.notices()), nil
}

// compile builds the built-in engine's matcher for q. A pattern with a
// line break is refused as ripgrep refuses it, and a UTF-8 byte order
// mark is left out of line 1 as ripgrep leaves it out, so the engines
// agree.
func (q grepQuery) compile() (*textsearch.Matcher, error) {
	m, err := textsearch.Compile(q.pattern, textsearch.Options{IgnoreCase: q.ignoreCase, Literal: q.literal, Context: q.context, SkipBOM: true})
	if err != nil {
		return nil, retryf(KindInvalid, "Invalid regex pattern: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	if m.HasNewline() {
		return nil, retryf(KindInvalid, "Invalid regex pattern: the pattern matches a line break, but grep matches one line at a time.")
	}
	return m, nil
}

// grepErr maps the errors of a grep; anything else goes through
// storageErr. A pattern ripgrep could not parse is explained by the
// built-in engine's parser, never in ripgrep's words, which may quote
// what it read.
func (s *Set) grepErr(err error, q grepQuery, display string) error {
	switch {
	case errors.Is(err, rg.ErrTimeout):
		return retryf(KindTimeout, "ripgrep did not finish within %s. Search a smaller directory or narrow the search with glob or file_type.", s.opts.RipgrepTimeout)
	case errors.Is(err, rg.ErrPattern):
		if _, cerr := q.compile(); cerr != nil {
			return cerr
		}
		return retryf(KindInvalid, "Invalid regex pattern: ripgrep's regular expression syntax does not accept this pattern.")
	case errors.Is(err, rg.ErrGlob) && len(q.sel.globs) > 0:
		return retryf(KindInvalid, "Pattern '%s' is not a valid glob pattern.", q.sel.globs[0])
	}
	return s.storageErr(err, display)
}

// grepFiles searches the walk root, a directory or a single file, with
// ripgrep where it lies on local disk and ripgrep is installed, and with
// the built-in engine otherwise.
func (s *Set) grepFiles(ctx context.Context, f *walkFilter, q grepQuery, info backend.FileInfo, pr *textsearch.Printer) error {
	dir := f.root.resolved
	if !info.IsDir() {
		dir, _ = backend.Split(dir)
	}
	host, local := s.hostDir(dir)
	r := s.runner()
	if !local || !r.Installed() {
		return s.builtinGrep(ctx, f, q, info, pr)
	}
	return s.rgGrep(ctx, r, f, q, info.IsDir(), host, pr)
}

// rgGrep searches with ripgrep, which runs in the host directory host
// and reads no ignore file: in a directory, every file it reports goes
// through the walk filter and the ignore rules read through the backend
// (rgIgnores) before anything else, so it shows the files the built-in
// walk would. A file in which ripgrep met a NUL byte is
// binary when the NUL lies in its first 8192 bytes and left out; past
// that, ripgrep stopped early, so the file is searched again with the
// built-in engine to show all of it, as is a file whose report the
// runner cut short (rg.File.Incomplete). ripgrep opens files by host
// path, so every other file's matches are checked against the backend's
// contained read, which also gives their context lines, before they are
// shown; a file that reads differently (swapped for a link, changed
// meanwhile) is searched again with the built-in engine, through the
// backend, and one that cannot be read is left out.
func (s *Set) rgGrep(ctx context.Context, r *rg.Runner, f *walkFilter, q grepQuery, dir bool, host string, pr *textsearch.Printer) error {
	// ripgrep reports matching lines only; the context around them is
	// read through the backend (ripgrep 13 with --context says nothing of
	// a binary file whose NUL it meets in its first read). One line more
	// than the cap lets the printer see that it was reached.
	rq := rg.SearchQuery{Query: rg.Query{Dir: host, Globs: q.sel.globs, Type: q.sel.fileType},
		Pattern: q.pattern, IgnoreCase: q.ignoreCase, Literal: q.literal,
		MaxLines: s.opts.MaxSearchResults + 1}
	m := rgMapper{s: s, f: f, seenControl: map[string]bool{}}
	single := ""
	if dir {
		ig, err := s.newIgnoreStack(ctx, f.root.resolved, q.sel)
		if err != nil {
			return err
		}
		m.ig = &rgIgnores{ig: ig, root: f.root.resolved, dirs: map[string]bool{}, listed: map[string][]backend.DirEntry{}}
		if rq.Prune, err = m.ig.plan(ctx, s.newWalkFilter(f.root)); err != nil {
			return err
		}
		if err := s.countHidden(ctx, f, m.ig.listed[f.root.resolved]); err != nil {
			return err
		}
	} else {
		// A single file: ripgrep runs in its directory, on its name,
		// and ignores neither glob nor type, as for any path it is given.
		// It searches a binary file it is given to its end, so a file
		// that starts binary is left out here, at once.
		if s.startsBinary(ctx, f.root.resolved) {
			return nil
		}
		_, base := backend.Split(f.root.resolved)
		rq.Paths, rq.Globs, rq.Type = []string{base}, nil, ""
		single = "./" + base
	}
	var fallback *textsearch.Matcher
	var stopErr error
	v := newLineVerifier(s.b)
	walked := listenersOf(ctx).walked
	err := r.Search(ctx, rq, func(file rg.File) bool {
		if walked != nil {
			walked.Add(1)
		}
		we, ok := walkEntry{Name: f.root.written, Resolved: f.root.resolved}, file.Path == single
		if dir {
			var err error
			if we, ok, err = m.entry(ctx, file.Path); err != nil {
				stopErr = err
				return false
			}
		}
		if !ok || (file.BinaryOffset >= 0 && file.BinaryOffset < textsearch.BinaryPrefix) {
			return true
		}
		lines, reread := file.Lines, file.BinaryOffset >= 0 || file.Incomplete
		if !reread {
			// ripgrep read the file by host path, which a swap may have
			// sent outside the root: show its lines only when the backend's
			// contained read of the file agrees with every one of them.
			shown, same, err := v.show(ctx, we.Resolved, lines, q.context)
			switch {
			case ctx.Err() != nil:
				stopErr = ctx.Err()
				return false
			case err != nil:
				// Unreadable now (a link appeared, the file went): left
				// out, as ripgrep leaves out what it cannot read.
				return true
			case !same:
				// The file is not what ripgrep read: search what the
				// backend reads instead.
				reread = true
			}
			lines = shown
		}
		if reread {
			if fallback == nil {
				var err error
				if fallback, err = q.compile(); err != nil {
					return true
				}
			}
			r := fallback.SearchFile(ctx, streams{s.b}, we.Resolved, s.opts.MaxSearchResults)
			if r.Err != nil {
				if ctx.Err() != nil {
					stopErr = ctx.Err()
					return false
				}
				return true
			}
			lines = r.Lines
		}
		return pr.Add(s.outputPath(we.Name), lines)
	})
	if err != nil {
		return err
	}
	return stopErr
}

// countHidden counts the dot-named direct children of the walk root for
// the notice, where ripgrep, which never prints them, did the walk. It
// lists the root unless given its entries.
func (s *Set) countHidden(ctx context.Context, f *walkFilter, entries []backend.DirEntry) error {
	if entries == nil {
		var err error
		if entries, err = s.b.List(ctx, f.root.resolved); err != nil {
			return err
		}
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name, ".") {
			if _, _, _, err := f.check(ctx, backend.Join(f.root.resolved, e.Name), e); err != nil {
				return err
			}
		}
	}
	return nil
}

// rgMapper turns the paths ripgrep prints back into storage paths and
// puts them through the walk filter, so that ripgrep's output obeys the
// same containment and policy as every other walker.
type rgMapper struct {
	s *Set
	f *walkFilter
	// seenControl remembers directories with control characters in their
	// names, counted once as the built-in walk counts them.
	seenControl map[string]bool
	// ig, when set, applies the ignore rules to what ripgrep walked.
	ig *rgIgnores
}

// entry maps one printed path. ok is false when the path must not be
// shown.
func (m *rgMapper) entry(ctx context.Context, printed string) (walkEntry, bool, error) {
	base := m.f.root.resolved
	rel := strings.TrimPrefix(printed, "./")
	if rel == "" || !utf8.ValidString(rel) {
		return walkEntry{}, false, nil
	}
	if i := controlComponent(rel); i >= 0 {
		// The built-in walk counts a name with control characters once,
		// and never enters a directory so named.
		name := rel
		if j := strings.IndexByte(rel[i:], '/'); j >= 0 {
			name = rel[:i+j]
		}
		if !hiddenComponent(name) && !m.seenControl[name] {
			m.seenControl[name] = true
			m.f.countControl(backend.Join(base, name), len(name) < len(rel))
		}
		return walkEntry{}, false, nil
	}
	if hiddenComponent(rel) {
		// Only an explicit glob makes ripgrep print these; hidden
		// entries stay hidden, and were counted from the listing.
		return walkEntry{}, false, nil
	}
	actual := backend.Join(base, rel)
	if !backend.ValidPath(actual) {
		return walkEntry{}, false, nil
	}
	if m.ig != nil {
		// A file in a directory the built-in walk would not enter is left
		// out before it costs a look.
		dir, _ := backend.Split(actual)
		if ok, err := m.ig.enters(ctx, dir); err != nil || !ok {
			return walkEntry{}, false, err
		}
	}
	e, found, err := m.lookup(ctx, actual)
	if err != nil || !found {
		return walkEntry{}, false, err
	}
	we, show, _, err := m.f.check(ctx, actual, e)
	if err != nil || !show || we.Link || !we.Info.IsRegular() {
		return we, false, err
	}
	return we, m.ig == nil || m.ig.ig.keep(actual, rel, false), nil
}

// rgIgnores applies the ignore rules to the files ripgrep reports, which
// it found without reading any ignore file: each directory on the way
// from the walk root to a reported file is listed through the backend
// once and its ignore files read, as the built-in walk reads them, and a
// file is kept only when that walk would have entered its directory and
// kept it.
type rgIgnores struct {
	ig   *ignoreStack
	root string
	// dirs records whether the walk enters each directory met so far.
	dirs map[string]bool
	// lastDir is the directory listed last, and last its entries by
	// name: ripgrep reports the files of a directory together, so their
	// entries come from that listing instead of a stat each.
	lastDir string
	last    map[string]backend.DirEntry
	// listed holds the listings plan made, so none is made twice.
	listed map[string][]backend.DirEntry
}

// maxPlanListings bounds the directories plan lists before ripgrep
// starts: enough for the shallow levels where node_modules, target or a
// build directory lie, and little beside a search of the whole tree.
const maxPlanListings = 128

// plan lists the directories nearest the walk root, breadth first, up to
// maxPlanListings, reading their ignore files as the built-in walk does,
// and returns the subdirectories it found that walk would not enter
// (ignored, or denied by the policy), relative to the root, for ripgrep
// to prune. A directory the built-in walk does not enter is never entered
// by it, whatever a deeper ignore file says (as git does not descend into
// an excluded directory), so pruning it leaves out only files the filter
// of ripgrep's results would drop. f is a filter of its own, whose counts
// are not reported. Hidden and control-named directories are left to
// ripgrep, which skips the former and whose reports of the latter the
// mapper counts.
func (r *rgIgnores) plan(ctx context.Context, f *walkFilter) ([]string, error) {
	var prune []string
	queue := []string{r.root}
	for i := 0; i < len(queue) && i < maxPlanListings; i++ {
		dir := queue[i]
		entries, err := backend.ListTypes(ctx, r.ig.s.b, dir)
		switch {
		case err != nil && skippableListErr(err):
			r.dirs[dir] = false
			continue
		case errors.Is(err, backend.ErrNameTooLong):
			continue // left to enters, which meets it as before
		case err != nil:
			return nil, err
		}
		if err := r.ig.enter(ctx, dir, entries); err != nil {
			return nil, err
		}
		r.dirs[dir], r.listed[dir] = true, entries
		for _, e := range entries {
			if !e.IsDir() || strings.HasPrefix(e.Name, ".") || hasControl(e.Name) {
				continue
			}
			actual := backend.Join(dir, e.Name)
			rel := backend.Rel(r.root, actual)
			_, _, descend, err := f.check(ctx, actual, e)
			if err != nil {
				return nil, err
			}
			if descend && r.ig.keep(actual, rel, true) {
				queue = append(queue, actual)
				continue
			}
			r.dirs[actual] = false
			if utf8.ValidString(rel) {
				prune = append(prune, rel)
			}
		}
	}
	return prune, nil
}

// enters reports whether the built-in walk enters the directory dir, at
// or below the walk root, and reads its ignore files when it does.
func (r *rgIgnores) enters(ctx context.Context, dir string) (bool, error) {
	if ok, seen := r.dirs[dir]; seen {
		return ok, nil
	}
	ok := true
	if dir != r.root {
		parent, _ := backend.Split(dir)
		up, err := r.enters(ctx, parent)
		if err != nil {
			return false, err
		}
		ok = up && r.ig.keep(dir, backend.Rel(r.root, dir), true)
	}
	if ok {
		entries, err := backend.ListTypes(ctx, r.ig.s.b, dir)
		switch {
		case err != nil && skippableListErr(err):
			ok = false
		case err != nil:
			return false, err
		default:
			if err := r.ig.enter(ctx, dir, entries); err != nil {
				return false, err
			}
			r.lastDir, r.last = dir, make(map[string]backend.DirEntry, len(entries))
			for _, e := range entries {
				r.last[e.Name] = e
			}
		}
	}
	r.dirs[dir] = ok
	return ok, nil
}

// lookup returns the entry of the storage path actual as it is now, or
// false when there is none.
func (m *rgMapper) lookup(ctx context.Context, actual string) (backend.DirEntry, bool, error) {
	dir, name := backend.Split(actual)
	if m.ig != nil && m.ig.lastDir != dir && m.ig.listed[dir] != nil {
		m.ig.lastDir, m.ig.last = dir, make(map[string]backend.DirEntry, len(m.ig.listed[dir]))
		for _, e := range m.ig.listed[dir] {
			m.ig.last[e.Name] = e
		}
	}
	if m.ig != nil && m.ig.last != nil && m.ig.lastDir == dir {
		e, ok := m.ig.last[name]
		return e, ok, nil
	}
	info, err := backend.Stat(ctx, m.s.b, actual)
	if err != nil {
		if ctx.Err() != nil {
			return backend.DirEntry{}, false, ctx.Err()
		}
		return backend.DirEntry{}, false, nil
	}
	return backend.DirEntry{Name: name, Type: info.Mode.Type(), Size: info.Size, ModTime: info.ModTime}, true, nil
}

// controlComponent returns the index of the first component of rel with
// a control character, or -1.
func controlComponent(rel string) int {
	start := 0
	for i := 0; i <= len(rel); i++ {
		if i == len(rel) || rel[i] == '/' {
			if hasControl(rel[start:i]) {
				return start
			}
			start = i + 1
		}
	}
	return -1
}

// startsBinary reports whether storage file name holds a NUL in its
// first bytes, which makes it binary to both engines. A file that cannot
// be read is not reported binary: the search meets the error itself.
func (s *Set) startsBinary(ctx context.Context, name string) bool {
	r, err := s.b.OpenRead(ctx, name)
	if err != nil {
		return false
	}
	defer r.Close()
	head := make([]byte, binaryPrefix)
	n, _ := io.ReadFull(contextReader{ctx, r}, head)
	return isBinaryPrefix(head[:n])
}

// builtinGrep searches with the built-in engine, selecting files as
// ripgrep would (see listfiles.go).
func (s *Set) builtinGrep(ctx context.Context, f *walkFilter, q grepQuery, info backend.FileInfo, pr *textsearch.Printer) error {
	m, err := q.compile()
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return s.searchOne(ctx, m, f.root, s.opts.MaxSearchResults, pr)
	}
	files, err := s.selectFiles(ctx, f, q.sel)
	if err != nil {
		return err
	}
	return s.searchAll(ctx, m, files, s.opts.MaxSearchResults, pr)
}

// lineVerifier checks ripgrep's matching lines against the file as the
// backend reads it, and reads their context lines. It reuses one read
// buffer for every file and keeps of each line only what can be
// displayed, so memory stays bounded.
type lineVerifier struct {
	b    backend.Reader
	br   *bufio.Reader
	line []byte
}

// verifyBuffer is the size of the verifier's read buffer.
const verifyBuffer = 64 << 10

// verifyKeep is how many bytes of a line are compared: enough to display
// textsearch.DefaultMaxColumns characters and show that the line is
// longer, as the rg package keeps of the lines it reports, after a byte
// order mark.
var verifyKeep = textsearch.DisplayBytes(0) + len(textsearch.UTF8BOM)

func newLineVerifier(b backend.Reader) *lineVerifier {
	return &lineVerifier{b: b}
}

// show returns the lines grep shows for matches, ripgrep's matching
// lines of the storage file name in increasing line order: each match
// and up to context lines before and after it, displayed from the file
// as the backend reads it. same is false when the file does not agree
// with ripgrep: a match's line displays differently or is missing, or
// the file's first textsearch.BinaryPrefix bytes hold a NUL (ripgrep may
// report a file's first lines before it reaches a NUL). It reads the
// file only up to the context after the last match. An error is the
// open's or the read's.
func (v *lineVerifier) show(ctx context.Context, name string, matches []textsearch.Line, context int) (lines []textsearch.Line, same bool, err error) {
	if len(matches) == 0 {
		return nil, true, nil
	}
	r, err := v.b.OpenRead(ctx, name)
	if err != nil {
		return nil, false, err
	}
	defer r.Close()
	if v.br == nil {
		v.br = bufio.NewReaderSize(r, verifyBuffer)
	} else {
		v.br.Reset(r)
	}
	defer v.br.Reset(nil)
	head, err := v.br.Peek(binaryPrefix)
	switch {
	case isBinaryPrefix(head):
		return nil, false, nil
	case err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull):
		return nil, false, err
	}
	next, after := 0, 0 // the index in matches of the next match; the last line of context after a match
	for n := 1; next < len(matches) || n <= after; n++ {
		if next < len(matches) && matches[next].Number < n {
			return nil, false, nil // out of order or repeated
		}
		if n&1023 == 1 {
			if err := ctx.Err(); err != nil {
				return nil, false, err
			}
		}
		match := next < len(matches) && matches[next].Number == n
		keep := match || n <= after || (next < len(matches) && matches[next].Number-n <= context)
		ok, err := v.next(keep)
		switch {
		case err != nil:
			return nil, false, err
		case !ok && next < len(matches):
			return nil, false, nil
		case !ok:
			return lines, true, nil
		case !keep:
			continue
		}
		text := v.line
		if n == 1 {
			// ripgrep leaves out a UTF-8 byte order mark.
			text = bytes.TrimPrefix(text, []byte(textsearch.UTF8BOM))
		}
		shown := textsearch.Display(text, 0)
		if match {
			if shown != matches[next].Text {
				return nil, false, nil
			}
			next++
			after = n + context
		}
		lines = append(lines, textsearch.Line{Number: n, Text: shown, Match: match})
	}
	return lines, true, nil
}

// next reads the next line, split on "\n" only, keeping at most
// verifyKeep bytes of it in v.line when keep is set. It reports false
// when the file has no more lines.
func (v *lineVerifier) next(keep bool) (bool, error) {
	v.line = v.line[:0]
	empty := true
	for {
		chunk, err := v.br.ReadSlice('\n')
		if len(chunk) > 0 {
			empty = false
		}
		if err == nil {
			chunk = chunk[:len(chunk)-1]
		}
		if keep && len(v.line) < verifyKeep {
			v.line = append(v.line, chunk[:min(len(chunk), verifyKeep-len(v.line))]...)
		}
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF:
			return !empty, nil
		}
		return false, err
	}
}
