// Package tools provides the file tools an AI agent uses over a fencefs
// backend: read_file, write_file, edit_file, list_directory, search_files,
// find_files, create_directory, file_info, and the opt-in list_files,
// grep, apply_patch, delete_file, move_file and copy_file.
//
// A [Set] binds the tools to one backend and one configuration ([Options]).
// Each [Tool] has a name, a description, a hand-written JSON Schema for its
// arguments and annotations, and is called with JSON arguments; the result
// is the text shown to the model. Errors the model can correct are
// *[RetryError] values, each of a [Kind] errors.Is tests
// (errors.Is(err, KindConflict)); any other error is fatal to the call,
// and [OutcomeOf] says how any call ended. The package
// is framework-neutral: adapting a Set to MCP or an agent framework takes
// a few lines.
//
// Every path is resolved from the Set's working directory, contained in
// the namespace (symlinks included), and judged by the access policy
// before storage is touched; every write is atomic and carries a
// precondition, so a concurrent change is reported instead of overwritten.
//
// Where the tool contract leaves room, the tools choose as follows.
// edit_file counts overlapping occurrences ("aa" occurs twice in "aaa"),
// since either could be meant; when old_text has bare "\n" line endings,
// is not found, and the file uses "\r\n", it is matched with "\r\n" line
// endings and new_text is given the same, so a CRLF file stays CRLF.
// expected_hash accepts the 12 characters shown, with or without the
// "hash:" prefix, or any longer prefix of the full SHA-256. Events carry
// the full lowercase hex SHA-256, of which results show the first 12
// characters. A conflict on a file that is missing on one side names its
// hash as "none".
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/policy"
)

// Set is a configured set of tools over one backend. It is safe for
// concurrent use; writes to one file through one Set are serialized.
type Set struct {
	b    backend.Backend
	opts Options

	// rooted is set when the backend's namespace is rooted
	// (Capabilities.Rooted): tool and output paths are virtual
	// ("/tenant/x").
	rooted bool
	// paths is the pipeline every tool path goes through (see lexical).
	paths backend.Cleaner
	// links is the backend's symlink behaviour, nil without any; it may
	// still decline (backend.ErrUnsupported) where the storage has none.
	links backend.SymlinkResolver
	// hostRoot is the local root's host path, used only to scrub error
	// messages; empty when the backend is not on local disk.
	hostRoot string
	rules    *policy.Rules
	// cwd is the working directory as a canonical storage path.
	cwd string

	tools  []*Tool
	byName map[string]*Tool

	// maxEdit is the largest file edit_file loads: MaxEditBytes, lowered
	// by tests.
	maxEdit int64

	guard readGuard
	locks pathLocks
}

// Tool is one tool of a Set.
type Tool struct {
	// Name is the tool's name ("read_file").
	Name string
	// Description tells the model what the tool does and its limits.
	Description string
	// InputSchema is the JSON Schema (draft 2020-12) of the arguments: a
	// flat object with additionalProperties false. Sets with the same
	// options share it: it must not be modified.
	InputSchema json.RawMessage
	// Annotations are hints for hosts.
	Annotations Annotations

	// set runs the tool (Set.hinted); nil in the process's shared texts.
	set *Set
	// timeout is Options.CallTimeout; <= 0 sets no bound.
	timeout time.Duration
}

// call runs the tool with its path hints.
func (t *Tool) call(ctx context.Context, args json.RawMessage) (string, error) {
	return t.set.hinted(ctx, t.Name, args)
}

// Annotations are hints about a tool's behaviour, as MCP defines them.
type Annotations struct {
	// Title is a human-readable name.
	Title string
	// ReadOnly tools never change storage.
	ReadOnly bool
	// Destructive tools may overwrite or change existing data.
	Destructive bool
	// Idempotent tools have no further effect when called again with the
	// same arguments.
	Idempotent bool
}

// Call runs the tool with its JSON arguments and returns the text for the
// model. A *RetryError is for the model; any other error is fatal. The
// listeners of [WithCallEnd] in ctx hear how it ended.
func (t *Tool) Call(ctx context.Context, args json.RawMessage) (string, error) {
	text, err := t.bounded(ctx, args)
	reportEnd(ctx, t.Name, err)
	return text, err
}

