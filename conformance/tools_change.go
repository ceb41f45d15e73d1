package conformance

import (
	"context"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/tools"
)

// ---------------------------------------------------------------------
// delete_file, move_file, copy_file

func (s *toolSuite) deleteFileTests() []testCase {
	return []testCase{
		{"File", s.testDeleteFile},
		{"ExpectedHash", s.testDeleteExpectedHash},
		{"Directory", s.testDeleteDirectory},
		{"EmptyDirectory", s.testDeleteEmptyDirectory},
		{"ProtectedInTree", s.testDeleteProtectedTree},
		{"Refusals", s.testDeleteRefusals},
	}
}

func (s *toolSuite) moveFileTests() []testCase {
	return []testCase{
		{"File", s.testMoveFile},
		{"Overwrite", s.testMoveOverwrite},
		{"Directory", s.testMoveDirectory},
		{"Refusals", s.testMoveRefusals},
	}
}

func (s *toolSuite) copyFileTests() []testCase {
	return []testCase{
		{"File", s.testCopyFile},
		{"Refusals", s.testCopyRefusals},
	}
}

func (s *toolSuite) changeToolTests() []testCase {
	return []testCase{
		{"ChangeRequests", s.testChangeToolRequests},
		{"Cancelled", s.testChangeToolCancelled},
		{"Events", s.testChangeToolEvents},
		{"ReadOnlySet", s.testChangeToolReadOnlySet},
		{"ReadOnlyStorage", s.testChangeToolReadOnlyStorage},
	}
}

// changeTools is a tool set with delete_file, move_file and copy_file,
// after checking that the backend can run them.
func (e *toolEnv) changeTools(o tools.Options) *tools.Set {
	e.t.Helper()
	e.writable()
	if !implements[backend.Remover](e.b) || !implements[backend.Renamer](e.b) {
		e.t.Skipf("skipped: backend does not implement backend.Remover (%v) and backend.Renamer (%v)",
			implements[backend.Remover](e.b), implements[backend.Renamer](e.b))
	}
	return e.tools(e.allTools(o))
}

func (s *toolSuite) testDeleteFile(t *testing.T) {
	e := s.setup(t)
	ts := e.changeTools(tools.Options{})
	e.put("a.txt", "a\n")
	e.put("d/b.txt", "b\n")
	e.want(ts, "delete_file", args{"path": "a.txt"}, "Deleted file: a.txt")
	e.wantAbsent("a.txt")
	e.want(ts, "delete_file", args{"path": "d/../d/b.txt"}, "Deleted file: d/../d/b.txt")
	e.wantAbsent("d/b.txt")
	e.wantRetry(ts, "delete_file", args{"path": "a.txt"}, "Path not found: a.txt")
}

func (s *toolSuite) testDeleteExpectedHash(t *testing.T) {
	e := s.setup(t)
	ts := e.changeTools(tools.Options{})
	e.put("a.txt", "new\n")
	e.wantRetry(ts, "delete_file", args{"path": "a.txt", "expected_hash": hash12("old\n")},
		"Conflict: file 'a.txt' has changed (expected hash:"+hash12("old\n")+", got hash:"+hash12("new\n")+"). Re-read the file and retry.")
	e.wantContent("a.txt", "new\n")
	e.want(ts, "delete_file", args{"path": "a.txt", "expected_hash": "hash:" + hash12("new\n")}, "Deleted file: a.txt")
	e.wantAbsent("a.txt")
}

func (s *toolSuite) testDeleteDirectory(t *testing.T) {
	e := s.setup(t)
	ts := e.changeTools(tools.Options{})
	e.putAll(map[string]string{"d/a.txt": "a", "d/sub/b.txt": "b", "d/.hidden": "h", "keep.txt": "k"})
	e.wantRetry(ts, "delete_file", args{"path": "d"}, "Directory 'd' is not empty. Pass recursive: true to delete it and everything in it.")
	e.wantRetry(ts, "delete_file", args{"path": "d", "recursive": true, "expected_hash": hash12("a")},
		"'d' is a directory; expected_hash applies to files only.")
	e.wantContent("d/sub/b.txt", "b")
	e.want(ts, "delete_file", args{"path": "d", "recursive": true}, "Deleted directory: d (4 entries)")
	e.wantAbsent("d")
	e.put("one/a.txt", "a")
	e.want(ts, "delete_file", args{"path": "one", "recursive": true}, "Deleted directory: one (1 entry)")
	e.wantContent("keep.txt", "k")
}

