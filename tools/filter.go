package tools

// Shared walk-entry filtering. Contract for the walker files (walk.go,
// search.go, find.go, listfiles.go, grep.go), all in package tools:
//
// Constructors (called by Set.build in tools.go):
//
//	func (s *Set) searchFilesTool() *Tool
//	func (s *Set) findFilesTool() *Tool
//	func (s *Set) listFilesTool() *Tool
//	func (s *Set) grepTool() *Tool
//
// A Tool sets Name, Description, InputSchema, Annotations and
// call func(ctx, json.RawMessage) (string, error).
//
// Building blocks:
//
//	decodeArgs(raw, arg{name, dst, required}...) error   // strict JSON; dst *string, *int, *bool or **T
//	s.resolve(ctx, tool, path, levelSearch) (target, error) // walk root: containment, denied patterns, Permission(OpSearch)
//	    target{display, written, resolved string}           // as written / lexical storage path / symlink-resolved
//	s.storageErr(err, display) error                      // backend error -> *RetryError or fatal
//	s.newWalkFilter(root target) *walkFilter
//	f.check(ctx, actual, entry) (walkEntry, show, descend bool, err error)
//	    actual: the entry's storage path below root.resolved (what backend.Walk/List give)
//	    show: the walker may print the entry (and read it, at walkEntry.Resolved)
//	    descend: a real directory (never a symlink) worth entering; may be true when show is false
//	    err: only cancellation or a fatal storage failure
//	f.notices() []string  // trailing lines: hidden entries, control-character names (append after the cap marker)
//	s.outputPath(we.Name) // how a walker prints a path (relative to Cwd with "..", or rooted)
//	s.canonical(storagePath) // event paths (FilesSearched.Path = s.canonical(root.resolved))
//	s.emit(ctx, FilesSearched{...})
//	s.opts.MaxSearchResults, s.opts.MaxFindResults, s.opts.RipgrepPath, s.opts.RipgrepTimeout
//	s.b (backend.Backend), s.hostRoot (local root, "" if none; never shown)
//	isBinaryPrefix(p []byte) bool, displayText(b []byte) string (one U+FFFD per invalid byte)

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/policy"
	"github.com/fencefs/fencefs/tools/internal/glob"
)

// walkFilter decides, entry by entry, what a walker may show, and counts
// what it left out for the trailing notices. One walkFilter serves one
// walk; it is not safe for concurrent use.
type walkFilter struct {
	s    *Set
	root target
	// relevant, when set, reports whether an entry directly below the
	// root (rel, a directory or not) could be part of the walker's result
	// by its pattern or glob; a directory could when something below it
	// could. Only hidden entries that could are counted.
	relevant func(rel string, isDir bool) bool
	// hidden counts dot-named direct children of the root that the
	// policy would show and the walker could have shown.
	hidden int
	// control counts entries whose names hold control characters and
	// that the policy would show.
	control int
	// tooLong counts directories whose paths exceed the storage's limit.
	tooLong int
}

// walkEntry is an entry a walker met, with what it leads to.
type walkEntry struct {
	// Name is the entry's storage path as listed: below the walk root as
	// the caller wrote it (root.written), for policy and output.
	Name string
	// Actual is the entry's storage path on the backend, below
	// root.resolved.
	Actual string
	// Resolved is the storage path the entry leads to: Actual, or a
	// symlink's target.
	Resolved string
	// Info describes Resolved (a symlink's target, not the link).
	Info backend.FileInfo
	// Link is set when the entry is a symlink.
	Link bool
}

// IsDir reports whether the entry is, or links to, a directory.
func (e walkEntry) IsDir() bool { return e.Info.IsDir() }

// newWalkFilter starts the filtering of a walk of root.
func (s *Set) newWalkFilter(root target) *walkFilter {
	return &walkFilter{s: s, root: root}
}

// check judges the entry e found at the storage path actual below the
// walk root: dot-named components below the root are skipped (and counted
// for direct children), names with control characters are skipped and
// counted, special files are skipped, symlinks are resolved and dropped
// when they lead outside, loop or dangle, and what is left must pass the
// read-level policy as listed and as resolved. descend is set for real
// directories that are neither hidden nor denied: entries below them may
// be visible even when the directory itself is not (allowed patterns name
// files).
func (f *walkFilter) check(ctx context.Context, actual string, e backend.DirEntry) (we walkEntry, show, descend bool, err error) {
	return f.checkBelow(ctx, actual, e, false)
}

