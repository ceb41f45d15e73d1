package conformance

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

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
// (a backend implementing backend.PathResolver) rooted canonical paths.
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
	s := &toolSuite{h: h, opts: opts}
	for _, g := range s.groups() {
		t.Run(g.name, func(t *testing.T) {
			for _, c := range g.cases {
				t.Run(c.name, func(t *testing.T) { c.fn(t) })
			}
		})
	}
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
		{"ListDirectory", s.listDirectoryTests()},
		{"CreateDirectory", s.createDirectoryTests()},
		{"FileInfo", s.fileInfoTests()},
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
	_, rooted := b.(backend.PathResolver)
	e := &toolEnv{t: t, ctx: t.Context(), s: s, b: b, caps: backend.CapabilitiesOf(b), rooted: rooted}
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
	return fmt.Sprintf("%s  (%d bytes)", e.shownAs(rel, plain), size)
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

// usesRipgrep reports whether list_files and grep run ripgrep on Dir
// (the backend is on local disk there), skipping the scenario when rg
// is not installed.
func (e *toolEnv) usesRipgrep() bool {
	e.t.Helper()
	lp, ok := e.b.(backend.LocalPather)
	if !ok {
		return false
	}
	if _, ok := lp.LocalPath(e.store(".")); !ok {
		return false
	}
	if _, err := exec.LookPath("rg"); err != nil {
		e.t.Skipf("skipped: the backend is on local disk (backend.LocalPather), where list_files and grep run ripgrep, and rg is not on PATH")
	}
	return true
}

// allTools returns tool options with the opt-in tools enabled, checking
// for ripgrep where it is needed.
func (e *toolEnv) allTools(o tools.Options) tools.Options {
	e.t.Helper()
	e.usesRipgrep()
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
	return fmt.Sprintf("[%d hidden entries omitted; name a hidden path explicitly to include it]", k)
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
	return fmt.Sprintf("[%s | %d lines | hash:%s]\n", path, n, hash12(data))
}

// ---------------------------------------------------------------------
// read_file

func (s *toolSuite) readFileTests() []testCase {
	return []testCase{
		{"HeaderAndNumbering", s.testReadHeader},
		{"Window", s.testReadWindow},
		{"Empty", s.testReadEmpty},
		{"OffsetPastEnd", s.testReadOffsetPastEnd},
		{"Binary", s.testReadBinary},
		{"CRLF", s.testReadCRLF},
		{"InvalidUTF8", s.testReadInvalidUTF8},
		{"MaxReadChars", s.testReadMaxChars},
		{"LongLine", s.testReadLongLine},
		{"NotAFile", s.testReadNotAFile},
		{"NoContentHashes", s.testReadNoHashes},
	}
}

func (s *toolSuite) testReadHeader(t *testing.T) {
	e := s.setup(t)
	e.put("a.txt", "Hello\nworld\n")
	e.put("b.txt", "one\ntwo")
	e.put("d/c.txt", "tab\there\n")
	ts := e.tools(tools.Options{})
	e.want(ts, "read_file", args{"path": "a.txt"}, readHeader("a.txt", 2, "Hello\nworld\n")+"     1\tHello\n     2\tworld\n")
	// A body not ending in "\n" gets one; the path is shown as written.
	e.want(ts, "read_file", args{"path": "./b.txt"}, readHeader("./b.txt", 2, "one\ntwo")+numbered(1, "one", "two"))
	e.want(ts, "read_file", args{"path": "d/../d/c.txt"}, readHeader("d/../d/c.txt", 1, "tab\there\n")+numbered(1, "tab\there"))
}

func (s *toolSuite) testReadWindow(t *testing.T) {
	e := s.setup(t)
	var texts []string
	for i := 1; i <= 12; i++ {
		texts = append(texts, fmt.Sprintf("l%02d", i))
	}
	data := strings.Join(texts, "\n") + "\n"
	e.put("f.txt", data)
	h := readHeader("f.txt", 12, data)
	ts := e.tools(tools.Options{})
	tests := []struct {
		a    args
		want string
	}{
		{args{"path": "f.txt", "limit": 2}, h + numbered(1, texts[:2]...) + "... (10 more lines. Use offset=2 to continue reading.)\n"},
		{args{"path": "f.txt", "offset": 2, "limit": 2}, h + numbered(3, texts[2:4]...) + "... (8 more lines. Use offset=4 to continue reading.)\n"},
		{args{"path": "f.txt", "offset": 9, "limit": 2}, h + "    10\tl10\n    11\tl11\n... (1 more lines. Use offset=11 to continue reading.)\n"},
		{args{"path": "f.txt", "offset": 11}, h + "    12\tl12\n"},
		{args{"path": "f.txt", "offset": 10, "limit": 5}, h + numbered(11, "l11", "l12")},
		{args{"path": "f.txt"}, h + numbered(1, texts...)},
	}
	for _, tt := range tests {
		e.want(ts, "read_file", tt.a, tt.want)
	}
	// MaxReadLines is the default limit.
	small := e.tools(tools.Options{MaxReadLines: 3})
	e.want(small, "read_file", args{"path": "f.txt"}, h+numbered(1, texts[:3]...)+"... (9 more lines. Use offset=3 to continue reading.)\n")
	e.want(small, "read_file", args{"path": "f.txt", "limit": 12}, h+numbered(1, texts...))
	// Bad windows name the parameter.
	e.wantRetryMentions(ts, "read_file", args{"path": "f.txt", "offset": -1}, "offset")
	e.wantRetryMentions(ts, "read_file", args{"path": "f.txt", "limit": 0}, "limit")
}

func (s *toolSuite) testReadEmpty(t *testing.T) {
	e := s.setup(t)
	e.put("e.txt", "")
	ts := e.tools(tools.Options{})
	want := "[e.txt | 0 lines | hash:" + emptyHash + "]\n(empty file)\n"
	e.want(ts, "read_file", args{"path": "e.txt"}, want)
	// offset >= N only fails when N > 0.
	e.want(ts, "read_file", args{"path": "e.txt", "offset": 3}, want)
}

func (s *toolSuite) testReadOffsetPastEnd(t *testing.T) {
	e := s.setup(t)
	e.put("f.txt", "a\nb\nc\nd\ne\n")
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "read_file", args{"path": "f.txt", "offset": 5}, "Offset 5 exceeds file length (5 lines).")
	e.wantRetry(ts, "read_file", args{"path": "f.txt", "offset": 99, "limit": 1}, "Offset 99 exceeds file length (5 lines).")
	e.want(ts, "read_file", args{"path": "f.txt", "offset": 4}, readHeader("f.txt", 5, "a\nb\nc\nd\ne\n")+"     5\te\n")
}

func (s *toolSuite) testReadBinary(t *testing.T) {
	e := s.setup(t)
	e.put("b.bin", "abc\x00def")
	// A NUL at index 8191 makes a file binary, at 8192 it does not.
	e.put("edge.bin", strings.Repeat("a", 8191)+"\x00")
	late := strings.Repeat("a", 8192) + "\x00\n"
	e.put("late.txt", late)
	ts := e.tools(tools.Options{})
	e.want(ts, "read_file", args{"path": "b.bin"}, "[Binary file: 7 bytes. Use a binary-aware tool to inspect.]")
	e.want(ts, "read_file", args{"path": "edge.bin", "offset": 3}, "[Binary file: 8192 bytes. Use a binary-aware tool to inspect.]")
	e.want(ts, "read_file", args{"path": "late.txt"}, readHeader("late.txt", 1, late)+numbered(1, strings.Repeat("a", 8192)+"\x00"))
}

func (s *toolSuite) testReadCRLF(t *testing.T) {
	e := s.setup(t)
	data := "a\r\nb\rc\r\n\fd\u2028e\n"
	e.put("c.txt", data)
	ts := e.tools(tools.Options{})
	// Lines split on "\n" only: the "\r" stays on its line, and a lone
	// "\r", "\f" or U+2028 is no line break.
	e.want(ts, "read_file", args{"path": "c.txt"}, readHeader("c.txt", 3, data)+numbered(1, "a\r", "b\rc\r", "\fd\u2028e"))
}

func (s *toolSuite) testReadInvalidUTF8(t *testing.T) {
	e := s.setup(t)
	data := "ok \xff\xfe end\ncaf\xe2\x82\nfine\n"
	e.put("l1.txt", data)
	ts := e.tools(tools.Options{})
	// One U+FFFD per invalid byte; the hash is of the raw bytes.
	e.want(ts, "read_file", args{"path": "l1.txt"}, readHeader("l1.txt", 3, data)+numbered(1, "ok \ufffd\ufffd end", "caf\ufffd\ufffd", "fine"))
}

func (s *toolSuite) testReadMaxChars(t *testing.T) {
	e := s.setup(t)
	var texts []string
	for i := 1; i <= 10; i++ {
		texts = append(texts, fmt.Sprintf("line%02d", i))
	}
	data := strings.Join(texts, "\n") + "\n"
	e.put("w.txt", data)
	h := readHeader("w.txt", 10, data)
	want3 := h + numbered(1, texts[:3]...) + "... (7 more lines. Use offset=3 to continue reading.)\n"
	want2 := h + numbered(1, texts[:2]...) + "... (8 more lines. Use offset=2 to continue reading.)\n"
	n3 := utf8.RuneCountInString(want3)
	// The whole result, header and hint included, fits the cap exactly,
	// and the window ends on a complete line.
	e.want(e.tools(tools.Options{MaxReadChars: n3}), "read_file", args{"path": "w.txt"}, want3)
	e.want(e.tools(tools.Options{MaxReadChars: n3 - 1}), "read_file", args{"path": "w.txt"}, want2)
	e.want(e.tools(tools.Options{MaxReadChars: n3}), "read_file", args{"path": "w.txt", "offset": 8}, h+numbered(9, texts[8:]...))
	e.want(e.tools(tools.Options{MaxReadChars: 100000}), "read_file", args{"path": "w.txt"}, h+numbered(1, texts...))
}