func (s *toolSuite) testDeleteEmptyDirectory(t *testing.T) {
	e := s.setup(t)
	ts := e.changeTools(tools.Options{})
	if !e.caps.EmptyDirs {
		t.Skipf("skipped: backend cannot hold an empty directory (Capabilities.EmptyDirs=false)")
	}
	e.mkdir("d/e")
	e.want(ts, "delete_file", args{"path": "d/e"}, "Deleted directory: d/e")
	e.wantAbsent("d/e")
	e.want(ts, "delete_file", args{"path": "d", "recursive": true}, "Deleted directory: d")
}

func (s *toolSuite) testDeleteProtectedTree(t *testing.T) {
	e := s.setup(t)
	ts := e.changeTools(tools.Options{Denied: []string{"*/private"}})
	e.putAll(map[string]string{"repo/a.txt": "a", "repo/sub/.env": "SECRET=1", "box/private/x": "x", "box/y": "y"})
	e.wantRetry(ts, "delete_file", args{"path": "repo", "recursive": true},
		"Directory 'repo' cannot be changed as a whole: Path '"+e.canon("repo/sub/.env")+"' is protected (matches '**/.env').")
	e.wantRetry(ts, "delete_file", args{"path": "box", "recursive": true},
		"Directory 'box' cannot be changed as a whole: Path '"+e.canon("box/private")+"' is denied by pattern '*/private'.")
	e.wantContent("repo/a.txt", "a")
	e.wantContent("repo/sub/.env", "SECRET=1")
	e.wantContent("box/y", "y")
	e.wantRetry(ts, "delete_file", args{"path": "repo/sub/.env"}, "Path '"+e.canon("repo/sub/.env")+"' is protected (matches '**/.env').")
}

func (s *toolSuite) testDeleteRefusals(t *testing.T) {
	e := s.setup(t)
	ts := e.changeTools(tools.Options{})
	if e.rooted {
		e.wantRetry(ts, "delete_file", args{"path": "/"}, "Path '/' is the root of the workspace and cannot be deleted or moved.")
	}
	switch {
	case e.rooted && !strings.Contains(e.s.opts.Dir, "/"):
		e.wantRetry(ts, "delete_file", args{"path": "."}, "Path '.' is a mount and cannot be deleted or moved.")
	case e.s.opts.Dir == ".":
		e.wantRetry(ts, "delete_file", args{"path": "."}, "Path '.' is the root of the workspace and cannot be deleted or moved.")
	default:
		e.wantRetry(ts, "delete_file", args{"path": "."}, "Path '.' holds the working directory and cannot be deleted or moved.")
	}
	e.wantRetry(ts, "delete_file", args{"path": e.escape(0)}, "Path '"+e.escape(0)+"' resolves outside the root directory.")
	e.wantRetry(ts, "delete_file", args{"path": "a.txt", "recursive": "yes"}, "Argument 'recursive' must be a boolean.")
}

func (s *toolSuite) testMoveFile(t *testing.T) {
	e := s.setup(t)
	ts := e.changeTools(tools.Options{})
	e.put("a.txt", "a\n")
	e.mkdir("d")
	e.want(ts, "move_file", args{"source": "a.txt", "destination": "d/b.txt"}, "Moved a.txt to d/b.txt. [hash:"+hash12("a\n")+"]")
	e.wantAbsent("a.txt")
	e.wantContent("d/b.txt", "a\n")
	e.wantRetry(ts, "move_file", args{"source": "a.txt", "destination": "c.txt"}, "Path not found: a.txt")
	e.wantRetry(ts, "move_file", args{"source": "d/b.txt", "destination": "x/c.txt"},
		"Parent directory 'x' does not exist. Use create_directory first.")
	e.wantRetry(ts, "move_file", args{"source": "d/b.txt", "destination": "d/c.txt", "expected_hash": hash12("old")},
		"Conflict: file 'd/b.txt' has changed (expected hash:"+hash12("old")+", got hash:"+hash12("a\n")+"). Re-read the file and retry.")
	e.want(ts, "move_file", args{"source": "d/b.txt", "destination": "c.txt", "expected_hash": hash12("a\n")},
		"Moved d/b.txt to c.txt. [hash:"+hash12("a\n")+"]")
	e.wantContent("c.txt", "a\n")
}

