// Package checkpoint_test runs package checkpoint's scenarios (a conflict, a
// forced restore, a redo, an interrupted restore completed, a whole run
// restored to the start) on memfs, local disk, mounts, S3 (versitygw) and
// SFTP (OpenSSH), and its benchmarks; it lives in the harness module so
// that the checkpoint package's own tests import nothing outside the root
// module.
package checkpoint_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/checkpoint"
	"github.com/fencefs/fencefs/tools"
)

// env is one backend pair a scenario runs on: the agent's namespace and
// the checkpoint store, with the tools' path prefix ("/w/" in a mounted
// namespace, "" in a plain one).
type env struct {
	ns, store backend.Backend
	prefix    string
	// seed writes a file behind the tools' back, as another writer.
	seed func(t *testing.T, name string, data []byte, mode fs.FileMode)
	// segments keeps the records in segment files
	// (checkpoint.Options.Segments).
	segments bool
}

// opts returns o for a journal on e.
func (e env) opts(o checkpoint.Options) checkpoint.Options {
	o.Segments = e.segments
	return o
}

// mkEnv makes a fresh env for one scenario.
type mkEnv func(t *testing.T) env

// runScenarios runs every checkpoint scenario on the backends mk makes.
func runScenarios(t *testing.T, mk mkEnv) {
	t.Run("WholeRun", func(t *testing.T) { scenarioWholeRun(t, mk(t)) })
	t.Run("Conflict", func(t *testing.T) { scenarioConflict(t, mk(t)) })
	t.Run("ForcedAndRedo", func(t *testing.T) { scenarioForcedRedo(t, mk(t)) })
	t.Run("Interrupted", func(t *testing.T) { scenarioInterrupted(t, mk(t)) })
	t.Run("Paths", func(t *testing.T) { scenarioPaths(t, mk(t)) })
	t.Run("WriterDuringRestore", func(t *testing.T) { scenarioWriterDuringRestore(t, mk(t)) })
	t.Run("ConcurrentCalls", func(t *testing.T) { scenarioConcurrent(t, mk(t)) })
	t.Run("DirectoryOps", func(t *testing.T) { scenarioDirs(t, mk(t)) })
	t.Run("KindChanges", func(t *testing.T) { scenarioKinds(t, mk(t)) })
	t.Run("StoreFails", func(t *testing.T) { scenarioStoreFails(t, mk(t)) })
	t.Run("ChangedUnderCall", func(t *testing.T) { scenarioChangedUnderCall(t, mk(t)) })
	t.Run("Reopen", func(t *testing.T) { scenarioReopen(t, mk(t)) })
	t.Run("Retention", func(t *testing.T) { scenarioRetention(t, mk(t), -1) })
	t.Run("RetentionInline", func(t *testing.T) { scenarioRetention(t, mk(t), 0) })
}

// agent is a tool set over an env's namespace, journaled.
type agent struct {
	t   *testing.T
	e   env
	set *tools.Set
	j   *checkpoint.Journal
}

func newAgent(t *testing.T, e env, opts checkpoint.Options) *agent {
	t.Helper()
	set, err := tools.New(e.ns, tools.Options{Tools: tools.AllTools()})
	if err != nil {
		t.Fatal(err)
	}
	j, err := checkpoint.Open(t.Context(), e.ns, e.store, e.opts(opts))
	if err != nil {
		t.Fatal(err)
	}
	return &agent{t: t, e: e, set: set, j: j}
}

// call runs one tool call under a bound context and fails the test on a
// refusal or error.
func (a *agent) call(name string, kv ...any) string {
	a.t.Helper()
	out, err := a.try(name, kv...)
	if err != nil {
		a.t.Fatalf("%s %v: %v", name, kv, err)
	}
	return out
}

func (a *agent) try(name string, kv ...any) (string, error) {
	a.t.Helper()
	m := map[string]any{}
	for i := 0; i < len(kv); i += 2 {
		v := kv[i+1]
		if s, ok := v.(string); ok && (kv[i] == "path" || kv[i] == "source" || kv[i] == "destination") {
			v = a.e.prefix + s
		}
		m[kv[i].(string)] = v
	}
	raw, _ := json.Marshal(m)
	return a.set.Call(a.j.Bind(a.t.Context()), name, raw)
}

