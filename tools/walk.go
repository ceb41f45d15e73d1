package tools

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/fencefs/fencefs/backend"
)

// The walkers (search_files, find_files, list_files, grep) share one tree
// walk: each directory's entries sorted by name, depth first, as ripgrep's
// --sort path orders them, every entry judged by the walk filter.
//
// Where the walked directory is on local disk (or the backend has no
// Walker), the walk lists one directory at a time as it goes: on local
// disk a listing is a few cheap system calls, the output streams in order
// (a capped walker stops early), and hidden, denied or pruned directories
// are never listed. Elsewhere the backend's Walker lists the whole tree
// in one pass (one request per 1000 keys on
// S3), skipping the directories no walker may enter, and the walk then
// runs over that listing, sorted here because a Walker's order is
// unspecified.

// errStopWalk ends a walk early without an error, once a walker has all
// the output it can show.
var errStopWalk = errors.New("tools: walk stopped")

// childLister returns the entries of a directory, in any order.
type childLister func(ctx context.Context, dir string) ([]backend.DirEntry, error)

// walkVisit is called for each entry of a walk. rel is the entry's path
// below the walk root. It returns whether a directory may be entered
// (ignored when the filter already refused to descend).
type walkVisit func(we walkEntry, rel string, show bool) (enter bool, err error)

// stateVisit is a walkVisit that also receives the state of the entry's
// directory and returns the state of the entry, which its children
// receive if it is entered (find_files keeps its glob position so).
type stateVisit[S any] func(we walkEntry, rel string, show bool, parent S) (enter bool, child S, err error)

// walkHooks lets a walker look at a directory's entries before they are
// visited (list_files and grep read ignore files there).
type walkHooks struct {
	enter func(ctx context.Context, dir string, entries []backend.DirEntry) error
}

// walkPlan describes one walk.
type walkPlan[S any] struct {
	hooks walkHooks
	// prune, when set, reports that no entry below the directory rel
	// (relative to the walk root) can be of use, so a whole-tree listing
	// may skip its contents.
	prune func(rel string) bool
	// root is the state of the walk root, which its entries receive as
	// their parent's.
	root  S
	visit stateVisit[S]
}

// walk visits the tree below f's root in order. It returns nil when visit
// stopped it with errStopWalk.
func (s *Set) walk(ctx context.Context, f *walkFilter, hooks walkHooks, visit walkVisit) error {
	return walkWith(ctx, s, f, walkPlan[struct{}]{
		hooks: hooks,
		visit: func(we walkEntry, rel string, show bool, _ struct{}) (bool, struct{}, error) {
			enter, err := visit(we, rel, show)
			return enter, struct{}{}, err
		},
	})
}

// walkWith visits the tree below f's root in order, as plan says. It
// returns nil when the visit stopped it with errStopWalk.
func walkWith[S any](ctx context.Context, s *Set, f *walkFilter, plan walkPlan[S]) error {
	list, err := s.listerFor(ctx, f, plan.prune)
	if err != nil {
		return err
	}
	w := &treeWalk[S]{f: f, list: list, plan: plan, walked: listenersOf(ctx).walked}
	err = w.dir(ctx, f.root.resolved, "", 0, plan.root)
	if errors.Is(err, errStopWalk) {
		return nil
	}
	return err
}

// listerFor returns how to list the directories below f's root: when the
// backend has a Walker that does not decline and is not local disk, one
// walk of the whole tree up front, and otherwise one List per directory.
func (s *Set) listerFor(ctx context.Context, f *walkFilter, prune func(string) bool) (childLister, error) {
	_, local := s.hostDir(f.root.resolved)
	if w, ok := s.b.(backend.Walker); ok && !local {
		tree, err := s.listTree(ctx, w, f, prune)
		if err == nil {
			return func(_ context.Context, dir string) ([]backend.DirEntry, error) {
				return tree[dir], nil
			}, nil
		}
		if !errors.Is(err, backend.ErrUnsupported) {
			return nil, err
		}
	}
	return func(ctx context.Context, dir string) ([]backend.DirEntry, error) {
		// Walkers need names and types, not sizes: where the backend
		// can list without a stat per entry, it does.
		return backend.ListTypes(ctx, s.b, dir)
	}, nil
}

