package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
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
	// The lines are written into the result as they come: one string
	// rather than one per entry and a join.
	var b strings.Builder
	b.Grow(32 * len(entries))
	line := func(text string) {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(text)
	}
	shown := 0
	truncated := false
	for _, e := range entries {
		we, show, _, err := f.check(ctx, backend.Join(t.resolved, e.Name), e)
		if err != nil {
			return "", err
		}
		if !show {
			continue
		}
		if shown == s.opts.MaxListResults {
			truncated = true
			continue
		}
		line(s.outputPath(we.Name))
		s.writeListDetail(&b, we)
		shown++
	}
	if shown == 0 {
		line("(empty directory)")
	}
	if truncated {
		line(fmt.Sprintf("[... truncated at %s]", count(s.opts.MaxListResults, "entry", "entries")))
	}
	for _, n := range f.notices() {
		line(n)
	}
	if s.listened(ctx) {
		s.emit(ctx, DirectoryListed{Path: s.canonical(t.resolved), EntryCount: shown})
	}
	return b.String(), nil
}

// writeListDetail writes what follows an entry's name in list_directory:
// "/" for a directory, else its size.
func (s *Set) writeListDetail(b *strings.Builder, we walkEntry) {
	switch {
	case we.IsDir():
		b.WriteByte('/')
	case we.Info.Size < 0:
		b.WriteString("  (size unknown)")
	default:
		var num [20]byte
		b.WriteString("  (")
		b.Write(strconv.AppendInt(num[:0], we.Info.Size, 10))
		b.WriteString(plural(we.Info.Size, " byte)", " bytes)"))
	}
}

// listErr maps the errors of listing a directory.
func (s *Set) listErr(err error, display string) error {
	switch {
	case errors.Is(err, backend.ErrNotDir):
		return retryf(KindNotDir, "Not a directory: %s", display)
	case errors.Is(err, fs.ErrNotExist):
		return retryf(KindNotFound, "Directory not found: %s", display)
	}
	return s.storageErr(err, display)
}
