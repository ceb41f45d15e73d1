package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/tools/internal/glob"
	"github.com/fencefs/fencefs/tools/internal/rg"
)

// list_files and grep run ripgrep where the walked directory is on local
// disk, and the built-in engine elsewhere. The built-in engine follows
// ripgrep's defaults with these ignore files, read through the backend:
// .rgignore, .ignore and .gitignore in every directory from the namespace
// root down, and .git/info/exclude (the last two only inside a git
// repository, a directory holding .git); with ripgrep's precedence (a
// glob argument first, then .rgignore, .ignore, .gitignore, exclude, the
// deepest file first within each kind). Neither engine reads ignore files
// above the namespace root (ripgrep runs with --no-ignore-parent, and the
// built-in engine walks a directory whose ancestors inside the namespace
// hold ignore rules, which that flag would hide from ripgrep), nor a
// global git excludes file. Both engines skip symlinks met during the
// walk, as ripgrep does without --follow.

// maxIgnoreFile bounds how much of one ignore file is read.
const maxIgnoreFile = 1 << 20

func (s *Set) listFilesTool() *Tool {
	return &Tool{
		Name: nameListFiles,
		Description: fmt.Sprintf("List the files under a directory, recursively, sorted by path, the way ripgrep "+
			"(rg --files) does: files excluded by .gitignore (inside a git repository), .ignore or .rgignore are "+
			"left out, and so are hidden (dot-named) entries. glob keeps only matching files (ripgrep glob syntax, "+
			"relative to path: '*.go' matches at any depth, 'src/*.go' only there; a leading '!' excludes). "+
			"At most %d files.", s.opts.MaxFindResults),
		InputSchema: objectSchema(nil,
			prop{"path", `{"type":"string","default":".","description":"Directory to list, relative to the working directory or starting with '/'."}`},
			prop{"glob", `{"type":"string","description":"Optional ripgrep glob the files must match, such as '*.py' or '!*_test.go'."}`},
		),
		Annotations: Annotations{Title: "List files", ReadOnly: true, Idempotent: true},
		call:        s.listFiles,
	}
}

func (s *Set) listFiles(ctx context.Context, raw json.RawMessage) (string, error) {
	p := "."
	var g *string
	if err := decodeArgs(raw, arg{"path", &p, false}, arg{"glob", &g, false}); err != nil {
		return "", err
	}
	sel, err := newSelection(g, nil)
	if err != nil {
		return "", err
	}
	root, info, err := s.walkRoot(ctx, nameListFiles, p)
	if err != nil {
		return "", err
	}
	f := s.newWalkFilter(root)
	f.relevant = sel.mayKeep
	limit := s.opts.MaxFindResults
	var lines []string
	truncated := false
	add := func(name string) bool {
		if len(lines) == limit {
			truncated = true
			return false
		}
		lines = append(lines, s.outputPath(name))
		return true
	}
	switch {
	case !info.IsDir():
		if s.fileRootVisible(root, info) {
			add(root.written)
		}
	default:
		var host string
		if host, err = s.ripgrepDir(ctx, root.resolved); err == nil && host != "" {
			err = s.rgListFiles(ctx, f, host, sel, add)
		} else if err == nil {
			err = s.builtinListFiles(ctx, f, sel, add)
		}
	}
	if err != nil {
		return "", s.rgErr(err, p)
	}
	capMarker := ""
	if truncated {
		capMarker = fmt.Sprintf("[... truncated at %s]", count(limit, "file", "files"))
	}
	pattern := ""
	if g != nil {
		pattern = *g
	}
	s.emit(ctx, FilesSearched{Path: s.canonical(root.resolved), Pattern: pattern, Search: "find", MatchCount: len(lines), Truncated: truncated})
	return finishOutput(lines, "No files found.", capMarker, f.notices()), nil
}

// hostDir returns the host path of a storage directory when the backend
// (or the mount it lies in) is on local disk, so ripgrep can run there.
func (s *Set) hostDir(name string) (string, bool) {
	return backend.LocalPath(s.b, name)
}

// ripgrepDir returns the host path to run ripgrep in for a walk of the
// storage directory dir, or "" when the built-in engine must walk it:
// when dir is not on local disk, or when a directory above it inside the
// namespace holds ignore rules. ripgrep runs with --no-ignore-parent, so
// that it never reads ignore files above the namespace root, and so it
// would not see those rules either.
func (s *Set) ripgrepDir(ctx context.Context, dir string) (string, error) {
	host, ok := s.hostDir(dir)
	if !ok {
		return "", nil
	}
	if dir == "." {
		return host, nil
	}
	ig, err := s.newIgnoreStack(ctx, dir, selection{})
	if err != nil {
		return "", err
	}
	for _, lv := range ig.levels {
		if lv.rgignore != nil || lv.ignore != nil || (lv.inRepo && (lv.gitignore != nil || lv.exclude != nil)) {
			return "", nil
		}
	}
	return host, nil
}

// runner returns the ripgrep runner configured by the options.
func (s *Set) runner() *rg.Runner {
	return &rg.Runner{Path: s.opts.RipgrepPath, Timeout: s.opts.RipgrepTimeout, MaxMemory: s.opts.RipgrepMaxMemory}
}

