package einotools

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/cloudwego/eino/adk/filesystem"
	"github.com/fencefs/fencefs/tools"
)

// Backend is Eino's filesystem.Backend over a fencefs tool set: every
// method goes through the set's tools, so containment, the allow, deny
// and protected patterns, content hashes and atomic writes hold as they
// do for the tools themselves. Paths are Eino's absolute paths ("/a/b"),
// which are the set's rooted paths.
//
// Refusals are errors that wrap a *tools.RetryError carrying the tool
// contract's text; Refusals hands them to the model.
type Backend struct {
	set *tools.Set
}

var _ filesystem.Backend = (*Backend)(nil)

// backendTools are the tools Backend calls.
var backendTools = []string{"read_file", "list_directory", "find_files", "search_files", "write_file", "edit_file", "file_info"}

// NewBackend returns the Backend over set, which must offer read_file,
// list_directory, find_files, search_files, file_info, write_file and
// edit_file (tools.DefaultTools has them all; a read-only set makes a
// Backend whose Write and Edit are refused by the set).
func NewBackend(set *tools.Set) (*Backend, error) {
	for _, name := range backendTools {
		if _, ok := set.Tool(name); !ok && (name != "write_file" && name != "edit_file") {
			return nil, fmt.Errorf("einotools: the set does not offer %s", name)
		}
	}
	return &Backend{set: set}, nil
}

// call runs a tool of the set with args marshalled from a map.
func (b *Backend) call(ctx context.Context, tool string, args map[string]any) (string, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return "", err
	}
	return b.set.Call(ctx, tool, raw)
}

