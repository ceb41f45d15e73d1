package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/tools/internal/glob"
)

func (s *Set) findFilesTool() *Tool {
	return &Tool{
		Name: nameFindFiles,
		Description: fmt.Sprintf("Find files and directories whose path matches a glob pattern, relative to path. "+
			"'*', '?' and '[abc]' ('[!abc]' negates) match within one path component; a '**' component spans "+
			"directories: '*.go' finds Go files directly in path, '**/*.go' at any depth, 'src/**/test_*.py' below src. "+
			"'{a,b}' lists alternatives; a trailing '/' finds directories only. Output is sorted, directories end "+
			"with '/', at most %d results. Hidden (dot-named) entries are skipped unless path names one.", s.opts.MaxFindResults),
		InputSchema: objectSchema([]string{"pattern"},
			prop{"pattern", `{"type":"string","description":"Glob pattern relative to path, such as '**/*.md'."}`},
			prop{"path", `{"type":"string","default":".","description":"Directory to search, relative to the working directory or starting with '/'."}`},
		),
		Annotations: Annotations{Title: "Find files", ReadOnly: true, Idempotent: true},
	}
}

func (s *Set) findFiles(ctx context.Context, raw json.RawMessage) (string, error) {
	var pattern string
	p := "."
	if err := decodeArgs(raw, arg{"pattern", &pattern, true}, arg{"path", &p, false}); err != nil {
		return "", err
	}
	pat, err := glob.Compile(pattern)
	switch {
	case errors.Is(err, glob.ErrAbsolute):
		return "", retryf(KindInvalid, "Pattern '%s' must be relative to the search path, not absolute.", pattern)
	case err != nil:
		return "", retryf(KindInvalid, "Pattern '%s' is not a valid glob pattern.", pattern)
	}
	root, info, err := s.walkRoot(ctx, nameFindFiles, p)
	if err != nil {
		return "", err
	}
	if !info.IsDir() {
		return "", retryf(KindNotDir, "Not a directory: %s", p)
	}
	f := s.newWalkFilter(root)
	f.relevant = func(rel string, isDir bool) bool {
		st := pat.Start().Step(rel)
		return (st.Matched() && (isDir || !pat.DirOnly())) || (isDir && st.Alive())
	}
	limit := s.opts.MaxFindResults
	var lines []string
	truncated := false
	err = walkWith(ctx, s, f, walkPlan[glob.State]{
		prune: func(rel string) bool { return !pat.CanDescend(rel) },
		root:  pat.Start(),
		visit: func(we walkEntry, rel string, show bool, parent glob.State) (bool, glob.State, error) {
			// One component step per entry: the directory's State holds
			// where its path stands in the pattern.
			_, base := backend.Split(rel)
			st := parent.Step(base)
			if show && st.Matched() && (!pat.DirOnly() || we.IsDir()) {
				if len(lines) == limit {
					truncated = true
					return false, st, errStopWalk
				}
				out := s.outputPath(we.Name)
				if we.IsDir() {
					out += "/"
				}
				lines = append(lines, out)
			}
			return st.Alive(), st, nil
		},
	})
	if err != nil {
		return "", s.storageErr(err, p)
	}
	capMarker := ""
	if truncated {
		capMarker = fmt.Sprintf("[... truncated at %s]", count(limit, "match", "matches"))
	}
	s.emit(ctx, FilesSearched{Path: s.canonical(root.resolved), Pattern: pattern, Search: "find", MatchCount: len(lines), Truncated: truncated})
	return finishOutput(lines, "No matches found.", capMarker, f.notices()), nil
}