// reportEnd tells the listeners of WithCallEnd in ctx how a call of tool
// ended.
func reportEnd(ctx context.Context, tool string, err error) {
	for _, fn := range listenersOf(ctx).ended {
		fn(ctx, tool, err)
	}
}

// bounded runs the tool under its own deadline, when it has one that
// comes before the caller's.
func (t *Tool) bounded(ctx context.Context, args json.RawMessage) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if dl, ok := ctx.Deadline(); t.timeout <= 0 || ok && time.Until(dl) <= t.timeout {
		// No bound of its own, or the caller's comes first: a context of
		// its own would change nothing.
		return t.call(ctx, args)
	}
	cctx := newCallContext(ctx, t.timeout)
	defer cctx.release()
	text, err := t.call(cctx, args)
	if err != nil && cctx.expired() {
		// The call's own deadline, not the caller's: the model may ask
		// for less.
		return "", retryf(KindTimeout, "The call did not finish within %s and was stopped. Ask for less (a smaller directory, a narrower pattern or glob, a smaller file) and try again.", t.timeout)
	}
	return text, err
}

// errCallDeadline is the cause of a call's context when Options.CallTimeout
// ends it.
var errCallDeadline = errors.New("tools: the call's deadline passed")

// New returns the tools configured by opts over b. It fails when an
// option is invalid: a negative limit, an unknown tool name, an invalid
// pattern, or a Cwd outside the namespace.
func New(b backend.Backend, opts Options) (*Set, error) {
	if b == nil {
		return nil, fmt.Errorf("tools: nil backend")
	}
	opts, err := opts.normalize()
	if err != nil {
		return nil, err
	}
	s := &Set{b: b, opts: opts, maxEdit: MaxEditBytes}
	s.rooted = backend.CapabilitiesOf(b).Rooted
	s.paths = pathCleaner(b)
	s.links, _ = b.(backend.SymlinkResolver)
	if root, ok := backend.LocalPath(b, "."); ok && !s.rooted {
		s.hostRoot = root
	}
	if s.cwd, err = s.initialCwd(opts.Cwd); err != nil {
		return nil, err
	}
	if s.rules, err = s.policyRules(opts); err != nil {
		return nil, err
	}
	s.byName = make(map[string]*Tool, len(opts.Tools))
	s.tools = make([]*Tool, len(opts.Tools))
	all := make([]Tool, len(opts.Tools)) // one allocation for them all
	for i, name := range opts.Tools {
		t := &all[i]
		*t = s.tool(name)
		t.set = s
		t.timeout = opts.CallTimeout
		s.tools[i] = t
		s.byName[name] = t
	}
	return s, nil
}

// tool returns the named tool's texts: the ones the process already
// holds for Sets with its options (textKey), built only the first time.
func (s *Set) tool(name string) Tool {
	k := s.textKey(name)
	if t, ok := shared.tool(k); ok {
		return t
	}
	t := s.build(name)
	t.Description = shared.intern(t.Description)
	shared.putTool(k, *t)
	return *t
}

// textKey returns the key of the named tool's texts in this Set: every
// option a tool's description, schema or annotations read. A builder
// that reads a further option must add it here
// (TestSharedTextsMatchBuilt checks every combination of these).
func (s *Set) textKey(name string) textKey {
	o := &s.opts
	return textKey{
		name:             name,
		rooted:           s.rooted,
		maxReadLines:     o.MaxReadLines,
		maxReadChars:     o.MaxReadChars,
		maxListResults:   o.MaxListResults,
		maxSearchResults: o.MaxSearchResults,
		maxFindResults:   o.MaxFindResults,
		readOnly:         o.ReadOnly,
		noContentHashes:  o.NoContentHashes,
		requireRead:      o.RequireRead,
		noUnicode:        o.NoUnicodePathMatch,
		editTolerance:    o.EditTolerance,
	}
}