func (s *toolSuite) testReadLongLine(t *testing.T) {
	e := s.setup(t)
	data := "short\n" + strings.Repeat("y", 1233) + "\nend\n"
	e.put("long.txt", data)
	wide := strings.Repeat("é", 1000) + "\n"
	e.put("wide.txt", wide)
	ts := e.tools(tools.Options{MaxReadChars: 200})
	h := readHeader("long.txt", 3, data)
	e.want(ts, "read_file", args{"path": "long.txt"}, h+numbered(1, "short")+"... (2 more lines. Use offset=1 to continue reading.)\n")
	e.want(ts, "read_file", args{"path": "long.txt", "offset": 1},
		h+"... (Line 2 is 1,234 characters and does not fit the read window. Use offset=2 to skip it.)\n")
	e.want(ts, "read_file", args{"path": "long.txt", "offset": 2}, h+numbered(3, "end"))
	// Characters, not bytes, and the terminator counts.
	e.want(ts, "read_file", args{"path": "wide.txt"},
		readHeader("wide.txt", 1, wide)+"... (Line 1 is 1,001 characters and does not fit the read window. Use offset=1 to skip it.)\n")
}

func (s *toolSuite) testReadNotAFile(t *testing.T) {
	e := s.setup(t)
	e.put("a.txt", "a\n")
	e.mkdir("d")
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "read_file", args{"path": "d"}, "'d' is a directory, not a file.")
	e.wantRetry(ts, "read_file", args{"path": "nope.txt"}, "File not found: nope.txt")
	e.wantRetry(ts, "read_file", args{"path": "d/nope.txt"}, "File not found: d/nope.txt")
	e.wantRetry(ts, "read_file", args{"path": "a.txt/x"}, "File not found: a.txt/x")
}

func (s *toolSuite) testReadNoHashes(t *testing.T) {
	e := s.setup(t)
	e.put("a.txt", "Hello\n")
	ts := e.tools(tools.Options{NoContentHashes: true})
	e.want(ts, "read_file", args{"path": "a.txt"}, "[a.txt | 1 lines]\n     1\tHello\n")
}

// ---------------------------------------------------------------------
// write_file

func (s *toolSuite) writeFileTests() []testCase {
	return []testCase{
		{"New", s.testWriteNew},
		{"Overwrite", s.testWriteOverwrite},
		{"Counts", s.testWriteCounts},
		{"ExpectedHash", s.testWriteExpectedHash},
		{"ParentMissing", s.testWriteParentMissing},
		{"ParentNotDirectory", s.testWriteParentNotDir},
		{"NotRegular", s.testWriteNotRegular},
		{"ModeKept", s.testWriteModeKept},
		{"NoContentHashes", s.testWriteNoHashes},
	}
}

func (s *toolSuite) testWriteNew(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.mkdir("d")
	ts := e.tools(tools.Options{})
	data := "héllo\nworld"
	e.want(ts, "write_file", args{"path": "n.txt", "content": data}, "Wrote 11 chars (2 lines) to n.txt. [hash:"+hash12(data)+"]")
	e.wantContent("n.txt", data)
	e.want(ts, "write_file", args{"path": "d/x.txt", "content": "x"}, "Wrote 1 chars (1 lines) to d/x.txt. [hash:"+hash12("x")+"]")
	e.wantContent("d/x.txt", "x")
}

func (s *toolSuite) testWriteOverwrite(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("n.txt", "old content\n")
	ts := e.tools(tools.Options{})
	e.want(ts, "write_file", args{"path": "n.txt", "content": "x\n"}, "Wrote 2 chars (1 lines) to n.txt. [hash:"+hash12("x\n")+"]")
	e.wantContent("n.txt", "x\n")
}

func (s *toolSuite) testWriteCounts(t *testing.T) {
	e := s.setup(t)
	e.writable()
	ts := e.tools(tools.Options{})
	tests := []struct {
		content      string
		chars, lines int
	}{
		{"", 0, 0},
		{"a\r\nb\r\n", 6, 2},
		{"\n\n\n", 3, 3},
		{"no newline", 10, 1},
		{"tab\there\n", 9, 1},
		{"😀 ok\n", 5, 1},
		{"\ufeffbom\n", 5, 1},
	}
	for i, tt := range tests {
		name := fmt.Sprintf("c%d.txt", i)
		e.want(ts, "write_file", args{"path": name, "content": tt.content},
			fmt.Sprintf("Wrote %d chars (%d lines) to %s. [hash:%s]", tt.chars, tt.lines, name, hash12(tt.content)))
		// Written exactly as given: no newline added, removed or
		// translated.
		e.wantContent(name, tt.content)
	}
	if got := hash12(""); got != emptyHash {
		t.Fatalf("hash12 of nothing = %s, want %s", got, emptyHash)
	}
}

func (s *toolSuite) testWriteExpectedHash(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("n.txt", "v1\n")
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "write_file", args{"path": "n.txt", "content": "v2\n", "expected_hash": "000000000000"},
		"Conflict: file 'n.txt' has changed (expected hash:000000000000, got hash:"+hash12("v1\n")+"). Re-read the file and retry.")
	e.wantContent("n.txt", "v1\n")
	e.want(ts, "write_file", args{"path": "n.txt", "content": "v2\n", "expected_hash": hash12("v1\n")},
		"Wrote 3 chars (1 lines) to n.txt. [hash:"+hash12("v2\n")+"]")
	e.wantContent("n.txt", "v2\n")
	// For a missing file expected_hash is ignored.
	e.want(ts, "write_file", args{"path": "new.txt", "content": "n", "expected_hash": "000000000000"},
		"Wrote 1 chars (1 lines) to new.txt. [hash:"+hash12("n")+"]")
}

func (s *toolSuite) testWriteParentMissing(t *testing.T) {
	e := s.setup(t)
	e.writable()
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "write_file", args{"path": "nodir/x.txt", "content": "x"},
		"Parent directory 'nodir' does not exist. Use create_directory first.")
	e.wantRetry(ts, "write_file", args{"path": "a/b/c.txt", "content": "x"},
		"Parent directory 'a/b' does not exist. Use create_directory first.")
	e.wantAbsent("nodir")
	e.wantAbsent("a")
}

func (s *toolSuite) testWriteParentNotDir(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("f", "file\n")
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "write_file", args{"path": "f/x.txt", "content": "x"}, "Path 'f/x.txt' has a parent that is not a directory.")
	e.wantRetry(ts, "write_file", args{"path": "f/g/x.txt", "content": "x"}, "Path 'f/g/x.txt' has a parent that is not a directory.")
	e.wantContent("f", "file\n")
}

func (s *toolSuite) testWriteNotRegular(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.mkdir("d")
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "write_file", args{"path": "d", "content": "x"}, "Path 'd' exists and is not a regular file.")
}

func (s *toolSuite) testWriteModeKept(t *testing.T) {
	e := s.setup(t)
	e.writable()
	if !e.caps.ModeBits {
		t.Skipf("skipped: backend does not store mode bits (Capabilities.ModeBits=false)")
	}
	ch, ok := s.h.(Chmoder)
	if !ok {
		t.Skipf("skipped: the harness has no conformance.Chmoder to set mode bits (Capabilities.ModeBits=true)")
	}
	e.put("run.sh", "#!/bin/sh\necho hi\n")
	ch.Chmod(e.ctx, t, e.b, e.store("run.sh"), 0o750)
	ts := e.tools(tools.Options{})
	e.ok(ts, "write_file", args{"path": "run.sh", "content": "#!/bin/sh\necho bye\n"})
	e.wantPerm("run.sh", 0o750)
	e.ok(ts, "edit_file", args{"path": "run.sh", "old_text": "bye", "new_text": "again"})
	e.wantPerm("run.sh", 0o750)
	e.wantContent("run.sh", "#!/bin/sh\necho again\n")
}

// wantPerm fails unless rel has the permission bits perm.
func (e *toolEnv) wantPerm(rel string, perm fs.FileMode) {
	e.t.Helper()
	fi, err := backend.Stat(e.ctx, e.b, e.store(rel))
	if err != nil {
		e.t.Fatalf("Stat(%q): %v", e.store(rel), err)
	}
	if got := fi.Mode.Perm(); got != perm {
		e.t.Errorf("mode of %q = %v, want %v", e.store(rel), got, perm)
	}
}

func (s *toolSuite) testWriteNoHashes(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("a.txt", "alpha\n")
	ts := e.tools(tools.Options{NoContentHashes: true})
	e.want(ts, "write_file", args{"path": "n.txt", "content": "x\n"}, "Wrote 2 chars (1 lines) to n.txt.")
	e.want(ts, "edit_file", args{"path": "a.txt", "old_text": "alpha", "new_text": "beta"}, "Edited a.txt.")
	// expected_hash is not an argument without hashes.
	e.wantRetryMentions(ts, "write_file", args{"path": "n.txt", "content": "y", "expected_hash": hash12("x\n")}, "expected_hash")
	e.wantContent("n.txt", "x\n")
}

// ---------------------------------------------------------------------
// edit_file

func (s *toolSuite) editFileTests() []testCase {
	return []testCase{
		{"Single", s.testEditSingle},
		{"Replacements", s.testEditReplacements},
		{"NotFound", s.testEditNotFound},
		{"Ambiguous", s.testEditAmbiguous},
		{"EmptyOldText", s.testEditEmpty},
		{"WhitespaceOldText", s.testEditWhitespace},
		{"Arguments", s.testEditArguments},
		{"CRLFAndBOMKept", s.testEditCRLF},
		{"DollarLiteral", s.testEditDollar},
		{"BinaryRefused", s.testEditBinary},
		{"InvalidUTF8Refused", s.testEditInvalidUTF8},
		{"ExpectedHash", s.testEditExpectedHash},
		{"Missing", s.testEditMissing},
	}
}

