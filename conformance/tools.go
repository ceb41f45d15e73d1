package conformance

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/tools"
)

// The tool-level suite. Every scenario calls the tools of package tools
// over a fresh backend and compares their text with a literal written from
// the tool contract. The literals hold on every backend, because tool
// output does not depend on storage; the few places where a backend
// legitimately differs (a listing size the backend cannot report,
// symlinks, mode bits, special files, ripgrep on local disk) are gated by
// the backend's capabilities and interfaces and skipped with a message
// naming the gate.
//
// Only output paths depend on the namespace: in a plain namespace the
// walkers print paths relative to the working directory, in a rooted one
// (a backend whose Capabilities say Rooted) rooted canonical paths.
// The scenarios write the plain form and the suite derives the rooted one.

// ToolsOptions tune RunToolsWith. The zero value runs every scenario in
// the backend's root.
type ToolsOptions struct {
	// Dir is the storage directory the scenarios work in, "." (the
	// default) for the backend's root. The tool sets' working directory is
	// Dir (rooted, "/"+Dir, in a rooted namespace), so tool paths are
	// written relative to it. A mounted namespace, whose root holds only
	// mounts, passes a mount name. The directory must be empty, or missing
	// and creatable.
	Dir string
	// ExpectedSkips lists the scenarios expected to skip, as
	// RunOptions.ExpectedSkips does for Run.
	ExpectedSkips []string
	// RequireAbilities names the harness abilities the run needs, as
	// RunOptions.RequireAbilities does for Run.
	RequireAbilities []Ability
}

// RunTools runs the tool-level suite against the backends h makes, in
// their root directory.
func RunTools(t *testing.T, h Harness) {
	t.Helper()
	RunToolsWith(t, h, ToolsOptions{})
}

// RunToolsWith runs the tool-level suite against the backends h makes,
// tuned by opts.
func RunToolsWith(t *testing.T, h Harness, opts ToolsOptions) {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = "."
	}
	if !backend.ValidPath(opts.Dir) {
		t.Fatalf("ToolsOptions.Dir %q is not a canonical storage path", opts.Dir)
	}
	requireAbilities(t, h, opts.RequireAbilities)
	s := &toolSuite{h: h, opts: opts}
	runGroups(t, newSkipCheck(t, opts.ExpectedSkips), s.groups())
}

// toolSuite carries the harness and options to every scenario.
type toolSuite struct {
	h    Harness
	opts ToolsOptions
}

func (s *toolSuite) groups() []group {
	return []group{
		{"ReadFile", s.readFileTests()},
		{"WriteFile", s.writeFileTests()},
		{"EditFile", s.editFileTests()},
		{"ApplyPatch", s.applyPatchTests()},
		{"ListDirectory", s.listDirectoryTests()},
		{"CreateDirectory", s.createDirectoryTests()},
		{"FileInfo", s.fileInfoTests()},
		{"DeleteFile", s.deleteFileTests()},
		{"MoveFile", s.moveFileTests()},
		{"CopyFile", s.copyFileTests()},
		{"ChangeTools", s.changeToolTests()},
		{"SearchFiles", s.searchFilesTests()},
		{"FindFiles", s.findFilesTests()},
		{"ListFiles", s.listFilesTests()},
		{"Grep", s.grepTests()},
		{"HiddenEntries", s.hiddenTests()},
		{"Policy", s.policyTests()},
		{"ToolSelection", s.selectionTests()},
		{"Events", s.eventTests()},
		{"ChangeRequests", s.changeRequestTests()},
		{"Cwd", s.cwdTests()},
		{"Symlinks", s.toolSymlinkTests()},
		{"SpecialFiles", s.toolSpecialFileTests()},
		{"Arguments", s.argumentTests()},
	}
}

// callTimeout bounds one tool call, so that a tool that blocks (on a FIFO,
// a hung server) fails its scenario instead of the whole test binary.
const callTimeout = 60 * time.Second

// toolEnv is the per-scenario fixture: a fresh backend and what is known
// of its namespace.
type toolEnv struct {
	t      *testing.T
	ctx    context.Context
	s      *toolSuite
	b      backend.Backend
	caps   backend.Capabilities
	rooted bool
}