// checkBelow is check; walked tells that every directory between the
// walk root and the entry passed check and was descended into (a tree
// walk's entries), so that only the entry's own name can be hidden or
// hold a control character.
func (f *walkFilter) checkBelow(ctx context.Context, actual string, e backend.DirEntry, walked bool) (we walkEntry, show, descend bool, err error) {
	rel, ok := f.below(actual)
	if !ok {
		return we, false, false, nil
	}
	name := actual
	if f.root.written != f.root.resolved {
		name = backend.Join(f.root.written, rel)
	}
	we = walkEntry{Name: name, Actual: actual, Resolved: actual, Info: e.Info()}
	if hasControl(e.Name) {
		f.countControl(actual, e.IsDir())
		return we, false, false, nil
	}
	if !walked && hasControl(rel) {
		return we, false, false, nil
	}
	if walked && strings.HasPrefix(e.Name, ".") || !walked && hiddenComponent(rel) {
		if !strings.Contains(rel, "/") {
			counted, err := f.wouldShow(ctx, we, rel, e)
			if err != nil {
				return we, false, false, err
			}
			if counted {
				f.hidden++
			}
		}
		return we, false, false, nil
	}
	switch {
	case e.IsSymlink():
		if ok, err := f.followLink(ctx, &we); !ok || err != nil {
			return we, false, false, err
		}
	case e.IsDir():
		descend = f.s.rules.CheckWalkRoot(we.Name, actual) == nil
	case !e.IsRegular():
		return we, false, false, nil
	}
	return we, f.s.rules.Visible(we.Name, we.Resolved), descend, nil
}

// countControl counts an entry whose name holds a control character, at
// the storage path actual, when the policy would show it: a denied entry
// is invisible, not omitted. A link is judged by its name alone, since
// walkers never follow a link so named.
func (f *walkFilter) countControl(actual string, isDir bool) {
	name := actual
	if rel, ok := f.below(actual); ok && f.root.written != f.root.resolved {
		name = backend.Join(f.root.written, rel)
	}
	if f.policyShows(name, actual, isDir) {
		f.control++
	}
}

// policyShows reports whether the policy lets a walker show an entry
// listed as name, at resolved: a directory when it is not denied (its
// files may be allowed even when it is not), anything else when it may be
// read.
func (f *walkFilter) policyShows(name, resolved string, isDir bool) bool {
	if isDir {
		return f.s.rules.CheckWalkRoot(name, resolved) == nil
	}
	return f.s.rules.Visible(name, resolved)
}

// wouldShow reports whether the hidden entry we (rel below the root)
// would have been part of the result were it not hidden: the walker's
// pattern could select it, and the policy would show it (a link only when
// it leads to a file or directory inside the root). So a notice never
// counts a denied entry, nor one the walker was not looking for.
func (f *walkFilter) wouldShow(ctx context.Context, we walkEntry, rel string, e backend.DirEntry) (bool, error) {
	isDir := e.IsDir()
	if e.IsSymlink() {
		ok, err := f.followLink(ctx, &we)
		if !ok || err != nil {
			return false, err
		}
		isDir = we.IsDir()
	} else if !isDir && !e.IsRegular() {
		return false, nil
	}
	if f.relevant != nil && !f.relevant(rel, isDir) {
		return false, nil
	}
	return f.policyShows(we.Name, we.Resolved, isDir), nil
}

// below returns the part of actual below the walk root.
func (f *walkFilter) below(actual string) (string, bool) {
	root := f.root.resolved
	if root == "." {
		return actual, actual != "."
	}
	if !strings.HasPrefix(actual, root+"/") {
		return "", false
	}
	return actual[len(root)+1:], true
}