// editBase is the file most edit scenarios start from.
const editBase = "alpha\nbeta\ngamma\nbeta\n"

func (s *toolSuite) testEditSingle(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("e.txt", editBase)
	e.put("x.txt", "no newline")
	ts := e.tools(tools.Options{})
	want := "ALPHA\nbeta\ngamma\nbeta\n"
	e.want(ts, "edit_file", args{"path": "e.txt", "old_text": "alpha", "new_text": "ALPHA"}, "Edited e.txt. [hash:"+hash12(want)+"]")
	e.wantContent("e.txt", want)
	e.want(ts, "edit_file", args{"path": "x.txt", "old_text": "newline", "new_text": "end"}, "Edited x.txt. [hash:"+hash12("no end")+"]")
	e.wantContent("x.txt", "no end")
}

func (s *toolSuite) testEditReplacements(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("e.txt", editBase)
	ts := e.tools(tools.Options{})
	// Applied in order, each to the result of the previous.
	want := "B\ngamma\nbeta\n"
	e.want(ts, "edit_file", args{"path": "e.txt", "replacements": []args{
		{"old_text": "alpha", "new_text": "A"},
		{"old_text": "A\nbeta", "new_text": "B"},
	}}, "Edited e.txt. [hash:"+hash12(want)+"]")
	e.wantContent("e.txt", want)
}

func (s *toolSuite) testEditNotFound(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("e.txt", editBase)
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "edit_file", args{"path": "e.txt", "old_text": "delta", "new_text": "x"},
		"old_text not found in e.txt. No changes were written.")
	// A list of one is labelled like a single pair.
	e.wantRetry(ts, "edit_file", args{"path": "e.txt", "replacements": []args{{"old_text": "delta", "new_text": "x"}}},
		"old_text not found in e.txt. No changes were written.")
	// All or nothing: the first replacement matched, and nothing is
	// written.
	e.wantRetry(ts, "edit_file", args{"path": "e.txt", "replacements": []args{
		{"old_text": "alpha", "new_text": "A"},
		{"old_text": "delta", "new_text": "x"},
	}}, "replacement 2 not found in e.txt. No changes were written.")
	e.wantContent("e.txt", editBase)
}

func (s *toolSuite) testEditAmbiguous(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("e.txt", editBase)
	e.put("one.txt", "ab ab\n")
	e.put("many.txt", strings.Repeat("x\n", 12))
	ts := e.tools(tools.Options{})
	const tail = " Include more surrounding context to make the match unique. No changes were written."
	e.wantRetry(ts, "edit_file", args{"path": "e.txt", "old_text": "beta", "new_text": "x"},
		"old_text found 2 times in e.txt (lines 2, 4)."+tail)
	e.wantRetry(ts, "edit_file", args{"path": "one.txt", "old_text": "ab", "new_text": "x"},
		"old_text found 2 times in one.txt (line 1)."+tail)
	e.wantRetry(ts, "edit_file", args{"path": "many.txt", "old_text": "x", "new_text": "y"},
		"old_text found 12 times in many.txt (lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, ...)."+tail)
	e.wantRetry(ts, "edit_file", args{"path": "e.txt", "replacements": []args{
		{"old_text": "alpha", "new_text": "A"},
		{"old_text": "beta", "new_text": "B"},
	}}, "replacement 2 found 2 times in e.txt (lines 2, 4)."+tail)
	e.wantContent("e.txt", editBase)
	e.wantContent("one.txt", "ab ab\n")
}

func (s *toolSuite) testEditEmpty(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("e.txt", editBase)
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "edit_file", args{"path": "e.txt", "old_text": "", "new_text": "x"},
		"old_text is empty; old_text must be the exact text to replace.")
	e.wantRetry(ts, "edit_file", args{"path": "e.txt", "replacements": []args{
		{"old_text": "alpha", "new_text": "A"},
		{"old_text": "", "new_text": "x"},
	}}, "replacement 2 is empty; old_text must be the exact text to replace.")
	e.wantContent("e.txt", editBase)
}

func (s *toolSuite) testEditWhitespace(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("e.txt", "a \n\tb\n")
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "edit_file", args{"path": "e.txt", "old_text": " \n\t", "new_text": "x"},
		"old_text is only whitespace; include the surrounding text so the match is unambiguous.")
	e.wantRetry(ts, "edit_file", args{"path": "e.txt", "replacements": []args{
		{"old_text": "a", "new_text": "A"},
		{"old_text": "\n", "new_text": ""},
	}}, "replacement 2 is only whitespace; include the surrounding text so the match is unambiguous.")
	e.wantContent("e.txt", "a \n\tb\n")
}

func (s *toolSuite) testEditArguments(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("e.txt", editBase)
	ts := e.tools(tools.Options{})
	const none = "Provide old_text and new_text, or a non-empty replacements list."
	const both = "Provide either old_text and new_text or a non-empty replacements list, not both."
	e.wantRetry(ts, "edit_file", args{"path": "e.txt"}, none)
	e.wantRetry(ts, "edit_file", args{"path": "e.txt", "replacements": []args{}}, none)
	e.wantRetry(ts, "edit_file", args{"path": "e.txt", "old_text": "alpha"}, none)
	e.wantRetry(ts, "edit_file", args{"path": "e.txt", "old_text": "alpha", "new_text": "A",
		"replacements": []args{{"old_text": "beta", "new_text": "B"}}}, both)
	e.wantContent("e.txt", editBase)
}

func (s *toolSuite) testEditCRLF(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("w.txt", "\ufeffone\r\ntwo\r\n\tthree\r\n")
	ts := e.tools(tools.Options{})
	e.ok(ts, "edit_file", args{"path": "w.txt", "old_text": "two", "new_text": "2"})
	e.wantContent("w.txt", "\ufeffone\r\n2\r\n\tthree\r\n")
	e.ok(ts, "edit_file", args{"path": "w.txt", "old_text": "one\r\n2", "new_text": "1\r\n2"})
	e.wantContent("w.txt", "\ufeff1\r\n2\r\n\tthree\r\n")
}

func (s *toolSuite) testEditDollar(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("d.txt", "price: X\n")
	ts := e.tools(tools.Options{})
	e.ok(ts, "edit_file", args{"path": "d.txt", "old_text": "X", "new_text": "$1 ${1} $$ $0 \\1"})
	e.wantContent("d.txt", "price: $1 ${1} $$ $0 \\1\n")
}

func (s *toolSuite) testEditBinary(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("b.bin", "a\x00b")
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "edit_file", args{"path": "b.bin", "old_text": "a", "new_text": "x"},
		"b.bin is a binary file; edit_file only edits text files.")
	e.wantContent("b.bin", "a\x00b")
}

func (s *toolSuite) testEditInvalidUTF8(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("l1.txt", "abc\xffdef\n")
	ts := e.tools(tools.Options{})
	// The contract fixes the kind of error and that it names the byte
	// offset, not the wording.
	msg := e.retry(ts, "edit_file", args{"path": "l1.txt", "old_text": "abc", "new_text": "x"})
	if msg != "" && (!strings.Contains(msg, "l1.txt") || !regexp.MustCompile(`\b3\b`).MatchString(msg)) {
		t.Errorf("edit of invalid UTF-8: message %q does not name the file and the byte offset 3", msg)
	}
	e.wantContent("l1.txt", "abc\xffdef\n")
}

func (s *toolSuite) testEditExpectedHash(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("e.txt", editBase)
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "edit_file", args{"path": "e.txt", "old_text": "alpha", "new_text": "A", "expected_hash": "000000000000"},
		"Conflict: file 'e.txt' has changed (expected hash:000000000000, got hash:"+hash12(editBase)+"). Re-read the file and retry.")
	e.wantContent("e.txt", editBase)
	e.ok(ts, "edit_file", args{"path": "e.txt", "old_text": "alpha", "new_text": "A", "expected_hash": hash12(editBase)})
	e.wantContent("e.txt", "A\nbeta\ngamma\nbeta\n")
}

func (s *toolSuite) testEditMissing(t *testing.T) {
	e := s.setup(t)
	e.writable()
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "edit_file", args{"path": "nope.txt", "old_text": "a", "new_text": "b"}, "File not found: nope.txt")
	e.wantAbsent("nope.txt")
}

// ---------------------------------------------------------------------
// list_directory

func (s *toolSuite) listDirectoryTests() []testCase {
	return []testCase{
		{"Sorted", s.testListSorted},
		{"Empty", s.testListEmpty},
		{"Truncated", s.testListTruncated},
		{"NotADirectory", s.testListNotDir},
	}
}

// arrangeListing stores the tree the listing scenarios share.
func (e *toolEnv) arrangeListing() {
	e.t.Helper()
	e.putAll(map[string]string{"b.txt": "bbb", "a.txt": "a", "B.md": "bb", "d/x": "x"})
	e.mkdir("c")
}

func (s *toolSuite) testListSorted(t *testing.T) {
	e := s.setup(t)
	e.arrangeListing()
	ts := e.tools(tools.Options{})
	want := lines(e.fileLine("B.md", 2), e.fileLine("a.txt", 1), e.fileLine("b.txt", 3), e.shown("c")+"/", e.shown("d")+"/")
	e.want(ts, "list_directory", args{"path": "."}, want)
	e.want(ts, "list_directory", nil, want)
	e.want(ts, "list_directory", args{"path": "d"}, e.fileLine("d/x", 1))
}

func (s *toolSuite) testListEmpty(t *testing.T) {
	e := s.setup(t)
	e.arrangeListing()
	ts := e.tools(tools.Options{})
	e.want(ts, "list_directory", args{"path": "c"}, "(empty directory)")
}