// setup makes a fresh backend for the scenario t and makes sure the
// working directory exists.
func (s *toolSuite) setup(t *testing.T) *toolEnv {
	t.Helper()
	b := s.h.MakeBackend(t.Context(), t)
	if b == nil {
		t.Fatal("Harness.MakeBackend returned nil")
	}
	caps := backend.CapabilitiesOf(b)
	e := &toolEnv{t: t, ctx: t.Context(), s: s, b: b, caps: caps, rooted: caps.Rooted}
	if caps.Rooted && s.opts.Dir == "." {
		t.Fatalf("the backend's namespace is rooted (Capabilities.Rooted), whose root holds no files: name a directory such as a mount in ToolsOptions.Dir")
	}
	if s.opts.Dir != "." {
		if _, err := backend.Stat(e.ctx, b, s.opts.Dir); errors.Is(err, fs.ErrNotExist) {
			e.mkdir(".")
		}
	}
	return e
}

// args are a tool's arguments, encoded as a JSON object.
type args map[string]any

// store returns the storage path of rel, a path relative to the working
// directory (ToolsOptions.Dir). It is the form policy messages name.
func (e *toolEnv) store(rel string) string {
	if rel == "." {
		return e.s.opts.Dir
	}
	return backend.Join(e.s.opts.Dir, rel)
}

// canon returns the canonical path of rel that events and change requests
// carry: rooted in a rooted namespace, the storage path otherwise.
func (e *toolEnv) canon(rel string) string {
	if e.rooted {
		return backend.StorageToVirtual(e.store(rel))
	}
	return e.store(rel)
}

// diffPath returns how a diff header names rel: its canonical path
// without a leading "/".
func (e *toolEnv) diffPath(rel string) string {
	return strings.TrimPrefix(e.canon(rel), "/")
}

// shown returns how a walker prints rel (relative to the working
// directory) when the tool set's working directory is Dir: rel itself in
// a plain namespace, its rooted canonical path in a rooted one.
func (e *toolEnv) shown(rel string) string { return e.shownAs(rel, rel) }

// shownAs returns how a walker prints rel when the plain namespace prints
// it as plain (relative to a working directory other than Dir).
func (e *toolEnv) shownAs(rel, plain string) string {
	if e.rooted {
		return backend.StorageToVirtual(e.store(rel))
	}
	return plain
}

// escape returns a tool path that climbs above the namespace root from a
// working directory depth levels below Dir.
func (e *toolEnv) escape(depth int) string {
	if e.s.opts.Dir != "." {
		depth += strings.Count(e.s.opts.Dir, "/") + 1
	}
	return strings.Repeat("../", depth+1) + "outside.txt"
}

// tools builds a tool set over the scenario's backend. o.Cwd is written
// relative to Dir ("" is Dir itself) and mapped onto the namespace.
func (e *toolEnv) tools(o tools.Options) *tools.Set {
	e.t.Helper()
	cwd := e.store(".")
	if o.Cwd != "" {
		cwd = e.store(o.Cwd)
	}
	o.Cwd = cwd
	if e.rooted {
		o.Cwd = backend.StorageToVirtual(cwd)
	}
	s, err := tools.New(e.b, o)
	if err != nil {
		e.t.Fatalf("tools.New(%+v): %v", o, err)
	}
	return s
}

// call runs a tool with a deadline.
func (e *toolEnv) call(s *tools.Set, tool string, a args) (string, error) {
	e.t.Helper()
	if a == nil {
		a = args{}
	}
	raw, err := json.Marshal(a)
	if err != nil {
		e.t.Fatalf("encoding the arguments of %s: %v", tool, err)
	}
	ctx, cancel := context.WithTimeout(e.ctx, callTimeout)
	defer cancel()
	return s.Call(ctx, tool, raw)
}

// ok runs a tool that must succeed and returns its text.
func (e *toolEnv) ok(s *tools.Set, tool string, a args) string {
	e.t.Helper()
	out, err := e.call(s, tool, a)
	if err != nil {
		e.t.Fatalf("%s(%s): unexpected error (retry=%v): %v", tool, describeArgs(a), tools.IsRetry(err), err)
	}
	return out
}

// want runs a tool that must succeed with exactly the text want.
func (e *toolEnv) want(s *tools.Set, tool string, a args, want string) {
	e.t.Helper()
	out, err := e.call(s, tool, a)
	switch {
	case err != nil:
		e.t.Errorf("%s(%s): unexpected error (retry=%v): %v\nwant:\n%s", tool, describeArgs(a), tools.IsRetry(err), err, want)
	case out != want:
		e.t.Errorf("%s(%s):\ngot:\n%s\nwant:\n%s\n(got %q, want %q)", tool, describeArgs(a), clip(out), clip(want), clip(out), clip(want))
	}
}