// snapshot is a tree: path -> "dir" or "file <mode> <content>".
func snapshot(t *testing.T, b backend.Backend, dir string) map[string]string {
	t.Helper()
	ctx := t.Context()
	out := map[string]string{}
	modes := backend.CapabilitiesOf(b).ModeBits
	err := backend.Walk(ctx, b, dir, func(p string, e backend.DirEntry) error {
		if e.IsDir() {
			if backend.CapabilitiesOf(b).EmptyDirs {
				out[p] = "dir"
			}
			return nil
		}
		data, err := backend.ReadFile(ctx, b, p)
		if err != nil {
			return err
		}
		mode := ""
		if modes {
			fi, err := backend.Stat(ctx, b, p)
			if err != nil {
				return err
			}
			mode = fi.Mode.Perm().String()
		}
		out[p] = fmt.Sprintf("file %s %q", mode, data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func wantTree(t *testing.T, got, want map[string]string) {
	t.Helper()
	if maps.Equal(got, want) {
		return
	}
	keys := slices.Sorted(maps.Keys(got))
	for k := range want {
		if _, ok := got[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		if got[k] != want[k] {
			t.Errorf("%s: got %q, want %q", k, got[k], want[k])
		}
	}
}

// root is the storage directory the tools work in.
func (e env) root() string {
	if e.prefix == "" {
		return "."
	}
	return strings.Trim(e.prefix, "/")
}

// sp is the storage path of the tool path p.
func (e env) sp(p string) string {
	if e.prefix == "" {
		return p
	}
	return strings.TrimPrefix(e.prefix, "/") + p
}

// seedStart lays out the tree every scenario starts from, behind the
// tools' back (so nothing of it is journaled).
func seedStart(t *testing.T, e env) {
	t.Helper()
	e.seed(t, e.sp("main.go"), []byte("package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n"), 0o644)
	e.seed(t, e.sp("README.md"), []byte("# project\n\nold text\n"), 0o644)
	e.seed(t, e.sp("run.sh"), []byte("#!/bin/sh\necho run\n"), 0o755)
	e.seed(t, e.sp("lib/a.go"), []byte("package lib\n\nconst A = 1\n"), 0o644)
	e.seed(t, e.sp("lib/b.go"), []byte("package lib\n\nconst B = 2\n"), 0o600)
	e.seed(t, e.sp("docs/guide.md"), []byte("guide\n"), 0o644)
	e.seed(t, e.sp("bin.dat"), []byte{0, 1, 2, 255, 254, 0, 7}, 0o644)
}

// scenarioWholeRun: a whole agent run through the tools (many edits, a
// delete, a move, an apply_patch, a copy, a new directory), then a
// restore to the start gives the start back byte for byte (modes
// included where the backend has them), and a file another writer
// changed meanwhile is reported, not clobbered.
func scenarioWholeRun(t *testing.T, e env) {
	seedStart(t, e)
	start := snapshot(t, e.ns, e.root())
	a := newAgent(t, e, checkpoint.Options{})
	ctx := t.Context()
	if err := a.j.Mark(ctx, "turn-1"); err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		a.call("edit_file", "path", "README.md", "old_text", "old text", "new_text", "old text")
		a.call("write_file", "path", "notes.txt", "content", fmt.Sprintf("note %d\n", i))
	}
	a.call("edit_file", "path", "main.go", "old_text", `println("hello")`, "new_text", `println("bye")`)
	a.call("delete_file", "path", "run.sh")
	a.call("create_directory", "path", "pkg")
	a.call("move_file", "source", "lib/a.go", "destination", "pkg/a.go")
	a.call("copy_file", "source", "lib/b.go", "destination", "pkg/b.go")
	a.call("create_directory", "path", "empty/sub")
	if err := a.j.Mark(ctx, "turn-2"); err != nil {
		t.Fatal(err)
	}
	patch := "*** Begin Patch\n*** Update File: " + e.prefix + "main.go\n@@\n-\tprintln(\"bye\")\n+\tprintln(\"patched\")\n*** Add File: " + e.prefix + "new/added.txt\n+added\n*** Delete File: " + e.prefix + "docs/guide.md\n*** Update File: " + e.prefix + "lib/b.go\n*** Move to: " + e.prefix + "lib/b2.go\n@@\n-const B = 2\n+const B = 3\n*** End Patch\n"
	a.call("apply_patch", "patch", patch)
	a.call("write_file", "path", "bin.dat", "content", "text now\n")
	// Another writer changes a file the run also changed.
	e.seed(t, e.sp("notes.txt"), []byte("someone else's notes\n"), 0o644)
	if turn2, ok := a.j.LabelStart("turn-2"); !ok || turn2 == 0 {
		t.Fatalf("LabelStart(turn-2) = %d, %v", turn2, ok)
	}
	_, err := a.j.Restore(ctx, 0, checkpoint.RestoreOptions{})
	var ce *checkpoint.ConflictError
	if !errors.As(err, &ce) || len(ce.Conflicts) != 1 || ce.Conflicts[0].Path != e.sp("notes.txt") {
		t.Fatalf("restore with another writer's change: %v, want a conflict on notes.txt", err)
	}
	res, err := a.j.Restore(ctx, 0, checkpoint.RestoreOptions{SkipConflicts: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) != 1 || res.Skipped[0].Path != e.sp("notes.txt") {
		t.Errorf("skipped %v, want notes.txt", res.Skipped)
	}
	want := maps.Clone(start)
	want[e.sp("notes.txt")] = snapshot(t, e.ns, e.root())[e.sp("notes.txt")]
	if !strings.Contains(want[e.sp("notes.txt")], "someone else") {
		t.Errorf("the other writer's file was clobbered: %s", want[e.sp("notes.txt")])
	}
	wantTree(t, snapshot(t, e.ns, e.root()), want)
}

// run makes a few changes of each kind, returning the tree before them.
func run(t *testing.T, a *agent) map[string]string {
	t.Helper()
	seedStart(t, a.e)
	start := snapshot(t, a.e.ns, a.e.root())
	a.call("edit_file", "path", "README.md", "old_text", "old text", "new_text", "new text")
	a.call("write_file", "path", "lib/c.go", "content", "package lib\n")
	a.call("delete_file", "path", "run.sh")
	a.call("move_file", "source", "docs/guide.md", "destination", "guide.md")
	return start
}

// scenarioConflict: a path another writer changed refuses the restore
// whole, listing it, and nothing is changed.
func scenarioConflict(t *testing.T, e env) {
	a := newAgent(t, e, checkpoint.Options{})
	run(t, a)
	e.seed(t, e.sp("README.md"), []byte("theirs\n"), 0o644)
	e.seed(t, e.sp("run.sh"), []byte("theirs too\n"), 0o644) // re-created by them
	before := snapshot(t, e.ns, e.root())
	_, err := a.j.Restore(t.Context(), 0, checkpoint.RestoreOptions{})
	var ce *checkpoint.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("restore: %v, want a ConflictError", err)
	}
	var paths []string
	for _, c := range ce.Conflicts {
		paths = append(paths, c.Path)
	}
	if want := []string{e.sp("README.md"), e.sp("run.sh")}; !slices.Equal(paths, want) {
		t.Errorf("conflicts %v, want %v", paths, want)
	}
	if !strings.Contains(err.Error(), "changed by another writer") {
		t.Errorf("error %q does not say why", err)
	}
	wantTree(t, snapshot(t, e.ns, e.root()), before)
	if n := len(a.j.Checkpoints()); n != 4 {
		t.Errorf("%d checkpoints after a refused restore, want the 4 changes", n)
	}
}

// scenarioForcedRedo: a forced restore overwrites the conflict and
// reports it; restoring to just before it (redo) brings back the state
// it replaced, the other writer's content included.
func scenarioForcedRedo(t *testing.T, e env) {
	a := newAgent(t, e, checkpoint.Options{})
	start := run(t, a)
	e.seed(t, e.sp("README.md"), []byte("theirs\n"), 0o644)
	before := snapshot(t, e.ns, e.root())
	res, err := a.j.Restore(t.Context(), 0, checkpoint.RestoreOptions{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Forced) != 1 || res.Forced[0].Path != e.sp("README.md") {
		t.Errorf("forced %v, want README.md", res.Forced)
	}
	wantTree(t, snapshot(t, e.ns, e.root()), start)
	// Redo: undo the restore.
	redo, err := a.j.Restore(t.Context(), res.Seq-1, checkpoint.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantTree(t, snapshot(t, e.ns, e.root()), before)
	// And back again: the restore of the redo.
	if _, err := a.j.Restore(t.Context(), redo.Seq-1, checkpoint.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	wantTree(t, snapshot(t, e.ns, e.root()), start)
	cps := a.j.Checkpoints()
	last := cps[len(cps)-1]
	if last.Op != "restore" || !last.Complete || last.RestoredTo != redo.Seq-1 {
		t.Errorf("last checkpoint %+v, want the complete restore to %d", last, redo.Seq-1)
	}
}

// scenarioInterrupted: a restore that fails after K writes (the
// namespace fails) leaves a state the same restore, run again, completes.
func scenarioInterrupted(t *testing.T, e env) {
	a := newAgent(t, e, checkpoint.Options{})
	start := run(t, a)
	a.call("create_directory", "path", "more")
	a.call("write_file", "path", "more/x.txt", "content", "x\n")
	a.call("write_file", "path", "more/y.txt", "content", "y\n")
	// The other journal reads what this one saved: the last call's
	// after-states are saved with the next record, or by Flush.
	if err := a.j.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, k := range []int64{1, 3} {
		t.Run(fmt.Sprint("after", k), func(t *testing.T) {
			failing := &failAfter{Backend: e.ns, left: k}
			broken, err := checkpoint.Open(t.Context(), failing, e.store, e.opts(checkpoint.Options{}))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := broken.Restore(t.Context(), 0, checkpoint.RestoreOptions{}); !errors.Is(err, errFailed) {
				t.Fatalf("restore over a failing namespace: %v, want the failure", err)
			}
			if got := snapshot(t, e.ns, e.root()); maps.Equal(got, start) {
				t.Fatal("the failing restore restored everything")
			}
		})
	}
	// The journal sees the incomplete restores (written by the other
	// Journal on the same store) and completes the restore.
	if _, err := a.j.Restore(t.Context(), 0, checkpoint.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	wantTree(t, snapshot(t, e.ns, e.root()), start)
	var incomplete int
	for _, c := range a.j.Checkpoints() {
		if c.Op == "restore" && !c.Complete {
			incomplete++
		}
	}
	if incomplete != 2 {
		t.Errorf("%d incomplete restores listed, want 2", incomplete)
	}
}

// scenarioPaths: a restore by path list restores only those paths.
func scenarioPaths(t *testing.T, e env) {
	a := newAgent(t, e, checkpoint.Options{})
	start := run(t, a)
	after := snapshot(t, e.ns, e.root())
	if _, err := a.j.Restore(t.Context(), 0, checkpoint.RestoreOptions{Paths: []string{e.prefix + "README.md", e.prefix + "run.sh"}}); err != nil {
		t.Fatal(err)
	}
	want := maps.Clone(after)
	for _, p := range []string{"README.md", "run.sh"} {
		want[e.sp(p)] = start[e.sp(p)]
	}
	wantTree(t, snapshot(t, e.ns, e.root()), want)
}

// scenarioDirs: a recursive delete, a directory move and copy, and new
// directories are all undone.
func scenarioDirs(t *testing.T, e env) {
	a := newAgent(t, e, checkpoint.Options{})
	seedStart(t, e)
	start := snapshot(t, e.ns, e.root())
	a.call("create_directory", "path", "src")
	a.call("move_file", "source", "lib", "destination", "src/lib")
	a.call("delete_file", "path", "docs", "recursive", true)
	a.call("create_directory", "path", "deep/er")
	a.call("write_file", "path", "deep/er/file.txt", "content", "deep\n")
	a.call("create_directory", "path", "made/here")
	res, err := a.j.Restore(t.Context(), 0, checkpoint.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Restored) == 0 {
		t.Fatal("nothing restored")
	}
	wantTree(t, snapshot(t, e.ns, e.root()), start)
	for _, gone := range []string{"src", "deep", "made"} {
		if _, err := backend.Stat(t.Context(), e.ns, e.sp(gone)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v, want it removed", gone, err)
		}
	}
}

// scenarioStoreFails: a change whose pre-image cannot be stored is
// refused with the listener's fatal text, and the file is unchanged.
func scenarioStoreFails(t *testing.T, e env) {
	seedStart(t, e)
	failing := &failAfter{Backend: e.store, left: 1 << 30}
	set, err := tools.New(e.ns, tools.Options{Tools: tools.AllTools()})
	if err != nil {
		t.Fatal(err)
	}
	j, err := checkpoint.Open(t.Context(), e.ns, failing, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	failing.left = 0
	before := snapshot(t, e.ns, e.root())
	raw, _ := json.Marshal(map[string]string{"path": e.prefix + "README.md", "old_text": "old", "new_text": "new"})
	_, err = set.Call(j.Bind(t.Context()), "edit_file", raw)
	if err == nil || tools.IsRetry(err) || err.Error() != "The change was not made: the host's change listener failed. Details are in the server's log." {
		t.Fatalf("edit with a failing store: %v", err)
	}
	if !errors.Is(err, errFailed) {
		t.Errorf("the fatal error does not wrap the store's failure: %v", tools.Cause(err))
	}
	wantTree(t, snapshot(t, e.ns, e.root()), before)
}

// scenarioChangedUnderCall: a file that changes after the tool read it
// and before the journal does is refused as changed, not journaled with
// the wrong pre-image.
func scenarioChangedUnderCall(t *testing.T, e env) {
	seedStart(t, e)
	set, err := tools.New(e.ns, tools.Options{Tools: tools.AllTools(), OnChangeRequest: func(ctx context.Context, r *tools.ChangeRequest) error {
		e.seed(t, e.sp("README.md"), []byte("changed meanwhile\n"), 0o644)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	j, err := checkpoint.Open(t.Context(), e.ns, e.store, e.opts(checkpoint.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(map[string]string{"path": e.prefix + "README.md", "old_text": "old", "new_text": "new"})
	out, err := set.Call(j.Bind(t.Context()), "edit_file", raw)
	if err != nil {
		t.Fatal(err)
	}
	if want := "['" + e.prefix + "README.md' was not edited: it changed while its checkpoint was taken; read it again]"; out != want {
		t.Errorf("got %q, want %q", out, want)
	}
	if n := len(j.Checkpoints()); n != 0 {
		t.Errorf("%d checkpoints, want none", n)
	}
}

// scenarioReopen: a journal reopened from its store (a new process)
// restores what the first recorded, after-states included.
func scenarioReopen(t *testing.T, e env) {
	a := newAgent(t, e, checkpoint.Options{})
	start := run(t, a)
	if err := a.j.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	j2, err := checkpoint.Open(t.Context(), e.ns, e.store, e.opts(checkpoint.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(j2.Checkpoints()), len(a.j.Checkpoints()); got != want {
		t.Fatalf("reopened journal lists %d checkpoints, want %d", got, want)
	}
	e.seed(t, e.sp("lib/c.go"), []byte("theirs\n"), 0o644)
	_, err = j2.Restore(t.Context(), 0, checkpoint.RestoreOptions{})
	var ce *checkpoint.ConflictError
	if !errors.As(err, &ce) || len(ce.Conflicts) != 1 {
		t.Fatalf("restore after reopening: %v, want one conflict (lib/c.go)", err)
	}
	if _, err := j2.Restore(t.Context(), 0, checkpoint.RestoreOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	wantTree(t, snapshot(t, e.ns, e.root()), start)
}

// scenarioRetention: pruning by count drops old checkpoints and the
// content only they referenced; Usage follows the store. inline is
// Options.InlineBytes: -1 stores every pre-image as an object of its
// own, 0 (the default) keeps small ones inside their record, and a
// prune then keeps apart what a dropped record held that others need.
func scenarioRetention(t *testing.T, e env, inline int64) {
	a := newAgent(t, e, checkpoint.Options{KeepCount: 3, InlineBytes: inline})
	seedStart(t, e)
	for i := range 8 {
		a.call("write_file", "path", "README.md", "content", strings.Repeat(fmt.Sprint(i), 100))
	}
	// A pre-image the kept changes share with a dropped one: content "1"
	// comes back, so the record of change 3, which holds it, goes, but
	// the content stays.
	a.call("write_file", "path", "README.md", "content", strings.Repeat("1", 100))
	a.call("write_file", "path", "README.md", "content", "x")
	u := a.j.Usage()
	if inline < 0 && (u.Blobs != 9 || u.Content < 800) {
		t.Errorf("usage before prune %+v, want 9 pre-images", u)
	}
	if inline == 0 && (u.Blobs != 0 || u.Records < 800) {
		t.Errorf("usage before prune %+v, want every pre-image inside its record", u)
	}
	res, err := a.j.Prune(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if inline < 0 && res.Blobs != 6 {
		t.Errorf("pruned %+v, want 6 pre-images collected", res)
	}
	if res.Records < 7 {
		t.Errorf("pruned %+v, want at least the 7 records", res)
	}
	cps := a.j.Checkpoints()
	if n := len(cps); n != 3 {
		t.Errorf("%d checkpoints kept, want 3", n)
	}
	if _, err := a.j.Restore(t.Context(), 1, checkpoint.RestoreOptions{}); !errors.Is(err, checkpoint.ErrPruned) {
		t.Errorf("restore to a pruned checkpoint: %v", err)
	}
	u2 := a.j.Usage()
	if inline < 0 && u2.Blobs != 3 || u2.Bytes >= u.Bytes {
		t.Errorf("usage after prune %+v (before %+v)", u2, u)
	}
	// What is kept restores: the content shared with a dropped change,
	// then the oldest checkpoint kept.
	readme := func(want string) {
		t.Helper()
		data, err := backend.ReadFile(t.Context(), e.ns, e.sp("README.md"))
		if err != nil || string(data) != want {
			t.Errorf("README.md: %q, %v; want %q", data, err, want)
		}
	}
	if _, err := a.j.Restore(t.Context(), cps[2].Seq-1, checkpoint.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	readme(strings.Repeat("1", 100))
	oldest := a.j.Oldest()
	if _, err := a.j.Restore(t.Context(), oldest, checkpoint.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	readme(strings.Repeat("6", 100))
	// A reopened journal sees the same.
	j2, err := checkpoint.Open(t.Context(), e.ns, e.store, e.opts(checkpoint.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	if j2.Oldest() != oldest || j2.Usage().Blobs != a.j.Usage().Blobs {
		t.Errorf("reopened: oldest %d usage %+v, want %d %+v", j2.Oldest(), j2.Usage(), oldest, a.j.Usage())
	}
}

// errFailed is the failure failAfter injects.
var errFailed = errors.New("injected storage failure")

// failAfter is a backend whose changes fail once left reaches 0: each
// write commit, removal or mkdir takes one.
type failAfter struct {
	backend.Backend
	left int64
	n    atomic.Int64
}

func (f *failAfter) take(op, name string) error {
	if f.n.Add(1) > f.left {
		return &fs.PathError{Op: op, Path: name, Err: errFailed}
	}
	return nil
}

func (f *failAfter) Capabilities() backend.Capabilities { return backend.CapabilitiesOf(f.Backend) }

func (f *failAfter) Stat(ctx context.Context, name string) (backend.FileInfo, error) {
	return backend.Stat(ctx, f.Backend, name)
}

func (f *failAfter) Readlink(ctx context.Context, name string) (string, error) {
	return backend.Readlink(ctx, f.Backend, name)
}

func (f *failAfter) OpenWrite(ctx context.Context, name string, opts backend.WriteOptions) (backend.FileWriter, error) {
	w, err := backend.OpenWrite(ctx, f.Backend, name, opts)
	if err != nil {
		return nil, err
	}
	return &failWriter{FileWriter: w, f: f, name: name}, nil
}

type failWriter struct {
	backend.FileWriter
	f    *failAfter
	name string
}

func (w *failWriter) Commit() error {
	if err := w.f.take("write", w.name); err != nil {
		return err
	}
	return w.FileWriter.Commit()
}

func (f *failAfter) Remove(ctx context.Context, name string, opts backend.RemoveOptions) error {
	if err := f.take("remove", name); err != nil {
		return err
	}
	return backend.Remove(ctx, f.Backend, name, opts)
}

func (f *failAfter) MkdirAll(ctx context.Context, dir string) error {
	if err := f.take("mkdir", dir); err != nil {
		return err
	}
	return backend.MkdirAll(ctx, f.Backend, dir)
}

func (f *failAfter) Chmod(ctx context.Context, name string, perm fs.FileMode) error {
	if m, ok := f.Backend.(checkpoint.ModeSetter); ok {
		return m.Chmod(ctx, name, perm)
	}
	return errors.ErrUnsupported
}

// scenarioWriterDuringRestore: a writer that changes a path after the
// restore read it and before the restore writes it keeps its change: the
// restore's precondition fails, the restore stops saying so, and run
// again it reports the path as a conflict.
func scenarioWriterDuringRestore(t *testing.T, e env) {
	a := newAgent(t, e, checkpoint.Options{})
	run(t, a)
	if err := a.j.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	target := e.sp("README.md")
	racing := &interferer{Backend: e.ns, path: target, act: func() {
		e.seed(t, target, []byte("written during the restore\n"), 0o644)
	}}
	j2, err := checkpoint.Open(t.Context(), racing, e.store, e.opts(checkpoint.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = j2.Restore(t.Context(), 0, checkpoint.RestoreOptions{})
	if err == nil || !strings.Contains(err.Error(), "changed while the restore ran") {
		t.Fatalf("restore racing a writer: %v", err)
	}
	data, err := backend.ReadFile(t.Context(), e.ns, target)
	if err != nil || string(data) != "written during the restore\n" {
		t.Fatalf("the other writer's content: %q, %v", data, err)
	}
	_, err = a.j.Restore(t.Context(), 0, checkpoint.RestoreOptions{})
	var ce *checkpoint.ConflictError
	if !errors.As(err, &ce) || len(ce.Conflicts) != 1 || ce.Conflicts[0].Path != target {
		t.Fatalf("restore again: %v, want README.md in conflict", err)
	}
}

// interferer runs act once, when the first write of path opens: another
// writer acting between a restore's read and its write.
type interferer struct {
	backend.Backend
	path string
	act  func()
	once sync.Once
}

func (f *interferer) Capabilities() backend.Capabilities { return backend.CapabilitiesOf(f.Backend) }

func (f *interferer) Stat(ctx context.Context, name string) (backend.FileInfo, error) {
	return backend.Stat(ctx, f.Backend, name)
}

func (f *interferer) OpenWrite(ctx context.Context, name string, opts backend.WriteOptions) (backend.FileWriter, error) {
	if name == f.path {
		f.once.Do(f.act)
	}
	return backend.OpenWrite(ctx, f.Backend, name, opts)
}

func (f *interferer) Remove(ctx context.Context, name string, opts backend.RemoveOptions) error {
	return backend.Remove(ctx, f.Backend, name, opts)
}

func (f *interferer) MkdirAll(ctx context.Context, dir string) error {
	return backend.MkdirAll(ctx, f.Backend, dir)
}

// scenarioConcurrent: calls running at once, each bound to the journal,
// are all journaled, and a restore undoes them all.
func scenarioConcurrent(t *testing.T, e env) {
	a := newAgent(t, e, checkpoint.Options{})
	seedStart(t, e)
	for i := range 4 {
		e.seed(t, e.sp(fmt.Sprintf("c%d.txt", i)), []byte("v0\n"), 0o644)
	}
	start := snapshot(t, e.ns, e.root())
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range 4 {
		wg.Go(func() {
			for k := range 5 {
				m := map[string]any{"path": e.prefix + fmt.Sprintf("c%d.txt", i), "old_text": fmt.Sprintf("v%d", k), "new_text": fmt.Sprintf("v%d", k+1)}
				raw, _ := json.Marshal(m)
				if _, err := a.set.Call(a.j.Bind(context.Background()), "edit_file", raw); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := len(a.j.Checkpoints()); n != 20 {
		t.Errorf("%d checkpoints, want 20", n)
	}
	if _, err := a.j.Restore(t.Context(), 0, checkpoint.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	wantTree(t, snapshot(t, e.ns, e.root()), start)
}

// scenarioKinds: a directory that became a file and a file that became a
// directory are both turned back, and the restore undone.
func scenarioKinds(t *testing.T, e env) {
	a := newAgent(t, e, checkpoint.Options{})
	seedStart(t, e)
	start := snapshot(t, e.ns, e.root())
	a.call("delete_file", "path", "docs", "recursive", true)
	a.call("write_file", "path", "docs", "content", "docs is a file now\n")
	a.call("delete_file", "path", "README.md")
	a.call("create_directory", "path", "README.md")
	a.call("write_file", "path", "README.md/inside.txt", "content", "inside\n")
	changed := snapshot(t, e.ns, e.root())
	res, err := a.j.Restore(t.Context(), 0, checkpoint.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantTree(t, snapshot(t, e.ns, e.root()), start)
	if _, err := a.j.Restore(t.Context(), res.Seq-1, checkpoint.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	wantTree(t, snapshot(t, e.ns, e.root()), changed)
}