func (s *toolSuite) testListTruncated(t *testing.T) {
	e := s.setup(t)
	e.arrangeListing()
	all := []string{e.fileLine("B.md", 2), e.fileLine("a.txt", 1), e.fileLine("b.txt", 3), e.shown("c") + "/", e.shown("d") + "/"}
	e.want(e.tools(tools.Options{MaxListResults: 2}), "list_directory", args{"path": "."}, lines(all[0], all[1], "[... truncated at 2 entries]"))
	// The marker appears only when an entry was actually dropped.
	e.want(e.tools(tools.Options{MaxListResults: 5}), "list_directory", args{"path": "."}, lines(all...))
}

func (s *toolSuite) testListNotDir(t *testing.T) {
	e := s.setup(t)
	e.arrangeListing()
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "list_directory", args{"path": "a.txt"}, "Not a directory: a.txt")
	e.retry(ts, "list_directory", args{"path": "nope"})
}

// ---------------------------------------------------------------------
// create_directory

func (s *toolSuite) createDirectoryTests() []testCase {
	return []testCase{
		{"NewAndExisting", s.testMkdirNew},
		{"CollidesWithFile", s.testMkdirFile},
	}
}

func (s *toolSuite) testMkdirNew(t *testing.T) {
	e := s.setup(t)
	e.writable()
	var events []tools.Event
	ts := e.tools(tools.Options{OnEvent: func(_ context.Context, ev tools.Event) { events = append(events, ev) }})
	e.want(ts, "create_directory", args{"path": "n/sub"}, "Created directory: n/sub")
	if fi, err := backend.Stat(e.ctx, e.b, e.store("n/sub")); err != nil || !fi.IsDir() {
		t.Errorf("after create_directory: Stat(%q) = %+v, %v; want a directory", e.store("n/sub"), fi, err)
	}
	e.want(ts, "list_directory", args{"path": "n"}, e.shown("n/sub")+"/")
	events = events[:0:0]
	// An existing directory: the same text and no event.
	e.want(ts, "create_directory", args{"path": "n/sub"}, "Created directory: n/sub")
	e.want(ts, "create_directory", args{"path": "n"}, "Created directory: n")
	if len(events) != 0 {
		t.Errorf("create_directory of existing directories emitted %#v; want nothing", events)
	}
}

func (s *toolSuite) testMkdirFile(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("f", "file\n")
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "create_directory", args{"path": "f"}, "Path 'f' exists and is not a directory.")
	e.retry(ts, "create_directory", args{"path": "f/sub"})
	e.wantContent("f", "file\n")
}

// ---------------------------------------------------------------------
// file_info

func (s *toolSuite) fileInfoTests() []testCase {
	return []testCase{
		{"File", s.testInfoFile},
		{"Directory", s.testInfoDir},
		{"Missing", s.testInfoMissing},
	}
}

func (s *toolSuite) testInfoFile(t *testing.T) {
	e := s.setup(t)
	e.putAll(map[string]string{"a.txt": "Hello\nworld\n", "b.bin": "a\x00b", "e.txt": ""})
	ts := e.tools(tools.Options{})
	text := lines("path: a.txt", "type: file", "size: 12 bytes", "binary: false", "lines: 2", "hash: "+hash12("Hello\nworld\n"))
	e.want(ts, "file_info", args{"path": "a.txt"}, text)
	e.want(ts, "file_info", args{"path": "./a.txt"}, strings.Replace(text, "path: a.txt", "path: ./a.txt", 1))
	e.want(ts, "file_info", args{"path": "b.bin"}, lines("path: b.bin", "type: file", "size: 3 bytes", "binary: true"))
	e.want(ts, "file_info", args{"path": "e.txt"}, lines("path: e.txt", "type: file", "size: 0 bytes", "binary: false", "lines: 0", "hash: "+emptyHash))
	// file_info always prints the hash of a text file, even with hashes
	// off.
	e.want(e.tools(tools.Options{NoContentHashes: true}), "file_info", args{"path": "a.txt"}, text)
}

func (s *toolSuite) testInfoDir(t *testing.T) {
	e := s.setup(t)
	e.put("d/x", "x")
	ts := e.tools(tools.Options{})
	e.wantInfoDir(ts, "d", "d", "path: d\ntype: directory")
	e.wantInfoDir(ts, ".", ".", "path: .\ntype: directory")
}

// wantInfoDir checks file_info of the directory path (leading to the
// directory target, relative to Dir): the lines head, the size line, the
// lines more. A directory's size is whatever the storage reports; where
// the backend's own Stat has none, the line reads "size: unknown", as
// list_directory's "(size unknown)" does.
func (e *toolEnv) wantInfoDir(ts *tools.Set, path, target, head string, more ...string) {
	e.t.Helper()
	fi, err := backend.Stat(e.ctx, e.b, e.store(target))
	if err != nil {
		e.t.Fatalf("Stat(%q): %v", e.store(target), err)
	}
	size := fmt.Sprintf("size: %d bytes", fi.Size)
	if fi.Size < 0 {
		e.t.Logf("backend's Stat(%q) has no size: expecting \"size: unknown\"", e.store(target))
		size = "size: unknown"
	}
	e.want(ts, "file_info", args{"path": path}, lines(append([]string{head, size}, more...)...))
}

func (s *toolSuite) testInfoMissing(t *testing.T) {
	e := s.setup(t)
	e.put("f", "x")
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "file_info", args{"path": "nope"}, "Path not found: nope")
	e.wantRetry(ts, "file_info", args{"path": "d/nope"}, "Path not found: d/nope")
	e.wantRetry(ts, "file_info", args{"path": "f/x"}, "Path not found: f/x")
}

// ---------------------------------------------------------------------
// search_files, find_files, list_files, grep

// searchTree is the tree the walker scenarios share. "docs" sorts before
// "docs.txt", so depth-first order shows docs/readme.md first.
var searchTree = map[string]string{
	"bin.dat":          "hello\x00binary\n",
	"docs/readme.md":   "# Hello\nsay hello\n",
	"docs.txt":         "hello docs\n",
	"notes.txt":        "hello world\nbye\n",
	"src/main.go":      "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n",
	"src/util/util.go": "package util\n\nfunc Hello() string { return \"hello\" }\n",
}

// helloMatches are the lines of searchTree matching "hello", in walk
// order, as paths relative to Dir.
func (e *toolEnv) helloMatches() []string {
	return []string{
		e.shown("docs/readme.md") + ":2:say hello",
		e.shown("docs.txt") + ":1:hello docs",
		e.shown("notes.txt") + ":1:hello world",
		e.shown("src/main.go") + ":4:\tprintln(\"hello\")",
		e.shown("src/util/util.go") + ":3:func Hello() string { return \"hello\" }",
	}
}

func (s *toolSuite) searchFilesTests() []testCase {
	return []testCase{
		{"Matches", s.testSearchMatches},
		{"IncludeGlob", s.testSearchInclude},
		{"Cap", s.testSearchCap},
		{"NoMatches", s.testSearchNone},
		{"InvalidRegex", s.testSearchInvalid},
		{"PathArgument", s.testSearchPath},
	}
}

func (s *toolSuite) testSearchMatches(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(tools.Options{})
	e.want(ts, "search_files", args{"pattern": "hello"}, lines(e.helloMatches()...))
	e.want(ts, "search_files", args{"pattern": "(?i)^# hel+o$|bye", "path": "."},
		lines(e.shown("docs/readme.md")+":1:# Hello", e.shown("notes.txt")+":2:bye"))
}

func (s *toolSuite) testSearchInclude(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(tools.Options{})
	m := e.helloMatches()
	// fnmatch: "*" spans "/".
	e.want(ts, "search_files", args{"pattern": "hello", "include_glob": "*.go"}, lines(m[3], m[4]))
	e.want(ts, "search_files", args{"pattern": "hello", "include_glob": "*.md"}, m[0])
	e.want(ts, "search_files", args{"pattern": "hello", "include_glob": "*src/util/*"}, m[4])
	e.want(ts, "search_files", args{"pattern": "hello", "include_glob": "*.rs"}, "No matches found.")
}

func (s *toolSuite) testSearchCap(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	m := e.helloMatches()
	e.want(e.tools(tools.Options{MaxSearchResults: 3}), "search_files", args{"pattern": "hello"}, lines(m[0], m[1], m[2], "[... truncated at 3 matches]"))
	// The marker appears only when a further match was found.
	e.want(e.tools(tools.Options{MaxSearchResults: 5}), "search_files", args{"pattern": "hello"}, lines(m...))
}

func (s *toolSuite) testSearchNone(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(tools.Options{})
	e.want(ts, "search_files", args{"pattern": "no such text"}, "No matches found.")
	// A binary file is never searched.
	e.want(ts, "search_files", args{"pattern": "binary"}, "No matches found.")
}

func (s *toolSuite) testSearchInvalid(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(tools.Options{})
	msg := e.retry(ts, "search_files", args{"pattern": "hello("})
	if msg != "" && !strings.HasPrefix(msg, "Invalid regex pattern: ") {
		t.Errorf("search_files with an invalid regex: %q; want \"Invalid regex pattern: <detail>\"", msg)
	}
}

func (s *toolSuite) testSearchPath(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(tools.Options{})
	m := e.helloMatches()
	e.want(ts, "search_files", args{"pattern": "hello", "path": "src"}, lines(m[3], m[4]))
	e.want(ts, "search_files", args{"pattern": "hello", "path": "notes.txt"}, m[2])
	e.wantRetry(ts, "search_files", args{"pattern": "hello", "path": "nope"}, "Path not found: nope")
}