func (s *toolSuite) testMoveOverwrite(t *testing.T) {
	e := s.setup(t)
	ts := e.changeTools(tools.Options{})
	e.put("a.txt", "a\n")
	e.put("b.txt", "b\n")
	e.wantRetry(ts, "move_file", args{"source": "a.txt", "destination": "b.txt"},
		"Destination 'b.txt' already exists. Pass overwrite: true to replace it.")
	e.wantRetry(ts, "move_file", args{"source": "a.txt", "destination": "b.txt", "overwrite": true, "destination_hash": hash12("old")},
		"Conflict: file 'b.txt' has changed (expected hash:"+hash12("old")+", got hash:"+hash12("b\n")+"). Re-read the file and retry.")
	e.wantContent("a.txt", "a\n")
	e.wantContent("b.txt", "b\n")
	e.want(ts, "move_file", args{"source": "a.txt", "destination": "b.txt", "overwrite": true, "destination_hash": hash12("b\n")},
		"Moved a.txt to b.txt. [hash:"+hash12("a\n")+"]")
	e.wantAbsent("a.txt")
	e.wantContent("b.txt", "a\n")
	e.put("c.txt", "c\n")
	e.want(ts, "move_file", args{"source": "c.txt", "destination": "b.txt", "overwrite": true}, "Moved c.txt to b.txt. [hash:"+hash12("c\n")+"]")
	e.wantContent("b.txt", "c\n")
}

func (s *toolSuite) testMoveDirectory(t *testing.T) {
	e := s.setup(t)
	ts := e.changeTools(tools.Options{})
	e.putAll(map[string]string{"d/a.txt": "a", "d/sub/b.txt": "b", "other/x": "x", "repo/.git/config": "c"})
	e.want(ts, "move_file", args{"source": "d", "destination": "e"}, "Moved d to e.")
	e.wantAbsent("d")
	e.wantContent("e/a.txt", "a")
	e.wantContent("e/sub/b.txt", "b")
	e.wantRetry(ts, "move_file", args{"source": "e", "destination": "other"},
		"Destination 'other' already exists. A directory is moved only to a path that does not exist.")
	e.wantRetry(ts, "move_file", args{"source": "e", "destination": "e/sub/e"}, "Cannot move 'e' into itself ('e/sub/e').")
	e.wantRetry(ts, "move_file", args{"source": "e", "destination": "f", "expected_hash": hash12("a")},
		"'e' is a directory; expected_hash applies to files only.")
	e.wantRetry(ts, "move_file", args{"source": "repo", "destination": "repo2"},
		"Directory 'repo' cannot be changed as a whole: Path '"+e.canon("repo/.git")+"' is protected (matches '**/.git').")
	e.wantContent("repo/.git/config", "c")
}

func (s *toolSuite) testMoveRefusals(t *testing.T) {
	e := s.setup(t)
	ts := e.changeTools(tools.Options{})
	e.put("a.txt", "a\n")
	e.put(".env", "SECRET=1")
	e.mkdir("d")
	e.wantRetry(ts, "move_file", args{"source": "a.txt", "destination": "./a.txt"}, "'a.txt' and './a.txt' are the same path.")
	e.wantRetry(ts, "move_file", args{"source": "a.txt", "destination": "d"},
		"Destination 'd' is a directory. Name the full new path, including the file name.")
	e.wantRetry(ts, "move_file", args{"source": ".env", "destination": "env.txt"}, "Path '"+e.canon(".env")+"' is protected (matches '**/.env').")
	e.wantRetry(ts, "move_file", args{"source": "a.txt", "destination": ".env", "overwrite": true}, "Path '"+e.canon(".env")+"' is protected (matches '**/.env').")
	e.wantRetry(ts, "move_file", args{"source": "a.txt", "destination": e.escape(0)}, "Path '"+e.escape(0)+"' resolves outside the root directory.")
	e.wantRetry(ts, "move_file", args{"source": "a.txt"}, "Missing required argument 'destination'.")
	e.wantContent("a.txt", "a\n")
	e.wantContent(".env", "SECRET=1")
}

