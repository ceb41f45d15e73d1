package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/tools/internal/glob"
	"github.com/fencefs/fencefs/tools/internal/rg"
)

// list_files and grep select files the way ripgrep does by default, with
// these ignore files, read through the backend: .rgignore, .ignore and
// .gitignore in every directory from the namespace root down, and
// .git/info/exclude (the last two only inside a git repository, a
// directory holding .git); with ripgrep's precedence (a glob argument
// first, then .rgignore, .ignore, .gitignore, exclude, the deepest file
// first within each kind). Only regular files count as ignore files, and
// nothing outside the namespace is read: no ignore file above its root,
// no global git excludes file, no gitdir a .git file names. Symlinks met
// during the walk are skipped, as ripgrep does without --follow.
// list_files always walks with the built-in engine. grep runs ripgrep
// where the walk root is on local disk, which reads no ignore file of
// its own: every file it reports is put through the same walk filter
// and ignore rules (rgIgnores in grep.go), so both engines select the
// same files. Before ripgrep starts, the shallow directories are listed
// with those rules, and the directories there the built-in walk would
// not enter are given to ripgrep to prune (rgIgnores.plan), so an
// ignored node_modules costs ripgrep nothing.

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
		err = s.builtinListFiles(ctx, f, sel, add)
	}
	if err != nil {
		return "", s.storageErr(err, p)
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

// runner returns the ripgrep runner configured by the options.
func (s *Set) runner() *rg.Runner {
	return &rg.Runner{Path: s.opts.RipgrepPath, Timeout: s.opts.RipgrepTimeout, MaxMemory: s.opts.RipgrepMaxMemory, Slots: s.opts.RipgrepSlots}
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
			return sel, retryf(KindInvalid, "Pattern '%s' is not a valid glob pattern.", *g)
		}
		sel.globs, sel.overrides = []string{*g}, rules
	}
	if fileType != nil && *fileType != "" {
		globs, ok := rg.TypeGlobs(*fileType)
		if !ok {
			return sel, retryf(KindInvalid, "Unknown file_type '%s'. Use a ripgrep type name such as 'py', 'go', 'js', 'rust' or 'md'.", *fileType)
		}
		sel.fileType, sel.typeGlobs = *fileType, globs
	}
	return sel, nil
}

// builtinListFiles lists the walk root with the built-in engine.
func (s *Set) builtinListFiles(ctx context.Context, f *walkFilter, sel selection, add func(string) bool) error {
	files, err := s.selectFiles(ctx, f, sel)
	if err != nil {
		return err
	}
	for job := range files.seq {
		if !add(job.name) {
			break
		}
	}
	return *files.err
}

// selectFiles walks f's root and yields the regular files list_files and
// grep show, selected as ripgrep would select them (see above).
func (s *Set) selectFiles(ctx context.Context, f *walkFilter, sel selection) (walkedFiles, error) {
	ig, err := s.newIgnoreStack(ctx, f.root.resolved, sel)
	if err != nil {
		return walkedFiles{}, err
	}
	var walkErr error
	seq := func(yield func(fileJob) bool) {
		walkErr = s.walk(ctx, f, walkHooks{enter: ig.enter}, func(we walkEntry, rel string, show bool) (bool, error) {
			if we.Link {
				return false, nil
			}
			isDir := we.IsDir()
			if !ig.keep(we.Actual, rel, isDir) {
				return false, nil
			}
			if show && !isDir && we.Info.IsRegular() && !yield(fileJob{we.Resolved, we.Name, we.Info.Size, we.Info.Version}) {
				return false, errStopWalk
			}
			return true, nil
		})
	}
	return walkedFiles{seq: seq, err: &walkErr}, nil
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
		rctx := ctx
		if e.Name != ".git" {
			rctx = knownFile(ctx, name, e.Size, e.Version)
		}
		data, err := ig.read(rctx, name)
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