func (s *toolSuite) findFilesTests() []testCase {
	return []testCase{
		{"Patterns", s.testFindPatterns},
		{"Classes", s.testFindClasses},
		{"AbsoluteRefused", s.testFindAbsolute},
		{"DotDotRefused", s.testFindDotDot},
		{"Cap", s.testFindCap},
		{"PathArgument", s.testFindPath},
	}
}

func (s *toolSuite) testFindPatterns(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(tools.Options{})
	tests := []struct {
		pattern string
		want    []string
	}{
		{"**/*.go", []string{"src/main.go", "src/util/util.go"}},
		{"*.txt", []string{"docs.txt", "notes.txt"}},
		{"**/*.md", []string{"docs/readme.md"}},
		{"*", []string{"bin.dat", "docs/", "docs.txt", "notes.txt", "src/"}},
		{"src/*", []string{"src/main.go", "src/util/"}},
		{"*/*.go", []string{"src/main.go"}},
		{"?ocs.txt", []string{"docs.txt"}},
		{"**/util*", []string{"src/util/", "src/util/util.go"}},
		{"*.rs", nil},
	}
	for _, tt := range tests {
		var want []string
		for _, w := range tt.want {
			if rel, ok := strings.CutSuffix(w, "/"); ok {
				want = append(want, e.shown(rel)+"/")
			} else {
				want = append(want, e.shown(w))
			}
		}
		if len(want) == 0 {
			want = []string{"No matches found."}
		}
		e.want(ts, "find_files", args{"pattern": tt.pattern}, lines(want...))
	}
}

func (s *toolSuite) testFindClasses(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(tools.Options{})
	docs, notes := e.shown("docs.txt"), e.shown("notes.txt")
	e.want(ts, "find_files", args{"pattern": "[!d]*.txt"}, notes)
	e.want(ts, "find_files", args{"pattern": "[^d]*.txt"}, notes)
	e.want(ts, "find_files", args{"pattern": "[dn]*.txt"}, lines(docs, notes))
	e.want(ts, "find_files", args{"pattern": "[a-m]*.txt"}, docs)
}

func (s *toolSuite) testFindAbsolute(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "find_files", args{"pattern": "/etc/*"}, "Pattern '/etc/*' must be relative to the search path, not absolute.")
}

func (s *toolSuite) testFindDotDot(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "find_files", args{"pattern": "../*"}, "Pattern '../*' is not a valid glob pattern.")
	e.wantRetry(ts, "find_files", args{"pattern": "src/../../*.go"}, "Pattern 'src/../../*.go' is not a valid glob pattern.")
}

func (s *toolSuite) testFindCap(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	e.want(e.tools(tools.Options{MaxFindResults: 2}), "find_files", args{"pattern": "*"},
		lines(e.shown("bin.dat"), e.shown("docs")+"/", "[... truncated at 2 matches]"))
	e.want(e.tools(tools.Options{MaxFindResults: 2}), "find_files", args{"pattern": "**/*.go"},
		lines(e.shown("src/main.go"), e.shown("src/util/util.go")))
}

func (s *toolSuite) testFindPath(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(tools.Options{})
	e.want(ts, "find_files", args{"pattern": "*.go", "path": "src"}, e.shown("src/main.go"))
	e.want(ts, "find_files", args{"pattern": "**/*.go", "path": "src/util"}, e.shown("src/util/util.go"))
	e.wantRetry(ts, "find_files", args{"pattern": "*", "path": "nope"}, "Path not found: nope")
}

func (s *toolSuite) listFilesTests() []testCase {
	return []testCase{
		{"All", s.testListFilesAll},
		{"Glob", s.testListFilesGlob},
		{"Cap", s.testListFilesCap},
		{"IgnoreFiles", s.testListFilesIgnore},
		{"RipgrepMissing", s.testRipgrepMissing},
	}
}

// treeFiles is every file of searchTree, in path order.
func (e *toolEnv) treeFiles() []string {
	var out []string
	for _, f := range []string{"bin.dat", "docs/readme.md", "docs.txt", "notes.txt", "src/main.go", "src/util/util.go"} {
		out = append(out, e.shown(f))
	}
	return out
}

func (s *toolSuite) testListFilesAll(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(e.allTools(tools.Options{}))
	all := e.treeFiles()
	e.want(ts, "list_files", nil, lines(all...))
	e.want(ts, "list_files", args{"path": "src"}, lines(all[4:]...))
	e.want(ts, "list_files", args{"path": "notes.txt"}, all[3])
}

func (s *toolSuite) testListFilesGlob(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(e.allTools(tools.Options{}))
	all := e.treeFiles()
	// ripgrep globs: "*.go" at any depth, "!" excludes.
	e.want(ts, "list_files", args{"glob": "*.go"}, lines(all[4:]...))
	e.want(ts, "list_files", args{"glob": "!*.go"}, lines(all[:4]...))
	e.want(ts, "list_files", args{"glob": "*.rs"}, "No files found.")
}

func (s *toolSuite) testListFilesCap(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	all := e.treeFiles()
	e.want(e.tools(e.allTools(tools.Options{MaxFindResults: 2})), "list_files", nil, lines(all[0], all[1], "[... truncated at 2 files]"))
	e.want(e.tools(e.allTools(tools.Options{MaxFindResults: 6})), "list_files", nil, lines(all...))
}

// arrangeGitIgnore stores searchTree inside a git repository whose
// .gitignore excludes the .txt files.
func (e *toolEnv) arrangeGitIgnore() {
	e.t.Helper()
	e.putAll(searchTree)
	e.put(".git/HEAD", "ref: refs/heads/main\n")
	e.put(".gitignore", "*.txt\n")
}

func (s *toolSuite) testListFilesIgnore(t *testing.T) {
	e := s.setup(t)
	e.arrangeGitIgnore()
	ts := e.tools(e.allTools(tools.Options{}))
	all := e.treeFiles()
	e.want(ts, "list_files", nil, lines(all[0], all[1], all[4], all[5], hiddenNotice(2)))
	// The other walkers do not read ignore files.
	e.want(ts, "find_files", args{"pattern": "*.txt"}, lines(e.shown("docs.txt"), e.shown("notes.txt"), hiddenNotice(2)))
}

// testRipgrepMissing checks list_files and grep without ripgrep: on local
// disk they refuse with the contract's text, elsewhere the built-in engine
// answers as usual.
func (s *toolSuite) testRipgrepMissing(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(tools.Options{Tools: tools.AllTools(), RipgrepPath: "/nonexistent/fencefs-no-rg"})
	lp, ok := e.b.(backend.LocalPather)
	local := false
	if ok {
		_, local = lp.LocalPath(e.store("."))
	}
	if local {
		const msg = "ripgrep (rg) is not installed. Use search_files or find_files instead."
		e.wantRetry(ts, "list_files", nil, msg)
		e.wantRetry(ts, "grep", args{"pattern": "hello"}, msg)
		return
	}
	t.Logf("backend is not on local disk (no backend.LocalPather path): list_files and grep use the built-in engine")
	e.want(ts, "list_files", nil, lines(e.treeFiles()...))
	e.want(ts, "grep", args{"pattern": "hello"}, lines(e.helloMatches()...))
}

func (s *toolSuite) grepTests() []testCase {
	return []testCase{
		{"Matches", s.testGrepMatches},
		{"Context", s.testGrepContext},
		{"Options", s.testGrepOptions},
		{"Cap", s.testGrepCap},
		{"IgnoreFiles", s.testGrepIgnore},
	}
}

func (s *toolSuite) testGrepMatches(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(e.allTools(tools.Options{}))
	m := e.helloMatches()
	// The same format as search_files.
	e.want(ts, "grep", args{"pattern": "hello"}, lines(m...))
	e.want(ts, "grep", args{"pattern": "hello", "path": "src"}, lines(m[3], m[4]))
	e.want(ts, "grep", args{"pattern": "hello", "path": "notes.txt"}, m[2])
	e.want(ts, "grep", args{"pattern": "no such text"}, "No matches found.")
}

func (s *toolSuite) testGrepContext(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(e.allTools(tools.Options{}))
	notes, readme := e.shown("notes.txt"), e.shown("docs/readme.md")
	e.want(ts, "grep", args{"pattern": "bye", "context": 1}, lines(notes+"-1-hello world", notes+":2:bye"))
	e.want(ts, "grep", args{"pattern": "^say|^bye", "context": 1},
		lines(readme+"-1-# Hello", readme+":2:say hello", "--", notes+"-1-hello world", notes+":2:bye"))
}

func (s *toolSuite) testGrepOptions(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(e.allTools(tools.Options{}))
	m := e.helloMatches()
	e.want(ts, "grep", args{"pattern": "hello", "glob": "*.go"}, lines(m[3], m[4]))
	e.want(ts, "grep", args{"pattern": "hello", "file_type": "md"}, m[0])
	e.want(ts, "grep", args{"pattern": "println(", "literal": true}, m[3])
	e.want(ts, "grep", args{"pattern": "HELLO", "ignore_case": true},
		lines(e.shown("docs/readme.md")+":1:# Hello", m[0], m[1], m[2], m[3], m[4]))
}

func (s *toolSuite) testGrepCap(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	m := e.helloMatches()
	e.want(e.tools(e.allTools(tools.Options{MaxSearchResults: 3})), "grep", args{"pattern": "hello"},
		lines(m[0], m[1], m[2], "[... truncated at 3 lines]"))
	e.want(e.tools(e.allTools(tools.Options{MaxSearchResults: 5})), "grep", args{"pattern": "hello"}, lines(m...))
}

func (s *toolSuite) testGrepIgnore(t *testing.T) {
	e := s.setup(t)
	e.arrangeGitIgnore()
	ts := e.tools(e.allTools(tools.Options{}))
	m := e.helloMatches()
	e.want(ts, "grep", args{"pattern": "hello"}, lines(m[0], m[3], m[4], hiddenNotice(2)))
	// search_files reads no ignore files.
	e.want(ts, "search_files", args{"pattern": "hello"}, lines(append(m, hiddenNotice(2))...))
}