// rgErr maps the errors of a ripgrep run; anything else goes through
// storageErr.
func (s *Set) rgErr(err error, display string) error {
	var usage *rg.UsageError
	switch {
	case errors.Is(err, rg.ErrNotInstalled):
		return retryf("ripgrep (rg) is not installed. Use search_files or find_files instead.")
	case errors.Is(err, rg.ErrOutOfMemory):
		return retryf("ripgrep ran out of memory. Use search_files or find_files instead.")
	case errors.Is(err, rg.ErrTimeout):
		return retryf("ripgrep did not finish within %s. Search a smaller directory or narrow the search with glob or file_type.", s.opts.RipgrepTimeout)
	case errors.As(err, &usage) && (strings.HasPrefix(usage.Message, "regex parse error") || strings.HasPrefix(usage.Message, "the literal")):
		return retryf("Invalid regex pattern: %s", s.scrub(usage.Message))
	case errors.As(err, &usage):
		return retryf("%s", s.scrub(usage.Message))
	}
	return s.storageErr(err, display)
}

// selection is what the glob and file_type arguments of list_files and
// grep select, for both engines.
type selection struct {
	globs     []string
	overrides *glob.IgnoreRules
	fileType  string
	typeGlobs []string
}

// newSelection validates the glob and file_type arguments.
func newSelection(g, fileType *string) (selection, error) {
	var sel selection
	if g != nil && *g != "" {
		rules, _, ok := glob.ParseOverrides([]string{*g})
		if !ok || strings.IndexByte(*g, 0) >= 0 {
			return sel, retryf("Pattern '%s' is not a valid glob pattern.", *g)
		}
		sel.globs, sel.overrides = []string{*g}, rules
	}
	if fileType != nil && *fileType != "" {
		globs, ok := rg.TypeGlobs(*fileType)
		if !ok {
			return sel, retryf("Unknown file_type '%s'. Use a ripgrep type name such as 'py', 'go', 'js', 'rust' or 'md'.", *fileType)
		}
		sel.fileType, sel.typeGlobs = *fileType, globs
	}
	return sel, nil
}

// rgListFiles lists the walk root with rg --files.
func (s *Set) rgListFiles(ctx context.Context, f *walkFilter, host string, sel selection, add func(string) bool) error {
	if err := s.countHidden(ctx, f); err != nil {
		return err
	}
	m := rgMapper{s: s, f: f, seenControl: map[string]bool{}, dense: true}
	var mapErr error
	err := s.runner().Files(ctx, rg.Query{Dir: host, Globs: sel.globs}, func(printed string) bool {
		we, ok, err := m.entry(ctx, printed)
		if err != nil {
			mapErr = err
			return false
		}
		return !ok || add(we.Name)
	})
	if err != nil {
		return err
	}
	return mapErr
}