// run runs the named tool.
func (s *Set) run(ctx context.Context, name string, raw json.RawMessage) (string, error) {
	switch name {
	case nameReadFile:
		return s.readFile(ctx, raw)
	case nameWriteFile:
		return s.writeFile(ctx, raw)
	case nameEditFile:
		return s.editFile(ctx, raw)
	case nameListDirectory:
		return s.listDirectory(ctx, raw)
	case nameSearchFiles:
		return s.searchFiles(ctx, raw)
	case nameFindFiles:
		return s.findFiles(ctx, raw)
	case nameCreateDirectory:
		return s.createDirectory(ctx, raw)
	case nameFileInfo:
		return s.fileInfo(ctx, raw)
	case nameListFiles:
		return s.listFiles(ctx, raw)
	case nameGrep:
		return s.grep(ctx, raw)
	case nameApplyPatch:
		return s.applyPatch(ctx, raw)
	case nameDeleteFile:
		return s.deleteFile(ctx, raw)
	case nameMoveFile:
		return s.transfer(ctx, raw, true)
	case nameCopyFile:
		return s.transfer(ctx, raw, false)
	}
	panic("tools: no call for " + name)
}

// build makes the named tool's texts (its call is run's). The walker
// tools are built in their own files (search.go, find.go, listfiles.go,
// grep.go).
func (s *Set) build(name string) *Tool {
	switch name {
	case nameReadFile:
		return s.readFileTool()
	case nameWriteFile:
		return s.writeFileTool()
	case nameEditFile:
		return s.editFileTool()
	case nameListDirectory:
		return s.listDirectoryTool()
	case nameSearchFiles:
		return s.searchFilesTool()
	case nameFindFiles:
		return s.findFilesTool()
	case nameCreateDirectory:
		return s.createDirectoryTool()
	case nameFileInfo:
		return s.fileInfoTool()
	case nameListFiles:
		return s.listFilesTool()
	case nameGrep:
		return s.grepTool()
	case nameApplyPatch:
		return s.applyPatchTool()
	case nameDeleteFile:
		return s.deleteFileTool()
	case nameMoveFile:
		return s.moveFileTool()
	case nameCopyFile:
		return s.copyFileTool()
	}
	panic("tools: no constructor for " + name)
}

// pathRule says what a leading '/' means in this namespace, for the
// descriptions of the tools that read and write one file.
func (s *Set) pathRule() string {
	if s.rooted {
		return " A path starting with '/' starts at the namespace root, whose top-level directories are the mounts ('/ws/notes.md')."
	}
	return " A path starting with '/' is a host path and must lie inside the workspace."
}

// shownPaths says how walker and listing results show paths.
func (s *Set) shownPaths() string {
	if s.rooted {
		return "Paths are shown rooted ('/ws/notes.md'), whatever the working directory."
	}
	return "Paths are shown relative to the working directory."
}

// Tools returns the configured tools, in AllTools order.
func (s *Set) Tools() []*Tool { return slices.Clone(s.tools) }

// Tool returns the configured tool with the given name.
func (s *Set) Tool(name string) (*Tool, bool) {
	t, ok := s.byName[name]
	return t, ok
}

// Call runs the named tool with its JSON arguments. A tool that changes
// storage, called on a read-only Set, is a retry naming the path (the
// model may act elsewhere); any other unknown or unconfigured name is a
// fatal error.
func (s *Set) Call(ctx context.Context, name string, args json.RawMessage) (string, error) {
	t, ok := s.byName[name]
	if !ok {
		if s.opts.ReadOnly && slices.Contains(AllTools(), name) && !slices.Contains(ReadOnlyTools(), name) {
			err := readOnlySetErr(name, args)
			reportEnd(ctx, name, err)
			return "", err
		}
		return "", fmt.Errorf("tools: unknown tool %q", name)
	}
	return t.Call(ctx, args)
}

// readOnlySetErr refuses a change on a read-only Set, naming the path when
// the arguments give one.
func readOnlySetErr(tool string, args json.RawMessage) error {
	var a struct {
		Path   string `json:"path"`
		Source string `json:"source"`
	}
	if json.Unmarshal(args, &a) == nil && a.Path == "" {
		a.Path = a.Source
	}
	if a.Path != "" && !hasControl(a.Path) {
		return retryf(KindReadOnly, "Path '%s' cannot be changed: this tool set is read-only.", a.Path)
	}
	return retryf(KindReadOnly, "%s is not available: this tool set is read-only.", tool)
}

// Rooted reports whether the Set's namespace is rooted: tool paths and
// output paths are then virtual paths starting with "/".
func (s *Set) Rooted() bool { return s.rooted }