// ---------------------------------------------------------------------
// hidden entries

func (s *toolSuite) hiddenTests() []testCase {
	return []testCase{
		{"Walkers", s.testHiddenWalkers},
		{"NamedExplicitly", s.testHiddenExplicit},
	}
}

// arrangeHidden stores two dot-named children of Dir and one nested
// below a visible directory, which is skipped without being counted.
func (e *toolEnv) arrangeHidden() {
	e.t.Helper()
	e.putAll(map[string]string{
		".hidden/h.txt":    "hello hidden\n",
		".env":             "hello=1\n",
		"sub/.cache/c.txt": "hello cache\n",
		"sub/s.txt":        "hello s\n",
		"v.txt":            "hello\n",
	})
}

func (s *toolSuite) testHiddenWalkers(t *testing.T) {
	e := s.setup(t)
	e.arrangeHidden()
	ts := e.tools(e.allTools(tools.Options{}))
	notice := hiddenNotice(2)
	sub, v := e.shown("sub/s.txt"), e.shown("v.txt")
	e.want(ts, "list_directory", nil, lines(e.shown("sub")+"/", e.fileLine("v.txt", 6), notice))
	e.want(ts, "search_files", args{"pattern": "hello"}, lines(sub+":1:hello s", v+":1:hello", notice))
	e.want(ts, "find_files", args{"pattern": "**/*.txt"}, lines(sub, v, notice))
	e.want(ts, "find_files", args{"pattern": "*.rs"}, lines("No matches found.", notice))
	e.want(ts, "list_files", nil, lines(sub, v, notice))
	e.want(ts, "grep", args{"pattern": "hello"}, lines(sub+":1:hello s", v+":1:hello", notice))
	// Below the walk root hidden entries are skipped, not counted; naming
	// a directory makes its dot-named children count.
	e.want(ts, "find_files", args{"pattern": "**/*.txt", "path": "sub"}, lines(sub, hiddenNotice(1)))
}

func (s *toolSuite) testHiddenExplicit(t *testing.T) {
	e := s.setup(t)
	e.arrangeHidden()
	ts := e.tools(e.allTools(tools.Options{}))
	h := e.shown(".hidden/h.txt")
	e.want(ts, "list_directory", args{"path": ".hidden"}, e.fileLine(".hidden/h.txt", 13))
	e.want(ts, "search_files", args{"pattern": "hello", "path": ".hidden"}, h+":1:hello hidden")
	e.want(ts, "find_files", args{"pattern": "*", "path": ".hidden"}, h)
	e.want(ts, "list_files", args{"path": ".hidden"}, h)
	e.want(ts, "grep", args{"pattern": "hello", "path": ".hidden"}, h+":1:hello hidden")
	// Direct tools reach hidden files.
	e.want(ts, "read_file", args{"path": ".env"}, readHeader(".env", 1, "hello=1\n")+numbered(1, "hello=1"))
}

// ---------------------------------------------------------------------
// policy

func (s *toolSuite) policyTests() []testCase {
	return []testCase{
		{"Denied", s.testPolicyDenied},
		{"Protected", s.testPolicyProtected},
		{"ProtectedOptions", s.testPolicyProtectedOptions},
		{"Allowed", s.testPolicyAllowed},
		{"Outside", s.testPolicyOutside},
	}
}

// deniedMsg is the refusal of a denied path (rel relative to Dir).
func (e *toolEnv) deniedMsg(rel, pattern string) string {
	return fmt.Sprintf("Path '%s' is denied by pattern '%s'.", e.store(rel), pattern)
}

func (s *toolSuite) testPolicyDenied(t *testing.T) {
	e := s.setup(t)
	e.putAll(map[string]string{"private/s.txt": "secret\n", "pub.txt": "ok secret-free\n"})
	var events []tools.Event
	ts := e.tools(tools.Options{Denied: []string{"**/private"}, OnEvent: func(_ context.Context, ev tools.Event) { events = append(events, ev) }})
	// Denied patterns cover everything below a matching directory.
	e.wantRetry(ts, "read_file", args{"path": "private/s.txt"}, e.deniedMsg("private/s.txt", "**/private"))
	e.wantRetry(ts, "file_info", args{"path": "private"}, e.deniedMsg("private", "**/private"))
	e.wantRetry(ts, "list_directory", args{"path": "private"}, e.deniedMsg("private", "**/private"))
	e.wantRetry(ts, "search_files", args{"pattern": "x", "path": "private"}, e.deniedMsg("private", "**/private"))
	if !e.caps.ReadOnly {
		e.wantRetry(ts, "write_file", args{"path": "private/n.txt", "content": "x"}, e.deniedMsg("private/n.txt", "**/private"))
		e.wantAbsent("private/n.txt")
	}
	if len(events) != 0 {
		t.Errorf("denied calls emitted %#v; want nothing", events)
	}
	// A listing never shows what the agent could not read.
	e.want(ts, "list_directory", nil, e.fileLine("pub.txt", 15))
	e.want(ts, "search_files", args{"pattern": "secret"}, e.shown("pub.txt")+":1:ok secret-free")
	e.want(ts, "find_files", args{"pattern": "**/*.txt"}, e.shown("pub.txt"))
}

func (s *toolSuite) testPolicyProtected(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.putAll(map[string]string{".env": "A=1\n", "key.pem": "-----\n", "sub/x.txt": "x\n"})
	ts := e.tools(tools.Options{})
	protected := func(rel, pattern string) string {
		return fmt.Sprintf("Path '%s' is protected (matches '%s').", e.store(rel), pattern)
	}
	e.wantRetry(ts, "write_file", args{"path": ".env", "content": "A=2\n"}, protected(".env", "**/.env"))
	e.wantRetry(ts, "write_file", args{"path": "sub/.env.local", "content": "x"}, protected("sub/.env.local", "**/.env.*"))
	e.wantRetry(ts, "edit_file", args{"path": "key.pem", "old_text": "-----", "new_text": "x"}, protected("key.pem", "*.pem"))
	e.wantRetry(ts, "create_directory", args{"path": "sub/.git/hooks"}, protected("sub/.git/hooks", "**/.git"))
	e.wantRetry(ts, "write_file", args{"path": "secrets.yaml", "content": "x"}, protected("secrets.yaml", "**/secrets*"))
	e.wantContent(".env", "A=1\n")
	e.wantAbsent("sub/.git")
	e.wantAbsent("secrets.yaml")
	// Protection is for writes only: reading and listing still work.
	e.want(ts, "read_file", args{"path": ".env"}, readHeader(".env", 1, "A=1\n")+numbered(1, "A=1"))
	e.want(ts, "list_directory", nil, lines(e.fileLine("key.pem", 6), e.shown("sub")+"/", hiddenNotice(1)))
}

func (s *toolSuite) testPolicyProtectedOptions(t *testing.T) {
	e := s.setup(t)
	e.writable()
	extra := e.tools(tools.Options{Protected: []string{"*.lock"}})
	e.wantRetry(extra, "write_file", args{"path": "x.lock", "content": "x"}, fmt.Sprintf("Path '%s' is protected (matches '*.lock').", e.store("x.lock")))
	e.wantRetry(extra, "write_file", args{"path": ".env", "content": "x"}, fmt.Sprintf("Path '%s' is protected (matches '**/.env').", e.store(".env")))
	off := e.tools(tools.Options{NoDefaultProtect: true})
	e.want(off, "write_file", args{"path": ".env", "content": "x"}, "Wrote 1 chars (1 lines) to .env. [hash:"+hash12("x")+"]")
	e.wantContent(".env", "x")
}

func (s *toolSuite) testPolicyAllowed(t *testing.T) {
	e := s.setup(t)
	e.putAll(map[string]string{"a.md": "# a\n", "b.txt": "b\n", "docs/c.md": "# c\n"})
	ts := e.tools(tools.Options{Allowed: []string{"*.md"}})
	e.wantRetry(ts, "read_file", args{"path": "b.txt"}, fmt.Sprintf("Path '%s' does not match any allowed pattern.", e.store("b.txt")))
	e.want(ts, "read_file", args{"path": "docs/c.md"}, readHeader("docs/c.md", 1, "# c\n")+numbered(1, "# c"))
	// Walk roots are not judged by allowed patterns; their entries are,
	// and a walk still enters directories to find allowed files.
	e.want(ts, "list_directory", nil, e.fileLine("a.md", 4))
	e.want(ts, "find_files", args{"pattern": "**/*"}, lines(e.shown("a.md"), e.shown("docs/c.md")))
	e.want(ts, "search_files", args{"pattern": "."}, lines(e.shown("a.md")+":1:# a", e.shown("docs/c.md")+":1:# c"))
}

func (s *toolSuite) testPolicyOutside(t *testing.T) {
	e := s.setup(t)
	e.put("a.txt", "a\n")
	ts := e.tools(tools.Options{})
	out := e.escape(0)
	msg := fmt.Sprintf("Path '%s' resolves outside the root directory.", out)
	e.wantRetry(ts, "read_file", args{"path": out}, msg)
	e.wantRetry(ts, "file_info", args{"path": out}, msg)
	e.wantRetry(ts, "list_directory", args{"path": out}, msg)
	if !e.caps.ReadOnly {
		e.wantRetry(ts, "write_file", args{"path": out, "content": "x"}, msg)
	}
}

// ---------------------------------------------------------------------
// tool selection

func (s *toolSuite) selectionTests() []testCase {
	return []testCase{
		{"ReadOnlySet", s.testReadOnlySet},
	}
}

