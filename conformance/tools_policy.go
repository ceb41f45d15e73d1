package conformance

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/tools"
)

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

// deniedMsg is the refusal of a denied path (rel relative to Dir), which
// names the path as the model can pass it back: rooted in a rooted namespace.
func (e *toolEnv) deniedMsg(rel, pattern string) string {
	return fmt.Sprintf("Path '%s' is denied by pattern '%s'.", e.canon(rel), pattern)
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
		return fmt.Sprintf("Path '%s' is protected (matches '%s').", e.canon(rel), pattern)
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
	e.wantRetry(extra, "write_file", args{"path": "x.lock", "content": "x"}, fmt.Sprintf("Path '%s' is protected (matches '*.lock').", e.canon("x.lock")))
	e.wantRetry(extra, "write_file", args{"path": ".env", "content": "x"}, fmt.Sprintf("Path '%s' is protected (matches '**/.env').", e.canon(".env")))
	off := e.tools(tools.Options{NoDefaultProtect: true})
	e.want(off, "write_file", args{"path": ".env", "content": "x"}, "Wrote 1 char (1 line) to .env. [hash:"+hash12("x")+"]")
	e.wantContent(".env", "x")
}

func (s *toolSuite) testPolicyAllowed(t *testing.T) {
	e := s.setup(t)
	e.putAll(map[string]string{"a.md": "# a\n", "b.txt": "b\n", "docs/c.md": "# c\n"})
	ts := e.tools(tools.Options{Allowed: []string{"*.md"}})
	e.wantRetry(ts, "read_file", args{"path": "b.txt"}, fmt.Sprintf("Path '%s' does not match any allowed pattern.", e.canon("b.txt")))
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
		{"ReadOnlyBackend", s.testReadOnlyBackend},
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
	// A change asked of a read-only set is a retry naming the path: the
	// model can write elsewhere, or stop.
	e.wantRetry(ro, "write_file", args{"path": "a.txt", "content": "x"}, "Path 'a.txt' cannot be changed: this tool set is read-only.")
	e.wantRetry(ro, "edit_file", args{"path": "a.txt", "old_text": "a", "new_text": "b"}, "Path 'a.txt' cannot be changed: this tool set is read-only.")
	e.wantRetry(ro, "create_directory", args{"path": "newdir"}, "Path 'newdir' cannot be changed: this tool set is read-only.")
	e.wantAbsent("newdir")
	e.want(ro, "read_file", args{"path": "a.txt"}, readHeader("a.txt", 1, "a\n")+numbered(1, "a"))
	e.wantContent("a.txt", "a\n")
}

// testReadOnlyBackend checks that a write to read-only storage is a retry
// naming the path, and changes nothing.
func (s *toolSuite) testReadOnlyBackend(t *testing.T) {
	e := s.setup(t)
	if !e.caps.ReadOnly {
		t.Skipf("skipped: backend is writable (Capabilities.ReadOnly=false)")
	}
	e.put("a.txt", "a\n")
	ts := e.tools(tools.Options{})
	msg := func(p string) string {
		return "Path '" + p + "' is on read-only storage and cannot be changed. Write somewhere else."
	}
	e.wantRetry(ts, "write_file", args{"path": "a.txt", "content": "x"}, msg("a.txt"))
	e.wantRetry(ts, "write_file", args{"path": "n.txt", "content": "x"}, msg("n.txt"))
	e.wantRetry(ts, "edit_file", args{"path": "a.txt", "old_text": "a", "new_text": "b"}, msg("a.txt"))
	e.wantRetry(ts, "create_directory", args{"path": "newdir"}, msg("newdir"))
	e.wantContent("a.txt", "a\n")
	e.wantAbsent("n.txt")
	e.wantAbsent("newdir")
	e.want(ts, "read_file", args{"path": "a.txt"}, readHeader("a.txt", 1, "a\n")+numbered(1, "a"))
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
	e.want(ts, "write_file", args{"path": "lf", "content": "new\n"}, "Wrote 4 chars (1 line) to lf. [hash:"+hash12("new\n")+"]")
	e.wantContent("a.txt", "new\n")
	if fi, err := backend.Stat(e.ctx, e.b, e.store("lf")); err != nil || !fi.IsSymlink() {
		t.Errorf("after write_file through lf: Stat(%q) = %+v, %v; want the symlink kept", e.store("lf"), fi, err)
	}
	e.wantRetry(ts, "write_file", args{"path": "out", "content": "x"}, "Path 'out' resolves outside the root directory.")
}

// testLinkPolicy checks that a link name cannot launder a denied target,
// and that the refusal names the link, never its target.
func (s *toolSuite) testLinkPolicy(t *testing.T) {
	e := s.setup(t)
	e.arrangeToolLinks()
	ts := e.tools(tools.Options{Denied: []string{"**/a.txt"}})
	e.wantRetry(ts, "read_file", args{"path": "lf"}, e.deniedMsg("lf", "**/a.txt"))
	e.want(ts, "list_directory", nil, lines(e.shown("d")+"/", e.shown("ld")+"/"))
	// An allowed pattern must match the path as written and as resolved.
	allowed := e.tools(tools.Options{Allowed: []string{"*.txt"}})
	e.wantRetry(allowed, "read_file", args{"path": "lf"}, fmt.Sprintf("Path '%s' does not match any allowed pattern.", e.canon("lf")))
	e.want(allowed, "read_file", args{"path": "a.txt"}, readHeader("a.txt", 1, "target\n")+numbered(1, "target"))
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