func (s *toolSuite) testCopyFile(t *testing.T) {
	e := s.setup(t)
	ts := e.changeTools(tools.Options{})
	e.put("a.txt", "a\n")
	e.put("b.txt", "b\n")
	e.want(ts, "copy_file", args{"source": "a.txt", "destination": "c.txt"}, "Copied a.txt to c.txt. [hash:"+hash12("a\n")+"]")
	e.wantContent("a.txt", "a\n")
	e.wantContent("c.txt", "a\n")
	e.wantRetry(ts, "copy_file", args{"source": "a.txt", "destination": "b.txt"},
		"Destination 'b.txt' already exists. Pass overwrite: true to replace it.")
	e.want(ts, "copy_file", args{"source": "a.txt", "destination": "b.txt", "overwrite": true, "destination_hash": hash12("b\n"), "expected_hash": hash12("a\n")},
		"Copied a.txt to b.txt. [hash:"+hash12("a\n")+"]")
	e.wantContent("b.txt", "a\n")
}

func (s *toolSuite) testCopyRefusals(t *testing.T) {
	e := s.setup(t)
	ts := e.changeTools(tools.Options{})
	e.put("d/a.txt", "a\n")
	e.put(".env", "SECRET=1")
	e.wantRetry(ts, "copy_file", args{"source": "d", "destination": "e"}, "'d' is a directory; copy_file copies files only.")
	e.wantRetry(ts, "copy_file", args{"source": ".env", "destination": "env.txt"}, "Path '"+e.canon(".env")+"' is protected (matches '**/.env').")
	e.wantRetry(ts, "copy_file", args{"source": "d/a.txt", "destination": "d/b.txt", "expected_hash": hash12("old")},
		"Conflict: file 'd/a.txt' has changed (expected hash:"+hash12("old")+", got hash:"+hash12("a\n")+"). Re-read the file and retry.")
	e.wantAbsent("env.txt")
	e.wantAbsent("d/b.txt")
}

// changeToolSeen is the exported part of a ChangeRequest of the change
// tools.
type changeToolSeen struct {
	Path, Source, Operation, Diff string
	Truncated                     bool
}

