package conformance

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/tools"
)

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
	// Identical content: an empty diff.
	e.ok(ts, "write_file", args{"path": "n.txt", "content": "x\ny\n"})
	n, a := e.diffPath("n.txt"), e.diffPath("a.txt")
	want := []changeSeen{
		{e.canon("n.txt"), "write", "--- a/" + n + "\n+++ b/" + n + "\n@@ -0,0 +1,2 @@\n+x\n+y", false},
		{e.canon("a.txt"), "edit", "--- a/" + a + "\n+++ b/" + a + "\n@@ -1,2 +1,2 @@\n a\n-b\n+c", false},
		{e.canon("d"), "create_directory", "", false},
		{e.canon("n.txt"), "write", "", false},
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
	e.want(ts, "write_file", args{"path": "../new.txt", "content": "n\n"}, "Wrote 2 chars (1 line) to ../new.txt. [hash:"+hash12("n\n")+"]")
	e.wantContent("new.txt", "n\n")
	e.wantEvents("write_file", l, tools.FileWritten{Path: e.canon("new.txt"), ContentHash: fullHash("n\n")})
}

// ---------------------------------------------------------------------
// arguments

func (s *toolSuite) argumentTests() []testCase {
	return []testCase{
		{"Strict", s.testArgumentsStrict},
		{"RefusedSpellings", s.testRefusedSpellings},
	}
}

func (s *toolSuite) testArgumentsStrict(t *testing.T) {
	e := s.setup(t)
	e.put("a.txt", "a\n")
	ts := e.tools(tools.Options{})
	// The texts of docs/tool-contract.md section 10.
	e.wantRetry(ts, "read_file", args{"path": "a.txt", "bogus": 1}, "Unknown argument 'bogus'. Valid arguments: path, offset, limit.")
	e.wantRetry(ts, "read_file", args{"offset": 1}, "Missing required argument 'path'.")
	e.wantRetry(ts, "read_file", args{"path": 3}, "Argument 'path' must be a string.")
	e.wantRetry(ts, "read_file", args{"path": "a.txt", "limit": "ten"}, "Argument 'limit' must be an integer.")
	e.wantRetry(ts, "search_files", args{"path": "."}, "Missing required argument 'pattern'.")
	e.wantRetry(ts, "write_file", args{"path": "n.txt"}, "Missing required argument 'content'.")
	e.wantRetryMentions(ts, "edit_file", args{"path": "a.txt", "replacements": "x"}, "'replacements'")
	raw, err := ts.Call(e.ctx, "read_file", []byte(`{"path": "a.txt",`))
	if !tools.IsRetry(err) || !strings.HasPrefix(err.Error(), "Invalid arguments: ") || !strings.HasSuffix(err.Error(), ". Send the arguments as a JSON object.") {
		t.Errorf("read_file with malformed JSON = %q, %v; want the retry \"Invalid arguments: <detail>. Send the arguments as a JSON object.\"", raw, err)
	}
}

// testRefusedSpellings checks the tool paths refused as input whatever the
// storage: each is a retry, and nothing is created.
func (s *toolSuite) testRefusedSpellings(t *testing.T) {
	e := s.setup(t)
	e.put("a.txt", "a\n")
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "read_file", args{"path": ""}, "Path is empty. Name a file or directory, or '.' for the working directory.")
	for _, p := range []string{"a\x01b", "a\nb.txt", "a\x7fb", "C:/x", "c:x", "~/x", "sub/~x", "a\\b"} {
		e.retry(ts, "read_file", args{"path": p})
		if !e.caps.ReadOnly {
			e.retry(ts, "write_file", args{"path": p, "content": "x"})
		}
	}
	e.wantNames(".", "a.txt")
}

// wantNames fails unless the directory rel holds exactly names.
func (e *toolEnv) wantNames(rel string, names ...string) {
	e.t.Helper()
	entries, err := e.b.List(e.ctx, e.store(rel))
	if err != nil {
		e.t.Fatalf("List(%q): %v", e.store(rel), err)
	}
	var got []string
	for _, en := range entries {
		got = append(got, en.Name)
	}
	slices.Sort(got)
	if !slices.Equal(got, names) {
		e.t.Errorf("List(%q) = %q, want %q", e.store(rel), got, names)
	}
}
