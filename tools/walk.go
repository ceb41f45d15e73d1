package tools

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"

	"github.com/fencefs/fencefs/backend"
)

// The walkers (search_files, find_files, list_files, grep) share one tree
// walk: each directory's entries sorted by name, depth first, as ripgrep's
// --sort path orders them, every entry judged by the walk filter.

// errStopWalk ends a walk early without an error, once a walker has all
// the output it can show.
var errStopWalk = errors.New("tools: walk stopped")

// childLister returns the entries of a directory, sorted by name.
type childLister func(ctx context.Context, dir string) ([]backend.DirEntry, error)

// walkVisit is called for each entry of a walk. rel is the entry's path
// below the walk root. It returns whether a directory may be entered
// (ignored when the filter already refused to descend).
type walkVisit func(we walkEntry, rel string, show bool) (enter bool, err error)

// walkHooks lets a walker look at a directory's entries before they are
// visited (list_files and grep read ignore files there).
type walkHooks struct {
	enter func(ctx context.Context, dir string, entries []backend.DirEntry) error
}

// listerFor returns how to list the directories below root: one List per
// directory, or, when the backend has a Walker, one walk of the whole tree
// up front, sorted here because a Walker's order is unspecified.
func (s *Set) listerFor(ctx context.Context, root string) (childLister, error) {
	if _, ok := s.b.(backend.Walker); !ok {
		return func(ctx context.Context, dir string) ([]backend.DirEntry, error) {
			entries, err := s.b.List(ctx, dir)
			if err != nil {
				return nil, err
			}
			backend.SortEntries(entries)
			return entries, nil
		}, nil
	}
	tree := map[string][]backend.DirEntry{}
	err := backend.Walk(ctx, s.b, root, func(name string, e backend.DirEntry) error {
		dir, _ := backend.Split(name)
		tree[dir] = append(tree[dir], e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, entries := range tree {
		backend.SortEntries(entries)
	}
	return func(_ context.Context, dir string) ([]backend.DirEntry, error) {
		return tree[dir], nil
	}, nil
}

// walk visits the tree below f's root in order. It returns nil when visit
// stopped it with errStopWalk.
func (s *Set) walk(ctx context.Context, f *walkFilter, hooks walkHooks, visit walkVisit) error {
	list, err := s.listerFor(ctx, f.root.resolved)
	if err != nil {
		return err
	}
	err = s.walkDir(ctx, f, list, hooks, f.root.resolved, "", visit)
	if errors.Is(err, errStopWalk) {
		return nil
	}
	return err
}

func (s *Set) walkDir(ctx context.Context, f *walkFilter, list childLister, hooks walkHooks, dir, relDir string, visit walkVisit) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := list(ctx, dir)
	if err != nil {
		if relDir != "" && skippableListErr(err) {
			// A directory that vanished or cannot be read mid-walk is
			// left out, as an unreadable file is.
			return nil
		}
		return err
	}
	if hooks.enter != nil {
		if err := hooks.enter(ctx, dir, entries); err != nil {
			return err
		}
	}
	for _, e := range entries {
		actual := backend.Join(dir, e.Name)
		rel := e.Name
		if relDir != "" {
			rel = relDir + "/" + e.Name
		}
		we, show, descend, err := f.check(ctx, actual, e)
		if err != nil {
			return err
		}
		enter, err := visit(we, rel, show)
		if err != nil {
			return err
		}
		if e.IsDir() && descend && enter {
			if err := s.walkDir(ctx, f, list, hooks, actual, rel, visit); err != nil {
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
			return root, info, retryf("Path not found: %s", p)
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
	out := slices.Clone(lines)
	if len(out) == 0 {
		out = append(out, empty)
	}
	if capMarker != "" {
		out = append(out, capMarker)
	}
	out = append(out, notices...)
	return strings.Join(out, "\n")
}