// retry runs a tool that must fail with a retryable error and returns
// its message ("" after reporting a different outcome).
func (e *toolEnv) retry(s *tools.Set, tool string, a args) string {
	e.t.Helper()
	out, err := e.call(s, tool, a)
	switch {
	case err == nil:
		e.t.Errorf("%s(%s) = %q; want a retryable error", tool, describeArgs(a), clip(out))
		return ""
	case !tools.IsRetry(err):
		e.t.Errorf("%s(%s): error %v is fatal; want a retryable error", tool, describeArgs(a), err)
		return ""
	}
	return err.Error()
}

// wantRetry runs a tool that must fail with exactly the retryable message
// want.
func (e *toolEnv) wantRetry(s *tools.Set, tool string, a args, want string) {
	e.t.Helper()
	if msg := e.retry(s, tool, a); msg != "" && msg != want {
		e.t.Errorf("%s(%s) retry message:\ngot:  %q\nwant: %q", tool, describeArgs(a), msg, want)
	}
}

// wantRetryMentions runs a tool that must fail with a retryable message
// containing every one of parts (for messages the contract only
// describes).
func (e *toolEnv) wantRetryMentions(s *tools.Set, tool string, a args, parts ...string) {
	e.t.Helper()
	msg := e.retry(s, tool, a)
	if msg == "" {
		return
	}
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			e.t.Errorf("%s(%s) retry message %q does not mention %q", tool, describeArgs(a), msg, p)
		}
	}
}

func describeArgs(a args) string {
	raw, _ := json.Marshal(a)
	return clip(string(raw))
}

// clip shortens long texts in failure messages.
func clip(s string) string {
	if len(s) <= 2000 {
		return s
	}
	return s[:1000] + fmt.Sprintf("...[%d bytes]...", len(s)-2000) + s[len(s)-1000:]
}

// writable skips the scenario unless the backend can be changed through
// the tools.
func (e *toolEnv) writable() {
	e.t.Helper()
	if e.caps.ReadOnly || !implements[backend.Writer](e.b) {
		e.t.Skipf("skipped: the tools cannot write to this backend (Capabilities.ReadOnly=%v, implements backend.Writer=%v)",
			e.caps.ReadOnly, implements[backend.Writer](e.b))
	}
}

// put stores data as rel (relative to Dir) through the backend, or the
// harness's Seeder when the backend is read-only.
func (e *toolEnv) put(rel, data string) {
	e.t.Helper()
	name := e.store(rel)
	if dir, _ := backend.Split(rel); dir != "." {
		e.mkdir(dir)
	}
	if !e.caps.ReadOnly && implements[backend.Writer](e.b) {
		if err := backend.WriteFile(e.ctx, e.b, name, []byte(data), backend.WriteOptions{}); err != nil {
			e.t.Fatalf("storing %q: %v", name, err)
		}
		return
	}
	sd, ok := e.s.h.(Seeder)
	if !ok {
		e.t.Skipf("skipped: backend is read-only (Capabilities.ReadOnly=%v) and the harness has no conformance.Seeder", e.caps.ReadOnly)
	}
	sd.Seed(e.ctx, e.t, e.b, name, []byte(data))
}

// mkdir creates the directory rel (relative to Dir) the way put stores
// files.
func (e *toolEnv) mkdir(rel string) {
	e.t.Helper()
	name := e.store(rel)
	if !e.caps.ReadOnly && implements[backend.DirMaker](e.b) {
		if err := backend.MkdirAll(e.ctx, e.b, name); err != nil {
			e.t.Fatalf("MkdirAll(%q): %v", name, err)
		}
		return
	}
	sd, ok := e.s.h.(Seeder)
	if !ok {
		e.t.Skipf("skipped: cannot create a directory: backend is read-only (Capabilities.ReadOnly=%v) or has no backend.DirMaker, and the harness has no conformance.Seeder", e.caps.ReadOnly)
	}
	sd.SeedDir(e.ctx, e.t, e.b, name)
}

// putAll stores a tree of files.
func (e *toolEnv) putAll(files map[string]string) {
	e.t.Helper()
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		e.put(name, files[name])
	}
}