func (s *toolSuite) testChangeToolRequests(t *testing.T) {
	e := s.setup(t)
	var got []changeToolSeen
	ts := e.changeTools(tools.Options{OnChangeRequest: func(_ context.Context, r *tools.ChangeRequest) error {
		got = append(got, changeToolSeen{r.Path, r.Source, r.Operation, r.Diff, r.Truncated})
		return nil
	}})
	e.putAll(map[string]string{"a.txt": "a\nb\n", "b.txt": "old\n", "d/x": "x"})
	e.ok(ts, "copy_file", args{"source": "a.txt", "destination": "c.txt"})
	e.ok(ts, "move_file", args{"source": "c.txt", "destination": "b.txt", "overwrite": true})
	e.ok(ts, "delete_file", args{"path": "a.txt"})
	e.ok(ts, "move_file", args{"source": "d", "destination": "e"})
	e.ok(ts, "delete_file", args{"path": "e", "recursive": true})
	c, b, a := e.diffPath("c.txt"), e.diffPath("b.txt"), e.diffPath("a.txt")
	want := []changeToolSeen{
		{e.canon("c.txt"), e.canon("a.txt"), tools.OpCopy, "--- a/" + c + "\n+++ b/" + c + "\n@@ -0,0 +1,2 @@\n+a\n+b", false},
		{e.canon("b.txt"), e.canon("c.txt"), tools.OpMove, "--- a/" + b + "\n+++ b/" + b + "\n@@ -1 +1,2 @@\n-old\n+a\n+b", false},
		{e.canon("a.txt"), "", tools.OpDelete, "--- a/" + a + "\n+++ b/" + a + "\n@@ -1,2 +0,0 @@\n-a\n-b", false},
		{e.canon("e"), e.canon("d"), tools.OpMove, "", false},
		{e.canon("e"), "", tools.OpDelete, "", false},
	}
	if len(got) != len(want) {
		t.Fatalf("change requests:\ngot  %+v\nwant %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("change request %d:\ngot  %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

func (s *toolSuite) testChangeToolCancelled(t *testing.T) {
	e := s.setup(t)
	ts := e.changeTools(tools.Options{OnChangeRequest: func(_ context.Context, r *tools.ChangeRequest) error {
		r.Cancel("not now")
		return nil
	}})
	e.put("a.txt", "a\n")
	e.want(ts, "delete_file", args{"path": "a.txt"}, "['a.txt' was not deleted: not now]")
	e.want(ts, "move_file", args{"source": "a.txt", "destination": "b.txt"}, "['a.txt' was not moved: not now]")
	e.want(ts, "copy_file", args{"source": "a.txt", "destination": "b.txt"}, "['a.txt' was not copied: not now]")
	e.wantContent("a.txt", "a\n")
	e.wantAbsent("b.txt")
}

func (s *toolSuite) testChangeToolEvents(t *testing.T) {
	e := s.setup(t)
	var got []tools.Event
	ts := e.changeTools(tools.Options{OnEvent: func(_ context.Context, ev tools.Event) { got = append(got, ev) }})
	e.putAll(map[string]string{"a.txt": "a\n", "d/x": "x", "d/y/z": "z"})
	e.ok(ts, "copy_file", args{"source": "a.txt", "destination": "b.txt"})
	e.ok(ts, "move_file", args{"source": "b.txt", "destination": "c.txt"})
	e.ok(ts, "delete_file", args{"path": "c.txt"})
	e.ok(ts, "move_file", args{"source": "d", "destination": "e"})
	e.ok(ts, "delete_file", args{"path": "e", "recursive": true})
	e.wantRetry(ts, "delete_file", args{"path": "e"}, "Path not found: e")
	h := fullHash("a\n")
	want := []tools.Event{
		tools.FileCopied{From: e.canon("a.txt"), To: e.canon("b.txt"), ContentHash: h},
		tools.FileMoved{From: e.canon("b.txt"), To: e.canon("c.txt"), ContentHash: h},
		tools.FileDeleted{Path: e.canon("c.txt"), ContentHash: h},
		tools.FileMoved{From: e.canon("d"), To: e.canon("e")},
		tools.DirectoryDeleted{Path: e.canon("e"), Entries: 3},
	}
	if len(got) != len(want) {
		t.Fatalf("events:\ngot  %+v\nwant %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

func (s *toolSuite) testChangeToolReadOnlySet(t *testing.T) {
	e := s.setup(t)
	e.put("a.txt", "a\n")
	ts := e.tools(tools.Options{ReadOnly: true, Tools: tools.AllTools()})
	e.wantRetry(ts, "delete_file", args{"path": "a.txt"}, "Path 'a.txt' cannot be changed: this tool set is read-only.")
	e.wantRetry(ts, "move_file", args{"source": "a.txt", "destination": "b.txt"}, "Path 'a.txt' cannot be changed: this tool set is read-only.")
	e.wantRetry(ts, "copy_file", args{"source": "a.txt", "destination": "b.txt"}, "Path 'a.txt' cannot be changed: this tool set is read-only.")
	e.wantContent("a.txt", "a\n")
	e.wantAbsent("b.txt")
}

// testChangeToolReadOnlyStorage calls the change tools on read-only
// storage: the backend itself when it is read-only, and otherwise the
// backend behind backend.ReadOnly. Each call is a retry naming the path,
// and storage is unchanged.
func (s *toolSuite) testChangeToolReadOnlyStorage(t *testing.T) {
	e := s.setup(t)
	e.put("a.txt", "a\n")
	if !e.caps.ReadOnly {
		e.b = backend.ReadOnly(e.b)
	}
	ts := e.tools(e.allTools(tools.Options{}))
	msg := func(p string) string {
		return "Path '" + p + "' is on read-only storage and cannot be changed. Write somewhere else."
	}
	e.wantRetry(ts, "delete_file", args{"path": "a.txt"}, msg("a.txt"))
	e.wantRetry(ts, "move_file", args{"source": "a.txt", "destination": "b.txt"}, msg("a.txt"))
	e.wantRetry(ts, "copy_file", args{"source": "a.txt", "destination": "b.txt"}, msg("b.txt"))
	e.wantContent("a.txt", "a\n")
	e.wantAbsent("b.txt")
}
