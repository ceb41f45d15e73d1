package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/fencefs/fencefs/backend"
)

func (s *Set) listDirectoryTool() *Tool {
	return &Tool{
		Name: nameListDirectory,
		Description: fmt.Sprintf("List the entries of one directory (not recursive), sorted by name: directories end with '/', "+
			"files show their size. %s Hidden (dot) entries are left out "+
			"unless you name a hidden directory explicitly. Shows at most %d entries.", s.shownPaths(), s.opts.MaxListResults),
		InputSchema: objectSchema(nil,
			prop{"path", `{"type":"string","default":".","description":"The directory to list, relative to the working directory, or starting with '/'. Defaults to the working directory."}`},
		),
		Annotations: Annotations{Title: "List directory", ReadOnly: true, Idempotent: true},
		call:        s.listDirectory,
	}
}

func (s *Set) listDirectory(ctx context.Context, raw json.RawMessage) (string, error) {
	p := "."
	if err := decodeArgs(raw, arg{"path", &p, false}); err != nil {
		return "", err
	}
	t, err := s.resolve(ctx, nameListDirectory, p, levelList)
	if err != nil {
		return "", err
	}
	entries, err := s.b.List(ctx, t.resolved)
	if err != nil {
		return "", s.listErr(err, p)
	}
	backend.SortEntries(entries)
	f := s.newWalkFilter(t)
	var lines []string
	truncated := false
	for _, e := range entries {
		we, show, _, err := f.check(ctx, backend.Join(t.resolved, e.Name), e)
		if err != nil {
			return "", err
		}
		if !show {
			continue
		}
		if len(lines) == s.opts.MaxListResults {
			truncated = true
			continue
		}
		lines = append(lines, s.listLine(we))
	}
	shown := len(lines)
	if shown == 0 {
		lines = append(lines, "(empty directory)")
	}
	if truncated {
		lines = append(lines, fmt.Sprintf("[... truncated at %s]", count(s.opts.MaxListResults, "entry", "entries")))
	}
	lines = append(lines, f.notices()...)
	s.emit(ctx, DirectoryListed{Path: s.canonical(t.resolved), EntryCount: shown})
	return strings.Join(lines, "\n"), nil
}

// listLine renders one entry of list_directory.
func (s *Set) listLine(we walkEntry) string {
	name := s.outputPath(we.Name)
	switch {
	case we.IsDir():
		return name + "/"
	case we.Info.Size < 0:
		return name + "  (size unknown)"
	}
	return fmt.Sprintf("%s  (%d %s)", name, we.Info.Size, plural(we.Info.Size, "byte", "bytes"))
}

// listErr maps the errors of listing a directory.
func (s *Set) listErr(err error, display string) error {
	switch {
	case errors.Is(err, backend.ErrNotDir):
		return retryf("Not a directory: %s", display)
	case errors.Is(err, fs.ErrNotExist):
		return retryf("Directory not found: %s", display)
	}
	return s.storageErr(err, display)
}