// content returns what rel holds in storage, or fails.
func (e *toolEnv) content(rel string) string {
	e.t.Helper()
	data, err := backend.ReadFile(e.ctx, e.b, e.store(rel))
	if err != nil {
		e.t.Fatalf("reading %q: %v", e.store(rel), err)
	}
	return string(data)
}

// wantContent fails unless rel holds exactly want.
func (e *toolEnv) wantContent(rel, want string) {
	e.t.Helper()
	if got := e.content(rel); got != want {
		e.t.Errorf("content of %q = %q, want %q", e.store(rel), clip(got), clip(want))
	}
}

// wantAbsent fails unless nothing exists at rel.
func (e *toolEnv) wantAbsent(rel string) {
	e.t.Helper()
	if fi, err := backend.Stat(e.ctx, e.b, e.store(rel)); !errors.Is(err, fs.ErrNotExist) {
		e.t.Errorf("Stat(%q) = %+v, %v; want it not to exist", e.store(rel), fi, err)
	}
}

// fileLine returns list_directory's line for the file rel of size bytes,
// or the "(size unknown)" form when the backend's own listing has no size
// for it (the one way the contract lets a listing differ).
func (e *toolEnv) fileLine(rel string, size int) string {
	e.t.Helper()
	return e.fileLineAs(rel, rel, size)
}

// fileLineAs is fileLine for a working directory other than Dir, where a
// plain namespace prints rel as plain.
func (e *toolEnv) fileLineAs(rel, plain string, size int) string {
	e.t.Helper()
	dir, base := backend.Split(e.store(rel))
	entries, err := e.b.List(e.ctx, dir)
	if err != nil {
		e.t.Fatalf("List(%q): %v", dir, err)
	}
	for _, en := range entries {
		if en.Name == base && en.Size < 0 {
			e.t.Logf("backend lists %q without a size: expecting (size unknown)", e.store(rel))
			return e.shownAs(rel, plain) + "  (size unknown)"
		}
	}
	return fmt.Sprintf("%s  (%s)", e.shownAs(rel, plain), counted(size, "byte", "bytes"))
}

// symlinker returns the harness's Symlinker or skips the scenario.
func (e *toolEnv) symlinker() Symlinker {
	e.t.Helper()
	if !e.caps.Symlinks {
		e.t.Skipf("skipped: backend has no symlinks (Capabilities.Symlinks=false)")
	}
	sl, ok := e.s.h.(Symlinker)
	if !ok {
		e.t.Skipf("skipped: the harness has no conformance.Symlinker to make symlinks (Capabilities.Symlinks=true)")
	}
	return sl
}

// link makes the symlink rel pointing at target (as written).
func (e *toolEnv) link(sl Symlinker, target, rel string) {
	e.t.Helper()
	sl.MakeSymlink(e.ctx, e.t, e.b, target, e.store(rel))
}

// allTools returns tool options with the opt-in tools enabled. Without
// ripgrep, list_files and grep answer with the built-in engine.
func (e *toolEnv) allTools(o tools.Options) tools.Options {
	e.t.Helper()
	o.Tools = tools.AllTools()
	return o
}

// hash12 returns the content hash the tools show: the first 12 hex
// characters of the SHA-256 of the raw bytes.
func hash12(data string) string { return fullHash(data)[:12] }

// fullHash returns the lowercase hex SHA-256 of data, as events carry it.
func fullHash(data string) string {
	sum := sha256.Sum256([]byte(data))
	return hex.EncodeToString(sum[:])
}

// emptyHash is hash12 of nothing, written out to pin the definition.
const emptyHash = "e3b0c44298fc"

// lines joins result lines the way the tools do.
func lines(l ...string) string { return strings.Join(l, "\n") }

// hiddenNotice is the walkers' trailing line for k skipped dot-named
// children of the walk root.
func hiddenNotice(k int) string {
	return fmt.Sprintf("[%s omitted; name a hidden path explicitly to include it]", counted(k, "hidden entry", "hidden entries"))
}

// numbered renders lines of a read_file body from line first on.
func numbered(first int, texts ...string) string {
	var b strings.Builder
	for i, s := range texts {
		fmt.Fprintf(&b, "%6d\t%s\n", first+i, s)
	}
	return b.String()
}

// readHeader is read_file's header line.
func readHeader(path string, n int, data string) string {
	return fmt.Sprintf("[%s | %s | hash:%s]\n", path, counted(n, "line", "lines"), hash12(data))
}

// counted returns n and the noun in the form its number takes, as the tools
// print counts: "1 line", "2 lines".
func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