// countHidden counts the dot-named direct children of the walk root for
// the notice, where ripgrep, which never prints them, did the walk.
func (s *Set) countHidden(ctx context.Context, f *walkFilter) error {
	entries, err := s.b.List(ctx, f.root.resolved)
	if err != nil {
		return err
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
	// base is the storage directory ripgrep's relative paths start from.
	base string
	// seenControl remembers directories with control characters in their
	// names, counted once as the built-in walk counts them.
	seenControl map[string]bool
	// dense is set when ripgrep prints most files of a directory (a file
	// listing), so that listing the directory once beats a stat per file.
	dense bool
	// dir is the directory of the last path looked up, and listed its
	// entries by name once it was listed.
	dir    string
	listed map[string]backend.DirEntry
}

// entry maps one printed path. ok is false when the path must not be
// shown.
func (m *rgMapper) entry(ctx context.Context, printed string) (walkEntry, bool, error) {
	base := m.base
	if base == "" {
		base = m.f.root.resolved
	}
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
	e, found, err := m.lookup(ctx, actual)
	if err != nil || !found {
		return walkEntry{}, false, err
	}
	we, show, _, err := m.f.check(ctx, actual, e)
	if err != nil || !show || we.Link || !we.Info.IsRegular() {
		return we, false, err
	}
	return we, true, nil
}

// lookup returns the entry of the storage path actual as it is now, or
// false when there is none. ripgrep prints paths in path order, so the
// files of one directory arrive together: in a dense listing the second
// file of a directory lists it once for all the others, where each would
// otherwise be stat-ed.
func (m *rgMapper) lookup(ctx context.Context, actual string) (backend.DirEntry, bool, error) {
	dir, name := backend.Split(actual)
	if dir == m.dir && m.listed != nil {
		e, ok := m.listed[name]
		return e, ok, nil
	}
	if dir == m.dir && m.dense {
		entries, err := backend.ListTypes(ctx, m.s.b, dir)
		if err == nil {
			m.listed = make(map[string]backend.DirEntry, len(entries))
			for _, e := range entries {
				m.listed[e.Name] = e
			}
			e, ok := m.listed[name]
			return e, ok, nil
		}
		if ctx.Err() != nil {
			return backend.DirEntry{}, false, ctx.Err()
		}
	}
	m.dir, m.listed = dir, nil
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

// builtinListFiles lists the walk root with the built-in engine.
func (s *Set) builtinListFiles(ctx context.Context, f *walkFilter, sel selection, add func(string) bool) error {
	ig, err := s.newIgnoreStack(ctx, f.root.resolved, sel)
	if err != nil {
		return err
	}
	return s.walk(ctx, f, walkHooks{enter: ig.enter}, func(we walkEntry, rel string, show bool) (bool, error) {
		if we.Link {
			return false, nil
		}
		isDir := we.IsDir()
		if !ig.keep(we.Actual, rel, isDir) {
			return false, nil
		}
		if show && !isDir && we.Info.IsRegular() && !add(we.Name) {
			return false, errStopWalk
		}
		return true, nil
	})
}

// ignoreStack holds the ignore files met on the way from the namespace
// root to the directories being walked, and the glob and file_type
// selection.
type ignoreStack struct {
	s      *Set
	levels map[string]*dirIgnores
	sel    selection
}

// dirIgnores are the ignore files of one directory.
type dirIgnores struct {
	rgignore, ignore, gitignore, exclude *glob.IgnoreRules
	// inRepo: the directory or one above it holds .git.
	inRepo bool
}

// newIgnoreStack reads the ignore files of the walk root's ancestors.
func (s *Set) newIgnoreStack(ctx context.Context, root string, sel selection) (*ignoreStack, error) {
	ig := &ignoreStack{s: s, levels: map[string]*dirIgnores{}, sel: sel}
	var chain []string
	for d := root; ; {
		chain = append(chain, d)
		if d == "." {
			break
		}
		d, _ = backend.Split(d)
	}
	for i := len(chain) - 1; i >= 1; i-- {
		entries, err := s.b.List(ctx, chain[i])
		if err != nil {
			if skippableListErr(err) {
				continue
			}
			return nil, err
		}
		if err := ig.enter(ctx, chain[i], entries); err != nil {
			return nil, err
		}
	}
	return ig, nil
}

// enter reads the ignore files among a directory's entries.
func (ig *ignoreStack) enter(ctx context.Context, dir string, entries []backend.DirEntry) error {
	lv := &dirIgnores{}
	if dir != "." {
		parent, _ := backend.Split(dir)
		if p := ig.levels[parent]; p != nil {
			lv.inRepo = p.inRepo
		}
	}
	for _, e := range entries {
		var dst **glob.IgnoreRules
		switch e.Name {
		case ".git":
			lv.inRepo = true
			if e.IsDir() {
				dst = &lv.exclude
			}
		case ".rgignore":
			dst = &lv.rgignore
		case ".ignore":
			dst = &lv.ignore
		case ".gitignore":
			dst = &lv.gitignore
		}
		if dst == nil || (!e.IsRegular() && e.Name != ".git") {
			continue
		}
		name := backend.Join(dir, e.Name)
		if e.Name == ".git" {
			name += "/info/exclude"
		}
		data, err := ig.read(ctx, name)
		if err != nil {
			return err
		}
		if data != "" {
			*dst = glob.ParseIgnore(data)
		}
	}
	ig.levels[dir] = lv
	return nil
}

// read returns an ignore file's content, or "" when it cannot be read.
func (ig *ignoreStack) read(ctx context.Context, name string) (string, error) {
	r, err := ig.s.b.OpenRead(ctx, name)
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", nil
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, maxIgnoreFile))
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", nil
	}
	return string(data), nil
}

// keep judges an entry at the storage path actual (rel below the walk
// root) as ripgrep would: the glob argument first, then the ignore files
// by kind and depth, then the file type.
func (ig *ignoreStack) keep(actual, rel string, isDir bool) bool {
	if o := ig.sel.overrides; o != nil {
		switch o.MatchOverride(rel, isDir) {
		case glob.Allow:
			return true
		case glob.Ignore:
			return false
		}
	}
	if ig.ignored(actual, isDir) {
		return false
	}
	return isDir || ig.sel.typeSelects(actual)
}

// ignored applies the ignore files to actual.
func (ig *ignoreStack) ignored(actual string, isDir bool) bool {
	kinds := []func(*dirIgnores) *glob.IgnoreRules{
		func(l *dirIgnores) *glob.IgnoreRules { return l.rgignore },
		func(l *dirIgnores) *glob.IgnoreRules { return l.ignore },
		func(l *dirIgnores) *glob.IgnoreRules {
			if l.inRepo {
				return l.gitignore
			}
			return nil
		},
		func(l *dirIgnores) *glob.IgnoreRules {
			if l.inRepo {
				return l.exclude
			}
			return nil
		},
	}
	for _, kind := range kinds {
		for dir := actual; dir != "."; {
			dir, _ = backend.Split(dir)
			lv := ig.levels[dir]
			if lv == nil {
				continue
			}
			rules := kind(lv)
			if rules == nil {
				continue
			}
			switch rules.Match(backend.Rel(dir, actual), isDir) {
			case glob.Ignore:
				return true
			case glob.Allow:
				return false
			}
		}
	}
	return false
}
