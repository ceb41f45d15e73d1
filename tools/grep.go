package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

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
		call:        s.grep,
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
		return "", retryf("Invalid context %d: context must be between 0 and %d.", q.context, textsearch.MaxContext)
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
	pr := textsearch.NewPrinter(s.opts.MaxSearchResults, q.context > 0)
	switch host, local := s.hostDir(root.resolved); {
	case !info.IsDir() && !s.fileRootVisible(root, info):
	case local && !info.IsDir():
		err = s.rgGrep(ctx, f, q, false, host, pr)
	default:
		if host, err = s.ripgrepDir(ctx, root.resolved); err == nil && host != "" {
			err = s.rgGrep(ctx, f, q, true, host, pr)
		} else if err == nil {
			err = s.builtinGrep(ctx, f, q, info.IsDir(), pr)
		}
	}
	if err != nil {
		return "", s.rgErr(err, p)
	}
	capMarker := ""
	if pr.Truncated() {
		capMarker = fmt.Sprintf("[... truncated at %d lines]", s.opts.MaxSearchResults)
	}
	s.emit(ctx, FilesSearched{Path: s.canonical(root.resolved), Pattern: q.pattern, Search: "grep", MatchCount: pr.Matches(), Truncated: pr.Truncated()})
	var lines []string
	if out := pr.String(); out != "" {
		lines = []string{out}
	}
	return finishOutput(lines, "No matches found.", capMarker, f.notices()), nil
}

// compile builds the built-in engine's matcher for q. A pattern with a
// line break is refused as ripgrep refuses it, so the engines agree.
func (q grepQuery) compile() (*textsearch.Matcher, error) {
	m, err := textsearch.Compile(q.pattern, textsearch.Options{IgnoreCase: q.ignoreCase, Literal: q.literal, Context: q.context})
	if err != nil {
		return nil, retryf("Invalid regex pattern: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	if m.HasNewline() {
		return nil, retryf("Invalid regex pattern: the pattern matches a line break, but grep matches one line at a time.")
	}
	return m, nil
}

// rgGrep searches with ripgrep. A file in which ripgrep met a NUL byte is
// binary when the NUL lies in its first 8192 bytes and left out; past
// that, ripgrep stopped early, so the file is searched again with the
// built-in engine to show all of it.
func (s *Set) rgGrep(ctx context.Context, f *walkFilter, q grepQuery, dir bool, host string, pr *textsearch.Printer) error {
	rq := rg.SearchQuery{Query: rg.Query{Dir: host, Globs: q.sel.globs, Type: q.sel.fileType},
		Pattern: q.pattern, IgnoreCase: q.ignoreCase, Literal: q.literal, Context: q.context}
	m := rgMapper{s: s, f: f, seenControl: map[string]bool{}}
	single := ""
	if dir {
		if err := s.countHidden(ctx, f); err != nil {
			return err
		}
	} else {
		// A single file: ripgrep runs in its directory, on its name,
		// and ignores neither glob nor type, as for any path it is given.
		parent, base := backend.Split(f.root.resolved)
		var ok bool
		if rq.Dir, ok = s.hostDir(parent); !ok {
			return s.builtinGrep(ctx, f, q, false, pr)
		}
		rq.Paths, rq.Globs, rq.Type = []string{base}, nil, ""
		single = "./" + base
	}
	var fallback *textsearch.Matcher
	var stopErr error
	err := s.runner().Search(ctx, rq, func(file rg.File) bool {
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
		lines := file.Lines
		if file.BinaryOffset >= 0 {
			if fallback == nil {
				var err error
				if fallback, err = q.compile(); err != nil {
					return true
				}
			}
			r := fallback.SearchFile(ctx, s.b, we.Resolved, s.opts.MaxSearchResults)
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

// builtinGrep searches with the built-in engine, selecting files as
// ripgrep would (see listfiles.go).
func (s *Set) builtinGrep(ctx context.Context, f *walkFilter, q grepQuery, dir bool, pr *textsearch.Printer) error {
	m, err := q.compile()
	if err != nil {
		return err
	}
	if !dir {
		return s.searchOne(ctx, m, f.root, s.opts.MaxSearchResults, pr)
	}
	ig, err := s.newIgnoreStack(ctx, f.root.resolved, q.sel)
	if err != nil {
		return err
	}
	var walkErr error
	files := func(yield func(fileJob) bool) {
		walkErr = s.walk(ctx, f, walkHooks{enter: ig.enter}, func(we walkEntry, rel string, show bool) (bool, error) {
			if we.Link {
				return false, nil
			}
			isDir := we.IsDir()
			if !ig.keep(we.Actual, rel, isDir) {
				return false, nil
			}
			if show && !isDir && we.Info.IsRegular() && !yield(fileJob{we.Resolved, we.Name, we.Info.Size}) {
				return false, errStopWalk
			}
			return true, nil
		})
	}
	return s.searchAll(ctx, m, walkedFiles{seq: files, err: &walkErr}, s.opts.MaxSearchResults, pr)
}