func (s *toolSuite) testReadOnlySet(t *testing.T) {
	e := s.setup(t)
	e.put("a.txt", "a\n")
	names := func(ts *tools.Set) []string {
		var out []string
		for _, tool := range ts.Tools() {
			out = append(out, tool.Name)
			if !tool.Annotations.ReadOnly {
				t.Errorf("read-only set offers %s, which is not annotated read-only", tool.Name)
			}
		}
		return out
	}
	ro := e.tools(tools.Options{ReadOnly: true})
	if got, want := names(ro), []string{"read_file", "list_directory", "search_files", "find_files", "file_info"}; !slices.Equal(got, want) {
		t.Errorf("ReadOnly tools = %q, want %q", got, want)
	}
	all := e.tools(tools.Options{ReadOnly: true, Tools: tools.AllTools()})
	if got, want := names(all), []string{"read_file", "list_directory", "search_files", "find_files", "file_info", "list_files", "grep"}; !slices.Equal(got, want) {
		t.Errorf("ReadOnly tools of AllTools = %q, want %q", got, want)
	}
	for _, tool := range []string{"write_file", "edit_file", "create_directory"} {
		if out, err := e.call(ro, tool, args{"path": "a.txt", "content": "x"}); err == nil || tools.IsRetry(err) {
			t.Errorf("read-only set: %s = %q, %v; want a fatal unknown-tool error", tool, out, err)
		}
	}
	e.want(ro, "read_file", args{"path": "a.txt"}, readHeader("a.txt", 1, "a\n")+numbered(1, "a"))
	e.wantContent("a.txt", "a\n")
}

// ---------------------------------------------------------------------
// events and change requests

func (s *toolSuite) eventTests() []testCase {
	return []testCase{
		{"Emitted", s.testEventsEmitted},
		{"NothingOnFailure", s.testEventsOnFailure},
	}
}

// eventLog records the events of a tool set.
type eventLog struct{ events []tools.Event }

func (l *eventLog) on(_ context.Context, ev tools.Event) { l.events = append(l.events, ev) }

// take returns the events recorded since the last take.
func (l *eventLog) take() []tools.Event {
	out := l.events
	l.events = nil
	return out
}

// wantEvents fails unless the events recorded since the last take are
// exactly want.
func (e *toolEnv) wantEvents(what string, l *eventLog, want ...tools.Event) {
	e.t.Helper()
	got := l.take()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		e.t.Errorf("%s: events\n%#v\nwant\n%#v", what, got, want)
	}
}

func (s *toolSuite) testEventsEmitted(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("a.txt", "one\ntwo\n")
	l := &eventLog{}
	ts := e.tools(tools.Options{OnEvent: l.on})
	e.ok(ts, "read_file", args{"path": "a.txt", "limit": 1})
	e.wantEvents("read_file", l, tools.FileRead{Path: e.canon("a.txt"), ContentHash: fullHash("one\ntwo\n")})
	e.ok(ts, "list_directory", nil)
	e.wantEvents("list_directory", l, tools.DirectoryListed{Path: e.canon("."), EntryCount: 1})
	e.ok(ts, "write_file", args{"path": "n.txt", "content": "x\n"})
	e.wantEvents("write_file", l, tools.FileWritten{Path: e.canon("n.txt"), ContentHash: fullHash("x\n")})
	e.ok(ts, "edit_file", args{"path": "a.txt", "old_text": "two", "new_text": "2"})
	p := e.diffPath("a.txt")
	e.wantEvents("edit_file", l, tools.FileEdited{
		FileWritten: tools.FileWritten{Path: e.canon("a.txt"), ContentHash: fullHash("one\n2\n")},
		Diff:        "--- a/" + p + "\n+++ b/" + p + "\n@@ -1,2 +1,2 @@\n one\n-two\n+2",
	})
	e.ok(ts, "create_directory", args{"path": "d/e"})
	e.wantEvents("create_directory", l, tools.DirectoryCreated{Path: e.canon("d/e")})
	e.ok(ts, "search_files", args{"pattern": "x|one"})
	e.wantEvents("search_files", l, tools.FilesSearched{Path: e.canon("."), Pattern: "x|one", Search: "grep", MatchCount: 2})
	e.ok(ts, "find_files", args{"pattern": "*.txt"})
	e.wantEvents("find_files", l, tools.FilesSearched{Path: e.canon("."), Pattern: "*.txt", Search: "find", MatchCount: 2})
	e.ok(ts, "find_files", args{"pattern": "*", "path": "d"})
	e.wantEvents("find_files in d", l, tools.FilesSearched{Path: e.canon("d"), Pattern: "*", Search: "find", MatchCount: 1})
	capped := e.tools(tools.Options{OnEvent: l.on, MaxSearchResults: 1})
	e.ok(capped, "search_files", args{"pattern": "x|one"})
	e.wantEvents("capped search_files", l, tools.FilesSearched{Path: e.canon("."), Pattern: "x|one", Search: "grep", MatchCount: 1, Truncated: true})
}

func (s *toolSuite) testEventsOnFailure(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.putAll(map[string]string{"a.txt": "one\n", "private/p.txt": "p\n"})
	l := &eventLog{}
	ts := e.tools(tools.Options{OnEvent: l.on, Denied: []string{"**/private"}})
	e.retry(ts, "read_file", args{"path": "nope.txt"})
	e.retry(ts, "read_file", args{"path": "private/p.txt"})
	e.retry(ts, "list_directory", args{"path": "private"})
	e.retry(ts, "write_file", args{"path": "a.txt", "content": "x", "expected_hash": "000000000000"})
	e.retry(ts, "write_file", args{"path": "nodir/a.txt", "content": "x"})
	e.retry(ts, "edit_file", args{"path": "a.txt", "old_text": "zzz", "new_text": "x"})
	e.retry(ts, "create_directory", args{"path": "a.txt"})
	e.retry(ts, "search_files", args{"pattern": "("})
	e.retry(ts, "find_files", args{"pattern": "/abs"})
	e.wantEvents("refused calls", l)
}

func (s *toolSuite) changeRequestTests() []testCase {
	return []testCase{
		{"Announced", s.testChangeAnnounced},
		{"Cancelled", s.testChangeCancelled},
		{"ListenerError", s.testChangeListenerError},
	}
}

// changeSeen is the exported part of a ChangeRequest.
type changeSeen struct {
	Path, Operation, Diff string
	Truncated             bool
}

func (s *toolSuite) testChangeAnnounced(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("a.txt", "a\nb\n")
	var got []changeSeen
	ts := e.tools(tools.Options{OnChangeRequest: func(_ context.Context, r *tools.ChangeRequest) error {
		got = append(got, changeSeen{r.Path, r.Operation, r.Diff, r.Truncated})
		return nil
	}})
	e.ok(ts, "write_file", args{"path": "n.txt", "content": "x\ny\n"})
	e.ok(ts, "edit_file", args{"path": "a.txt", "old_text": "b", "new_text": "c"})
	e.ok(ts, "create_directory", args{"path": "d"})
	e.ok(ts, "create_directory", args{"path": "d"})
	n, a := e.diffPath("n.txt"), e.diffPath("a.txt")
	want := []changeSeen{
		{e.canon("n.txt"), "write", "--- a/" + n + "\n+++ b/" + n + "\n@@ -0,0 +1,2 @@\n+x\n+y", false},
		{e.canon("a.txt"), "edit", "--- a/" + a + "\n+++ b/" + a + "\n@@ -1,2 +1,2 @@\n a\n-b\n+c", false},
		{e.canon("d"), "create_directory", "", false},
	}
	if !slices.Equal(got, want) {
		t.Errorf("change requests\n%#v\nwant\n%#v", got, want)
	}
}

func (s *toolSuite) testChangeCancelled(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("a.txt", "a\n")
	l := &eventLog{}
	reason := "not now"
	ts := e.tools(tools.Options{OnEvent: l.on, OnChangeRequest: func(_ context.Context, r *tools.ChangeRequest) error {
		r.Cancel(reason)
		return nil
	}})
	e.want(ts, "write_file", args{"path": "n.txt", "content": "x"}, "['n.txt' was not written: not now]")
	e.want(ts, "edit_file", args{"path": "a.txt", "old_text": "a", "new_text": "b"}, "['a.txt' was not edited: not now]")
	reason = ""
	e.want(ts, "create_directory", args{"path": "d"}, "['d' was not created: cancelled by a listener]")
	e.wantAbsent("n.txt")
	e.wantAbsent("d")
	e.wantContent("a.txt", "a\n")
	e.wantEvents("cancelled changes", l)
}

func (s *toolSuite) testChangeListenerError(t *testing.T) {
	e := s.setup(t)
	e.writable()
	boom := errors.New("listener unavailable")
	ts := e.tools(tools.Options{OnChangeRequest: func(context.Context, *tools.ChangeRequest) error { return boom }})
	out, err := e.call(ts, "write_file", args{"path": "n.txt", "content": "x"})
	if err == nil || tools.IsRetry(err) || !errors.Is(err, boom) {
		t.Errorf("write_file with a failing listener = %q, %v; want a fatal error wrapping the listener's", out, err)
	}
	e.wantAbsent("n.txt")
}

// ---------------------------------------------------------------------
// working directory

func (s *toolSuite) cwdTests() []testCase {
	return []testCase{
		{"Subdirectory", s.testCwdSubdir},
	}
}