// listTree lists the tree below f's root with the backend's Walker, into
// a map from each directory to its entries. Directories the walk
// would never enter are skipped with fs.SkipDir (they stay listed in
// their parent), so their contents cost nothing where the Walker can
// jump over them.
func (s *Set) listTree(ctx context.Context, w backend.Walker, f *walkFilter, prune func(string) bool) (map[string][]backend.DirEntry, error) {
	root := f.root.resolved
	tree := map[string][]backend.DirEntry{}
	err := w.Walk(ctx, root, func(name string, e backend.DirEntry) error {
		dir, _ := backend.Split(name)
		tree[dir] = append(tree[dir], e)
		if !e.IsDir() {
			return nil
		}
		rel, ok := f.below(name)
		if !ok || strings.HasPrefix(e.Name, ".") || hasControl(e.Name) ||
			s.rules.CheckWalkRoot(backend.Join(f.root.written, rel), name) != nil ||
			(prune != nil && prune(rel)) {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return tree, nil
}

// treeWalk is the state of one walk.
type treeWalk[S any] struct {
	f    *walkFilter
	list childLister
	plan walkPlan[S]
	// orders holds, per depth, the buffer a directory's entries are
	// sorted in: as indexes, which move far fewer bytes than entries.
	orders [][]int32
	// walked, when set, counts the entries visited (WithWalkCounter).
	walked *atomic.Int64
	// pathBufs holds, per depth, the storage paths of the entries of the
	// directory visited there.
	pathBufs [][]string
}

// sorted returns the indexes of entries in name order, in the buffer of
// the given depth.
func (w *treeWalk[S]) sorted(entries []backend.DirEntry, depth int) []int32 {
	for len(w.orders) <= depth {
		w.orders = append(w.orders, nil)
	}
	order := w.orders[depth][:0]
	for i := range entries {
		order = append(order, int32(i))
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(entries[a].Name, entries[b].Name) })
	w.orders[depth] = order
	return order
}

// paths returns the storage path of each of the entries of dir, in the
// entries' order, in the buffer of the given depth: substrings of one
// string, not one allocation each.
func (w *treeWalk[S]) paths(dir string, entries []backend.DirEntry, depth int) []string {
	prefix := dir + "/"
	if dir == "." || dir == "" {
		prefix = ""
	}
	n := 0
	for _, e := range entries {
		n += len(prefix) + len(e.Name)
	}
	var sb strings.Builder
	sb.Grow(n)
	for _, e := range entries {
		sb.WriteString(prefix)
		sb.WriteString(e.Name)
	}
	all := sb.String()
	for len(w.pathBufs) <= depth {
		w.pathBufs = append(w.pathBufs, nil)
	}
	paths := slices.Grow(w.pathBufs[depth][:0], len(entries))[:len(entries)]
	for i, e := range entries {
		k := len(prefix) + len(e.Name)
		paths[i], all = all[:k], all[k:]
	}
	w.pathBufs[depth] = paths
	return paths
}

// dir visits the entries of the storage directory dir, relDir below the
// walk root at the given depth, whose state is state, in name order, and
// descends into the directories
// the filter and the visit let it enter.
func (w *treeWalk[S]) dir(ctx context.Context, dir, relDir string, depth int, state S) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := w.list(ctx, dir)
	if err != nil {
		switch {
		case relDir != "" && errors.Is(err, backend.ErrNameTooLong):
			// A tree deeper than the storage's path limit: the part the
			// backend cannot reach is left out, and counted.
			w.f.tooLong++
			return nil
		case relDir != "" && skippableListErr(err):
			// A directory that vanished or cannot be read mid-walk is
			// left out, as an unreadable file is.
			return nil
		}
		return err
	}
	if w.plan.hooks.enter != nil {
		if err := w.plan.hooks.enter(ctx, dir, entries); err != nil {
			return err
		}
	}
	paths := w.paths(dir, entries, depth)
	for _, i := range w.sorted(entries, depth) {
		e := entries[i]
		if w.walked != nil {
			w.walked.Add(1)
		}
		actual := paths[i]
		// rel is actual without the root and its slash: no new string.
		rel := actual
		if root := w.f.root.resolved; root != "." {
			rel = actual[len(root)+1:]
		}
		// Every directory above the entry, below the root, passed the
		// filter on the way down.
		we, show, descend, err := w.f.checkBelow(ctx, actual, e, true)
		if err != nil {
			return err
		}
		enter, child, err := w.plan.visit(we, rel, show, state)
		if err != nil {
			return err
		}
		if e.IsDir() && descend && enter {
			if err := w.dir(ctx, actual, rel, depth+1, child); err != nil {
				return err
			}
		}
	}
	return nil
}

// skippableListErr reports whether a directory listing failed for a
// reason that concerns that directory only.
func skippableListErr(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) ||
		errors.Is(err, backend.ErrNotDir) || errors.Is(err, backend.ErrSymlink) ||
		errors.Is(err, backend.ErrInvalidPath)
}

// skippableReadErr reports whether reading a file failed for a reason that
// concerns that file only; walkers leave such files out.
func skippableReadErr(err error) bool {
	return skippableListErr(err) || errors.Is(err, backend.ErrIsDir) || errors.Is(err, backend.ErrNotRegular) ||
		errors.Is(err, backend.ErrLoop) || errors.Is(err, backend.ErrNameTooLong)
}

// walkRoot resolves the path of a walker and stats it. A missing path is
// a retry error.
func (s *Set) walkRoot(ctx context.Context, tool, p string) (target, backend.FileInfo, error) {
	root, err := s.resolve(ctx, tool, p, levelSearch)
	if err != nil {
		return root, backend.FileInfo{}, err
	}
	info, err := backend.Stat(ctx, s.b, root.resolved)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, backend.ErrNotDir) {
			return root, info, retryf(KindNotFound, "Path not found: %s", p)
		}
		return root, info, s.storageErr(err, p)
	}
	return root, info, nil
}

// fileRootVisible reports whether a walker named a single file it may
// show: a regular file the read-level policy lets through.
func (s *Set) fileRootVisible(root target, info backend.FileInfo) bool {
	return info.IsRegular() && s.rules.Visible(root.written, root.resolved)
}

// finishOutput joins a walker's result lines with its cap marker and the
// filter's notices.
func finishOutput(lines []string, empty, capMarker string, notices []string) string {
	if len(lines) == 0 {
		lines = []string{empty}
	}
	n := len(capMarker) + 1
	for _, l := range lines {
		n += len(l) + 1
	}
	for _, l := range notices {
		n += len(l) + 1
	}
	// Joined by newlines as strings.Join would, without a copy of lines.
	var sb strings.Builder
	sb.Grow(n)
	for i, l := range lines {
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(l)
	}
	if capMarker != "" {
		sb.WriteString("\n" + capMarker)
	}
	for _, l := range notices {
		sb.WriteByte('\n')
		sb.WriteString(l)
	}
	return sb.String()
}