// toolPath turns Eino's absolute path into a tool path ("" is the root).
func toolPath(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

// absPath turns a path the tools print (from the namespace root or the
// listed directory) into Eino's absolute path.
func absPath(dir, name string) string {
	return path.Join("/", dir, strings.TrimSuffix(name, "/"))
}

// LsInfo lists the direct children of req.Path.
func (b *Backend) LsInfo(ctx context.Context, req *filesystem.LsInfoRequest) ([]filesystem.FileInfo, error) {
	dir := toolPath(req.Path)
	n := -1
	ctx = tools.WithEventListener(ctx, func(_ context.Context, ev tools.Event) {
		if e, ok := ev.(tools.DirectoryListed); ok {
			n = e.EntryCount
		}
	}, tools.ReadsNoDiff)
	text, err := b.call(ctx, "list_directory", map[string]any{"path": dir})
	if err != nil {
		return nil, err
	}
	var out []filesystem.FileInfo
	for _, line := range entryLines(text, n) {
		name := sizeSuffix.ReplaceAllString(line, "")
		out = append(out, filesystem.FileInfo{Path: absPath(dir, name)})
	}
	return out, nil
}

// sizeSuffix is the size list_directory shows after a file's name.
var sizeSuffix = regexp.MustCompile(`  \((?:\d+ bytes?|size unknown)\)$`)

// entryLines returns the first n lines of a walker's text, its entries
// (the notices after them are left out); n < 0 means none.
func entryLines(text string, n int) []string {
	if n <= 0 {
		return nil
	}
	lines := strings.SplitN(text, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return lines
}

// Read returns up to req.Limit lines of the file from line req.Offset
// (0-based), as stored.
func (b *Backend) Read(ctx context.Context, req *filesystem.ReadRequest) (string, error) {
	data, err := b.set.ReadFile(ctx, strings.TrimPrefix(path.Clean("/"+req.FilePath), "/"), tools.MaxEditBytes)
	if err != nil {
		return "", err
	}
	offset, limit := max(req.Offset, 0), req.Limit
	if limit <= 0 {
		limit = 200
	}
	lines := strings.SplitAfter(string(data), "\n")
	if offset >= len(lines) {
		return "", nil
	}
	end := min(offset+limit, len(lines))
	return strings.Join(lines[offset:end], ""), nil
}

// GrepRaw finds the lines holding req.Pattern, literally, under req.Path
// in the files req.Glob matches (a glob without a '/' matches a file's
// name at any depth).
func (b *Backend) GrepRaw(ctx context.Context, req *filesystem.GrepRequest) ([]filesystem.GrepMatch, error) {
	args := map[string]any{"pattern": regexp.QuoteMeta(req.Pattern), "path": toolPath(req.Path)}
	if g := req.Glob; g != "" {
		if !strings.Contains(g, "/") {
			g = "**/" + g
		}
		args["include_glob"] = g
	}
	var lens []int
	ctx = tools.WithPrintedPaths(ctx, func(l []int) { lens = l })
	text, err := b.call(ctx, "search_files", args)
	if err != nil {
		return nil, err
	}
	var out []filesystem.GrepMatch
	lines := strings.Split(text, "\n")
	for i, n := range lens {
		if i >= len(lines) || n >= len(lines[i]) {
			break
		}
		line := lines[i]
		num, rest, ok := strings.Cut(line[n+1:], ":")
		no, err := strconv.Atoi(num)
		if line[n] != ':' || !ok || err != nil {
			return nil, fmt.Errorf("einotools: search_files line %q", line)
		}
		out = append(out, filesystem.GrepMatch{Path: absPath("", line[:n]), Line: no, Content: rest})
	}
	return out, nil
}

// GlobInfo returns the files under req.Path whose path from there
// matches req.Pattern.
func (b *Backend) GlobInfo(ctx context.Context, req *filesystem.GlobInfoRequest) ([]filesystem.FileInfo, error) {
	dir := toolPath(req.Path)
	n := -1
	ctx = tools.WithEventListener(ctx, func(_ context.Context, ev tools.Event) {
		if e, ok := ev.(tools.FilesSearched); ok {
			n = e.MatchCount
		}
	}, tools.ReadsNoDiff)
	text, err := b.call(ctx, "find_files", map[string]any{"pattern": req.Pattern, "path": dir})
	if err != nil {
		return nil, err
	}
	var out []filesystem.FileInfo
	for _, line := range entryLines(text, n) {
		out = append(out, filesystem.FileInfo{Path: absPath("", line)})
	}
	return out, nil
}

// Write creates the file with req.Content; an existing file is refused,
// as Eino's contract says, atomically: the write commits only if no file
// was there when it checked.
func (b *Backend) Write(ctx context.Context, req *filesystem.WriteRequest) error {
	exists := false
	ctx = tools.WithChangeListener(ctx, func(_ context.Context, r *tools.ChangeRequest) error {
		for _, s := range r.Sizes {
			if s.Before >= 0 {
				exists = true
				r.Cancel("the file already exists; edit it instead")
			}
		}
		return nil
	}, tools.ReadsNoDiff)
	err := b.change(ctx, "write_file", map[string]any{"path": toolPath(req.FilePath), "content": req.Content})
	if exists && tools.IsRetry(err) {
		return tools.Refusal(tools.KindExists, tools.Message(err))
	}
	return err
}

// change runs a changing tool and reports a change that did not happen
// (cancelled by a change listener: the host's, or Write's own) as the
// refusal it is, of tools.KindDenied (an operation the host did not
// approve), since Eino's Backend has only an error to say so.
func (b *Backend) change(ctx context.Context, tool string, args map[string]any) error {
	changed := false
	ctx = tools.WithEventListener(ctx, func(_ context.Context, ev tools.Event) {
		switch ev.(type) {
		case tools.FileWritten, tools.FileEdited:
			changed = true
		}
	}, tools.ReadsNoDiff)
	text, err := b.call(ctx, tool, args)
	if err == nil && !changed {
		return tools.Refusal(tools.KindDenied, text)
	}
	return err
}

// Edit replaces req.OldString with req.NewString: its one occurrence, or
// with ReplaceAll every occurrence, under the hash of the content it
// read, so a change made meanwhile is a conflict, not lost.
func (b *Backend) Edit(ctx context.Context, req *filesystem.EditRequest) error {
	p := toolPath(req.FilePath)
	if !req.ReplaceAll {
		return b.change(ctx, "edit_file", map[string]any{"path": p, "old_text": req.OldString, "new_text": req.NewString})
	}
	var hash string
	ctx2 := tools.WithEventListener(ctx, func(_ context.Context, ev tools.Event) {
		if e, ok := ev.(tools.FileRead); ok {
			hash = e.ContentHash
		}
	}, tools.ReadsNoDiff)
	data, err := b.set.ReadFile(ctx2, strings.TrimPrefix(path.Clean("/"+p), "/"), tools.MaxEditBytes)
	if err != nil {
		return err
	}
	if req.OldString == "" || !strings.Contains(string(data), req.OldString) {
		// edit_file's own refusal, in its words.
		return b.change(ctx, "edit_file", map[string]any{"path": p, "old_text": req.OldString, "new_text": req.NewString})
	}
	content := strings.ReplaceAll(string(data), req.OldString, req.NewString)
	return b.change(ctx, "write_file", map[string]any{"path": p, "content": content, "expected_hash": shortHash(hash)})
}

// shortHash is the 12 characters of a hash the tools take.
func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