// followLink resolves a symlink entry in place. It reports false for a
// link that leads outside, loops, dangles or leads to a special file.
func (f *walkFilter) followLink(ctx context.Context, we *walkEntry) (bool, error) {
	we.Link = true
	if f.s.links == nil {
		return false, nil
	}
	// A link whose chain steps into a denied directory is invisible, as
	// the entries of that directory are, wherever the chain then leads.
	ask := f.s.opts.Permission != nil
	var visit func(string) error
	var stepped []string
	if f.s.hasDenied() || ask {
		visit = func(hop string) error {
			if f.s.hopDenied(hop) != nil {
				return errHopDenied
			}
			if ask {
				stepped = append(stepped, hop)
			}
			return nil
		}
	}
	resolved, err := f.s.links.TraceSymlinks(ctx, we.Actual, visit)
	if err != nil {
		return false, ctx.Err()
	}
	if ask {
		if ok, err := f.permitted(ctx, we.Name, resolved, stepped); !ok || err != nil {
			return false, err
		}
	}
	info, err := backend.Stat(ctx, f.s.b, resolved)
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, backend.ErrNotDir) || f.s.pathErr(err, "") != nil {
			return false, nil
		}
		return false, f.s.fatal(err)
	}
	if !info.IsDir() && !info.IsRegular() {
		return false, nil
	}
	we.Resolved, we.Info = resolved, info
	return true, nil
}

// permitted asks the Permission hook about a link the walk follows, as it
// was asked about the walk root: the target, with the entry as listed and
// every path its chain stepped on as Request.Via, so that a link inside a
// scope cannot lead a walker out of it. A refusal hides the entry (an
// approver asked about searches is asked once per link followed); other
// errors of the hook are fatal, as they are at the root.
func (f *walkFilter) permitted(ctx context.Context, name, resolved string, stepped []string) (bool, error) {
	via := []string{f.s.canonical(name)}
	for _, h := range stepped {
		if h != name && h != resolved {
			via = append(via, f.s.canonical(h))
		}
	}
	err := f.s.opts.Permission.Check(ctx, policy.Request{Tool: f.root.tool, Operation: f.root.op, Path: f.s.canonical(resolved), Via: via})
	var d *policy.Denied
	var r *RetryError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &d), errors.As(err, &r):
		return false, nil
	}
	return false, err
}

// errHopDenied ends the resolution of a walk entry's link at a path the
// denied patterns hide.
var errHopDenied = errors.New("tools: a link's chain steps into a denied path")

// notices returns the lines a walker appends to its output for what the
// filter left out.
func (f *walkFilter) notices() []string {
	var out []string
	if f.hidden > 0 {
		out = append(out, fmt.Sprintf("[%s omitted; name a hidden path explicitly to include it]", count(f.hidden, "hidden entry", "hidden entries")))
	}
	if f.control > 0 {
		out = append(out, fmt.Sprintf("[%s with control characters in their names omitted]", count(f.control, "entry", "entries")))
	}
	if f.tooLong == 1 {
		out = append(out, "[1 directory omitted: its path is longer than the storage allows]")
	} else if f.tooLong > 1 {
		out = append(out, fmt.Sprintf("[%d directories omitted: their paths are longer than the storage allows]", f.tooLong))
	}
	return out
}

// mayKeep reports whether the glob and file type of a list_files or grep
// call could select the entry rel below the walk root (a directory when
// they do not exclude it, as ripgrep then still enters it). Ignore files
// are not consulted: a hidden entry they ignore may still be counted.
func (sel selection) mayKeep(rel string, isDir bool) bool {
	if o := sel.overrides; o != nil && o.MatchOverride(rel, isDir) == glob.Ignore {
		return false
	}
	return isDir || sel.typeSelects(rel)
}

// typeSelects reports whether the file type of the selection, if any,
// takes the file at the path name.
func (sel selection) typeSelects(name string) bool {
	if sel.typeGlobs == nil {
		return true
	}
	_, base := backend.Split(name)
	for _, g := range sel.typeGlobs {
		if ok, _ := doublestar.Match(g, base); ok {
			return true
		}
	}
	return false
}

// hiddenComponent reports whether a component of the relative path rel
// starts with a dot.
func hiddenComponent(rel string) bool {
	return strings.HasPrefix(rel, ".") || strings.Contains(rel, "/.")
}