func (s *toolSuite) testCwdSubdir(t *testing.T) {
	e := s.setup(t)
	e.putAll(map[string]string{"top.txt": "top\n", "sub/s.txt": "sub\n", "other/o.txt": "other\n"})
	l := &eventLog{}
	ts := e.tools(tools.Options{Cwd: "sub", OnEvent: l.on})
	e.want(ts, "read_file", args{"path": "s.txt"}, readHeader("s.txt", 1, "sub\n")+numbered(1, "sub"))
	e.want(ts, "read_file", args{"path": "../top.txt"}, readHeader("../top.txt", 1, "top\n")+numbered(1, "top"))
	e.wantEvents("read_file", l,
		tools.FileRead{Path: e.canon("sub/s.txt"), ContentHash: fullHash("sub\n")},
		tools.FileRead{Path: e.canon("top.txt"), ContentHash: fullHash("top\n")})
	// Walker output is relative to the working directory, with ".."
	// where needed (rooted in a rooted namespace).
	e.want(ts, "list_directory", nil, e.fileLineAs("sub/s.txt", "s.txt", 4))
	// The shortest relative path: the working directory itself is ".".
	e.want(ts, "list_directory", args{"path": ".."},
		lines(e.shownAs("other", "../other")+"/", e.shownAs("sub", ".")+"/", e.fileLineAs("top.txt", "../top.txt", 4)))
	e.want(ts, "find_files", args{"pattern": "**/*.txt", "path": ".."},
		lines(e.shownAs("other/o.txt", "../other/o.txt"), e.shownAs("sub/s.txt", "s.txt"), e.shownAs("top.txt", "../top.txt")))
	e.want(ts, "search_files", args{"pattern": "o", "path": ".."},
		lines(e.shownAs("other/o.txt", "../other/o.txt")+":1:other", e.shownAs("top.txt", "../top.txt")+":1:top"))
	e.want(ts, "find_files", args{"pattern": "*.txt", "path": "../other"}, e.shownAs("other/o.txt", "../other/o.txt"))
	l.take()
	e.wantRetry(ts, "read_file", args{"path": e.escape(1)}, fmt.Sprintf("Path '%s' resolves outside the root directory.", e.escape(1)))
	if e.caps.ReadOnly {
		return
	}
	e.want(ts, "write_file", args{"path": "../new.txt", "content": "n\n"}, "Wrote 2 chars (1 lines) to ../new.txt. [hash:"+hash12("n\n")+"]")
	e.wantContent("new.txt", "n\n")
	e.wantEvents("write_file", l, tools.FileWritten{Path: e.canon("new.txt"), ContentHash: fullHash("n\n")})
}

// ---------------------------------------------------------------------
// symlinks and special files

func (s *toolSuite) toolSymlinkTests() []testCase {
	return []testCase{
		{"Read", s.testLinkRead},
		{"Walkers", s.testLinkWalkers},
		{"FileInfo", s.testLinkInfo},
		{"WriteThrough", s.testLinkWrite},
		{"TargetJudged", s.testLinkPolicy},
	}
}

// arrangeLinks stores a.txt and d/x.txt and links to them, to nowhere,
// outside the root and in a loop.
func (e *toolEnv) arrangeToolLinks() {
	e.t.Helper()
	sl := e.symlinker()
	e.putAll(map[string]string{"a.txt": "target\n", "d/x.txt": "in d\n"})
	e.link(sl, "a.txt", "lf")
	e.link(sl, "d", "ld")
	e.link(sl, "nowhere", "dangling")
	e.link(sl, strings.Repeat("../", 24)+"etc/passwd", "out")
	e.link(sl, "loop2", "loop1")
	e.link(sl, "loop1", "loop2")
}

func (s *toolSuite) testLinkRead(t *testing.T) {
	e := s.setup(t)
	e.arrangeToolLinks()
	l := &eventLog{}
	ts := e.tools(tools.Options{OnEvent: l.on})
	e.want(ts, "read_file", args{"path": "lf"}, readHeader("lf", 1, "target\n")+numbered(1, "target"))
	e.want(ts, "read_file", args{"path": "ld/x.txt"}, readHeader("ld/x.txt", 1, "in d\n")+numbered(1, "in d"))
	// Events carry the resolved path.
	e.wantEvents("read_file through links", l,
		tools.FileRead{Path: e.canon("a.txt"), ContentHash: fullHash("target\n")},
		tools.FileRead{Path: e.canon("d/x.txt"), ContentHash: fullHash("in d\n")})
	e.wantRetry(ts, "read_file", args{"path": "out"}, "Path 'out' resolves outside the root directory.")
	e.wantRetry(ts, "read_file", args{"path": "loop1"}, "Path 'loop1' resolves through a symlink loop.")
	e.wantRetry(ts, "read_file", args{"path": "dangling"}, "File not found: dangling")
}

func (s *toolSuite) testLinkWalkers(t *testing.T) {
	e := s.setup(t)
	e.arrangeToolLinks()
	ts := e.tools(tools.Options{})
	// Links that lead outside, dangle or loop are dropped; a link shows
	// what it leads to.
	e.want(ts, "list_directory", nil, lines(e.fileLine("a.txt", 7), e.shown("d")+"/", e.shown("ld")+"/", e.shown("lf")+"  (7 bytes)"))
	e.want(ts, "find_files", args{"pattern": "*"}, lines(e.shown("a.txt"), e.shown("d")+"/", e.shown("ld")+"/", e.shown("lf")))
	// A symlinked directory is never descended: no duplicates.
	e.want(ts, "find_files", args{"pattern": "**/x.txt"}, e.shown("d/x.txt"))
	e.want(ts, "search_files", args{"pattern": "in d"}, e.shown("d/x.txt")+":1:in d")
}

func (s *toolSuite) testLinkInfo(t *testing.T) {
	e := s.setup(t)
	e.arrangeToolLinks()
	ts := e.tools(tools.Options{})
	e.want(ts, "file_info", args{"path": "lf"},
		lines("path: lf", "type: file", "size: 7 bytes", "binary: false", "lines: 1", "hash: "+hash12("target\n"), "symlink_target: a.txt"))
	e.wantInfoDir(ts, "ld", "d", "path: ld\ntype: directory", "symlink_target: d")
	e.wantRetry(ts, "file_info", args{"path": "out"}, "Path 'out' resolves outside the root directory.")
}

func (s *toolSuite) testLinkWrite(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.arrangeToolLinks()
	ts := e.tools(tools.Options{})
	e.want(ts, "write_file", args{"path": "lf", "content": "new\n"}, "Wrote 4 chars (1 lines) to lf. [hash:"+hash12("new\n")+"]")
	e.wantContent("a.txt", "new\n")
	if fi, err := backend.Stat(e.ctx, e.b, e.store("lf")); err != nil || !fi.IsSymlink() {
		t.Errorf("after write_file through lf: Stat(%q) = %+v, %v; want the symlink kept", e.store("lf"), fi, err)
	}
	e.wantRetry(ts, "write_file", args{"path": "out", "content": "x"}, "Path 'out' resolves outside the root directory.")
}

// testLinkPolicy checks that a link name cannot launder a denied target.
func (s *toolSuite) testLinkPolicy(t *testing.T) {
	e := s.setup(t)
	e.arrangeToolLinks()
	ts := e.tools(tools.Options{Denied: []string{"**/a.txt"}})
	e.wantRetry(ts, "read_file", args{"path": "lf"}, e.deniedMsg("a.txt", "**/a.txt"))
	e.want(ts, "list_directory", nil, lines(e.shown("d")+"/", e.shown("ld")+"/"))
}

func (s *toolSuite) toolSpecialFileTests() []testCase {
	return []testCase{
		{"FIFO", s.testToolFIFO},
	}
}

func (s *toolSuite) testToolFIFO(t *testing.T) {
	e := s.setup(t)
	if !e.caps.SpecialFiles {
		t.Skipf("skipped: backend holds no special files (Capabilities.SpecialFiles=false)")
	}
	mk, ok := s.h.(SpecialFileMaker)
	if !ok {
		t.Skipf("skipped: the harness has no conformance.SpecialFileMaker (Capabilities.SpecialFiles=true)")
	}
	e.put("a.txt", "hello\n")
	mk.MakeFIFO(e.ctx, t, e.b, e.store("p"))
	ts := e.tools(e.allTools(tools.Options{}))
	e.wantRetry(ts, "read_file", args{"path": "p"}, "File not found: p")
	e.wantRetry(ts, "edit_file", args{"path": "p", "old_text": "x", "new_text": "y"}, "File not found: p")
	e.wantRetry(ts, "file_info", args{"path": "p"}, "Path 'p' is not a regular file or directory.")
	if !e.caps.ReadOnly {
		e.wantRetry(ts, "write_file", args{"path": "p", "content": "x"}, "Path 'p' exists and is not a regular file.")
	}
	// Every walker skips it, and none blocks on it.
	e.want(ts, "list_directory", nil, e.fileLine("a.txt", 6))
	e.want(ts, "find_files", args{"pattern": "*"}, e.shown("a.txt"))
	e.want(ts, "search_files", args{"pattern": "hello"}, e.shown("a.txt")+":1:hello")
	e.want(ts, "list_files", nil, e.shown("a.txt"))
	e.want(ts, "grep", args{"pattern": "hello"}, e.shown("a.txt")+":1:hello")
}

// ---------------------------------------------------------------------
// arguments

func (s *toolSuite) argumentTests() []testCase {
	return []testCase{
		{"Strict", s.testArgumentsStrict},
	}
}

func (s *toolSuite) testArgumentsStrict(t *testing.T) {
	e := s.setup(t)
	e.put("a.txt", "a\n")
	ts := e.tools(tools.Options{})
	e.wantRetryMentions(ts, "read_file", args{"path": "a.txt", "bogus": 1}, "bogus")
	e.wantRetryMentions(ts, "read_file", args{"offset": 1}, "path")
	e.wantRetryMentions(ts, "read_file", args{"path": 3}, "path")
	e.wantRetryMentions(ts, "read_file", args{"path": "a.txt", "limit": "ten"}, "limit")
	e.wantRetryMentions(ts, "search_files", args{"path": "."}, "pattern")
	e.wantRetryMentions(ts, "write_file", args{"path": "n.txt"}, "content")
}
