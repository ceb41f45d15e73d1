package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

// The truth table of the changing operations: for each operation and
// precondition, what happens to a path in each of four states. It is the
// table of docs/contract-v2.md, cell for cell; a nil cell succeeds.
//
// The precondition names the content "old" (its hash, or the version of a
// file holding it). The path examined is the target, except in the
// "-source" rows, where it is the source of a rename or copy to a missing
// target.
var truthTable = []struct {
	op, pre string
	// want per state: matches, differs, missing, directory.
	want [4]error
}{
	{"write", "none", [4]error{nil, nil, nil, backend.ErrIsDir}},
	{"write", "create-only", [4]error{fs.ErrExist, fs.ErrExist, nil, backend.ErrIsDir}},
	{"write", "match-hash", [4]error{nil, backend.ErrPrecondition, backend.ErrPrecondition, backend.ErrIsDir}},
	{"write", "match-version", [4]error{nil, backend.ErrPrecondition, backend.ErrPrecondition, backend.ErrIsDir}},

	{"remove", "none", [4]error{nil, nil, fs.ErrNotExist, backend.ErrNotEmpty}},
	{"remove", "create-only", [4]error{fs.ErrInvalid, fs.ErrInvalid, fs.ErrInvalid, fs.ErrInvalid}},
	{"remove", "match-hash", [4]error{nil, backend.ErrPrecondition, fs.ErrNotExist, backend.ErrIsDir}},
	{"remove", "match-version", [4]error{nil, backend.ErrPrecondition, fs.ErrNotExist, backend.ErrIsDir}},

	{"rename", "none", [4]error{nil, nil, nil, backend.ErrIsDir}},
	{"rename", "create-only", [4]error{fs.ErrExist, fs.ErrExist, nil, backend.ErrIsDir}},
	{"rename", "match-hash", [4]error{nil, backend.ErrPrecondition, backend.ErrPrecondition, backend.ErrIsDir}},
	{"rename", "match-version", [4]error{nil, backend.ErrPrecondition, backend.ErrPrecondition, backend.ErrIsDir}},

	{"copy", "none", [4]error{nil, nil, nil, backend.ErrIsDir}},
	{"copy", "create-only", [4]error{fs.ErrExist, fs.ErrExist, nil, backend.ErrIsDir}},
	{"copy", "match-hash", [4]error{nil, backend.ErrPrecondition, backend.ErrPrecondition, backend.ErrIsDir}},
	{"copy", "match-version", [4]error{nil, backend.ErrPrecondition, backend.ErrPrecondition, backend.ErrIsDir}},

	{"rename-source", "none", [4]error{nil, nil, fs.ErrNotExist, nil}},
	{"rename-source", "create-only", [4]error{fs.ErrInvalid, fs.ErrInvalid, fs.ErrInvalid, fs.ErrInvalid}},
	{"rename-source", "match-hash", [4]error{nil, backend.ErrPrecondition, fs.ErrNotExist, backend.ErrIsDir}},
	{"rename-source", "match-version", [4]error{nil, backend.ErrPrecondition, fs.ErrNotExist, backend.ErrIsDir}},

	{"copy-source", "none", [4]error{nil, nil, fs.ErrNotExist, backend.ErrIsDir}},
	{"copy-source", "create-only", [4]error{fs.ErrInvalid, fs.ErrInvalid, fs.ErrInvalid, fs.ErrInvalid}},
	{"copy-source", "match-hash", [4]error{nil, backend.ErrPrecondition, fs.ErrNotExist, backend.ErrIsDir}},
	{"copy-source", "match-version", [4]error{nil, backend.ErrPrecondition, fs.ErrNotExist, backend.ErrIsDir}},
}

// The states of the path a cell examines.
var cellStates = [4]string{"matches", "differs", "missing", "directory"}

// Contents of the files a cell arranges.
var (
	oldContent   = []byte("old\n")
	otherContent = []byte("other\n")
	newContent   = []byte("new\n")
	innerContent = []byte("inner\n")
)

func (s *suite) changeTests() []testCase {
	var cases []testCase
	for _, row := range truthTable {
		for i, state := range cellStates {
			c := cell{op: row.op, pre: row.pre, state: state, want: row.want[i]}
			cases = append(cases, testCase{"TruthTable/" + c.name(), func(t *testing.T) { s.testCell(t, c) }})
		}
	}
	return append(cases,
		testCase{"RemoveEmptyDir", s.testRemoveEmptyDir},
		testCase{"RemoveRoot", s.testRemoveRoot},
		testCase{"RemoveAllTree", s.testRemoveAllTree},
		testCase{"RemoveAllCheckRefuses", s.testRemoveAllCheck},
		testCase{"RemoveAllFile", s.testRemoveAllFile},
		testCase{"RenameCreatesParents", s.testRenameParents},
		testCase{"RenameTree", s.testRenameTree},
		testCase{"RenameDirOntoExisting", s.testRenameDirOntoExisting},
		testCase{"RenameIntoItself", s.testRenameIntoItself},
		testCase{"RenameThroughFile", s.testRenameThroughFile},
		testCase{"ConcurrentRenameCreateOnlyOneWinner", s.testConcurrentRename},
		testCase{"ConcurrentRemoveMatchHashAndWrite", s.testConcurrentRemoveWrite},
		testCase{"ChangesRefusedWhenReadOnly", s.testChangesReadOnly},
	)
}

// cell is one cell of the truth table.
type cell struct {
	op, pre, state string
	want           error
}

func (c cell) name() string { return c.op + "/" + c.pre + "/" + c.state }

// onSource reports whether the cell examines the source of a rename or
// copy rather than its target.
func (c cell) onSource() bool { return c.op == "rename-source" || c.op == "copy-source" }

// requireChanges skips the test unless the backend is writable and has
// the interface the operation op needs (copy works on every writer).
func (e *env) requireChanges(op string) {
	e.t.Helper()
	e.writer()
	switch op {
	case "remove":
		if !implements[backend.Remover](e.b) {
			e.t.Skipf("skipped: backend does not implement backend.Remover")
		}
	case "rename", "rename-source":
		if !implements[backend.Renamer](e.b) {
			e.t.Skipf("skipped: backend does not implement backend.Renamer")
		}
	}
}

// arrange puts the examined path name into state and returns the
// precondition of pre that names oldContent.
func (e *env) arrange(name, state, pre string) backend.Precondition {
	e.t.Helper()
	version := "v-none"
	switch state {
	case "matches":
		e.put(name, oldContent)
		version = e.versionOf(name)
	case "differs":
		e.put(name, oldContent)
		version = e.versionOf(name)
		e.put(name, otherContent)
		if e.caps.Versions && e.versionOf(name) == version {
			e.t.Fatalf("version %q of %q did not change with its content", version, name)
		}
	case "missing", "directory":
		e.put("version-donor", oldContent)
		version = e.versionOf("version-donor")
		if state == "directory" {
			e.put(name+"/inner", innerContent)
		}
	}
	switch pre {
	case "create-only":
		return backend.Precondition{CreateOnly: true}
	case "match-hash":
		return backend.Precondition{MatchHash: sha256Hex(oldContent)}
	case "match-version":
		return backend.Precondition{MatchVersion: version}
	}
	return backend.Precondition{}
}

// versionOf returns the version of name (relative to the working
// directory), or a made-up token on a backend without versions.
func (e *env) versionOf(name string) string {
	e.t.Helper()
	if !e.caps.Versions {
		return "v-" + name
	}
	return e.version(e.requireVersions(), e.p(name))
}

// wantState checks that the examined path name is still in state.
func (e *env) wantState(name, state string) {
	e.t.Helper()
	switch state {
	case "matches":
		e.wantContent(e.p(name), oldContent)
	case "differs":
		e.wantContent(e.p(name), otherContent)
	case "missing":
		e.wantMissing(e.p(name))
	case "directory":
		e.wantContent(e.p(name+"/inner"), innerContent)
	}
}

// runChange runs the cell's operation from the source "s" to the target
// "t" (or on "t" alone) with the precondition pre.
func (e *env) runChange(op string, pre backend.Precondition) error {
	t, s := e.p("t"), e.p("s")
	switch op {
	case "write":
		return e.writeWith(e.writer(), t, newContent, pre)
	case "remove":
		return backend.Remove(e.ctx, e.b, t, backend.RemoveOptions{Precondition: pre})
	case "rename":
		return backend.Rename(e.ctx, e.b, s, t, backend.RenameOptions{Precondition: pre})
	case "copy":
		return backend.Copy(e.ctx, e.b, s, t, backend.CopyOptions{Precondition: pre})
	case "rename-source":
		return backend.Rename(e.ctx, e.b, s, t, backend.RenameOptions{Source: pre})
	case "copy-source":
		return backend.Copy(e.ctx, e.b, s, t, backend.CopyOptions{Source: pre})
	}
	panic("conformance: unknown operation " + op)
}

// testCell arranges the cell's state, runs its operation and checks the
// outcome: the error the table names and storage unchanged, or the
// operation's effect.
func (s *suite) testCell(t *testing.T, c cell) {
	e := s.setup(t)
	e.requireChanges(c.op)
	if c.pre == "match-version" && !e.caps.Versions {
		s.testCellNoVersions(e, c)
		return
	}
	examined, pre := e.prepare(c)
	err := e.runChange(c.op, pre)
	if c.want != nil {
		wantErr(t, c.name(), err, c.want)
		e.wantState(examined, c.state)
		switch {
		case c.onSource():
			e.wantMissing(e.p("t"))
		case c.op == "rename" || c.op == "copy":
			e.wantContent(e.p("s"), newContent)
		}
		return
	}
	if err != nil {
		t.Fatalf("%s: %v; want success", c.name(), err)
	}
	e.wantEffect(c, examined)
}

// testCellNoVersions checks a match-version cell on a backend without
// versions: every state refuses the operation and keeps storage as it was.
func (s *suite) testCellNoVersions(e *env, c cell) {
	examined, pre := e.prepare(c)
	err := e.runChange(c.op, pre)
	wantErr(e.t, c.name()+" without versions (Capabilities.Versions=false)", err,
		errors.ErrUnsupported, backend.ErrPrecondition, c.want)
	e.wantState(examined, c.state)
}

// prepare arranges the cell's storage: the source of a rename or copy
// holds newContent unless it is the path examined, which is put into the
// cell's state. It returns the examined path and the precondition.
func (e *env) prepare(c cell) (string, backend.Precondition) {
	e.t.Helper()
	examined := "t"
	if c.onSource() {
		examined = "s"
	} else if c.op == "rename" || c.op == "copy" {
		e.put("s", newContent)
	}
	return examined, e.arrange(examined, c.state, c.pre)
}

// wantEffect checks what a successful cell did.
func (e *env) wantEffect(c cell, examined string) {
	e.t.Helper()
	moved := oldContent
	if c.state == "differs" {
		moved = otherContent
	}
	switch c.op {
	case "write":
		e.wantContent(e.p("t"), newContent)
	case "remove":
		e.wantMissing(e.p("t"))
	case "rename":
		e.wantContent(e.p("t"), newContent)
		e.wantMissing(e.p("s"))
	case "copy":
		e.wantContent(e.p("t"), newContent)
		e.wantContent(e.p("s"), newContent)
	case "rename-source":
		if c.state == "directory" {
			e.wantContent(e.p("t/inner"), innerContent)
			e.wantMissing(e.p("s/inner"))
		} else {
			e.wantContent(e.p("t"), moved)
		}
		e.wantMissing(e.p("s"))
	case "copy-source":
		e.wantContent(e.p("t"), moved)
		e.wantState(examined, c.state)
	}
}

func (s *suite) testRemoveEmptyDir(t *testing.T) {
	e := s.setup(t)
	e.requireChanges("remove")
	if !e.caps.EmptyDirs {
		t.Skipf("skipped: backend cannot hold an empty directory (Capabilities.EmptyDirs=false)")
	}
	e.mkdir("d/e")
	if err := backend.Remove(e.ctx, e.b, e.p("d/e"), backend.RemoveOptions{}); err != nil {
		t.Fatalf("Remove of an empty directory: %v", err)
	}
	e.wantMissing(e.p("d/e"))
	if fi := e.stat(e.p("d")); !fi.IsDir() {
		t.Errorf("parent d is %v after removing d/e, want a directory", fi.Mode)
	}
}

func (s *suite) testRemoveRoot(t *testing.T) {
	e := s.setup(t)
	e.requireChanges("remove")
	e.put("f", oldContent)
	err := backend.Remove(e.ctx, e.b, ".", backend.RemoveOptions{})
	wantErr(t, `Remove(".")`, err, backend.ErrInvalidPath)
	err = backend.RemoveAll(e.ctx, e.b, ".", backend.RemoveAllOptions{})
	wantErr(t, `RemoveAll(".")`, err, backend.ErrInvalidPath)
	e.wantContent(e.p("f"), oldContent)
}

// tree puts a small tree below d and returns its files.
func (e *env) tree(d string) []string {
	e.t.Helper()
	files := []string{d + "/a", d + "/sub/b", d + "/sub/deeper/c", d + "/z"}
	for _, f := range files {
		e.put(f, []byte(f))
	}
	return files
}

func (s *suite) testRemoveAllTree(t *testing.T) {
	e := s.setup(t)
	e.requireChanges("remove")
	e.tree("d")
	e.put("keep", oldContent)
	if err := backend.RemoveAll(e.ctx, e.b, e.p("d"), backend.RemoveAllOptions{}); err != nil {
		t.Fatalf("RemoveAll: %v", err)
	}
	e.wantMissing(e.p("d"))
	e.wantNames(e.p("."), "keep")
	e.wantRaw(e.p("keep"))
	err := backend.RemoveAll(e.ctx, e.b, e.p("d"), backend.RemoveAllOptions{})
	wantErr(t, "RemoveAll of a missing tree", err, fs.ErrNotExist)
}

func (s *suite) testRemoveAllCheck(t *testing.T) {
	e := s.setup(t)
	e.requireChanges("remove")
	files := e.tree("d")
	refuse := errors.New("refused by the check")
	var seen []string
	err := backend.RemoveAll(e.ctx, e.b, e.p("d"), backend.RemoveAllOptions{Check: func(name string, _ backend.DirEntry) error {
		seen = append(seen, name)
		if name == e.p("d/sub/deeper/c") {
			return refuse
		}
		return nil
	}})
	if !errors.Is(err, refuse) {
		t.Fatalf("RemoveAll with a refusing check: %v, want the check's error", err)
	}
	for _, f := range files {
		e.wantContent(e.p(f), []byte(f))
	}
	if len(seen) < 2 || seen[0] != e.p("d") {
		t.Errorf("check saw %q, want the root %q first and then the entries", seen, e.p("d"))
	}
}

func (s *suite) testRemoveAllFile(t *testing.T) {
	e := s.setup(t)
	e.requireChanges("remove")
	e.put("f", oldContent)
	if err := backend.RemoveAll(e.ctx, e.b, e.p("f"), backend.RemoveAllOptions{}); err != nil {
		t.Fatalf("RemoveAll of a file: %v", err)
	}
	e.wantMissing(e.p("f"))
}

func (s *suite) testRenameParents(t *testing.T) {
	e := s.setup(t)
	e.requireChanges("rename")
	e.put("s", newContent)
	if err := backend.Rename(e.ctx, e.b, e.p("s"), e.p("x/y/t"), backend.RenameOptions{}); err != nil {
		t.Fatalf("Rename into missing parents: %v", err)
	}
	e.wantContent(e.p("x/y/t"), newContent)
	e.wantMissing(e.p("s"))
	e.wantRaw(e.p("x/y/t"))
}

// testRenameTree moves a directory with files, subdirectories and (where
// the storage can hold one) an empty directory.
func (s *suite) testRenameTree(t *testing.T) {
	e := s.setup(t)
	e.requireChanges("rename")
	files := e.tree("d")
	if e.caps.EmptyDirs {
		e.mkdir("d/empty")
	}
	if err := backend.Rename(e.ctx, e.b, e.p("d"), e.p("e"), backend.RenameOptions{}); err != nil {
		t.Fatalf("Rename of a tree: %v", err)
	}
	e.wantMissing(e.p("d"))
	for _, f := range files {
		e.wantContent(e.p("e"+strings.TrimPrefix(f, "d")), []byte(f))
	}
	if e.caps.EmptyDirs {
		if fi := e.stat(e.p("e/empty")); !fi.IsDir() {
			t.Errorf("e/empty is %v after the move, want a directory", fi.Mode)
		}
	}
}

func (s *suite) testRenameDirOntoExisting(t *testing.T) {
	e := s.setup(t)
	e.requireChanges("rename")
	e.tree("d")
	e.put("f", oldContent)
	e.put("other/x", otherContent)
	for _, to := range []string{"f", "other"} {
		err := backend.Rename(e.ctx, e.b, e.p("d"), e.p(to), backend.RenameOptions{})
		wantErr(t, "Rename of a directory onto "+to, err, fs.ErrExist)
	}
	e.wantContent(e.p("d/sub/b"), []byte("d/sub/b"))
	e.wantContent(e.p("f"), oldContent)
	e.wantContent(e.p("other/x"), otherContent)
}

func (s *suite) testRenameIntoItself(t *testing.T) {
	e := s.setup(t)
	e.requireChanges("rename")
	e.tree("d")
	err := backend.Rename(e.ctx, e.b, e.p("d"), e.p("d/sub/d"), backend.RenameOptions{})
	wantErr(t, "Rename of a directory into itself", err, backend.ErrInvalidPath)
	e.wantContent(e.p("d/sub/b"), []byte("d/sub/b"))
}

func (s *suite) testRenameThroughFile(t *testing.T) {
	e := s.setup(t)
	e.requireChanges("rename")
	e.put("s", newContent)
	e.put("f", oldContent)
	err := backend.Rename(e.ctx, e.b, e.p("s"), e.p("f/t"), backend.RenameOptions{})
	wantErr(t, "Rename below a file", err, backend.ErrNotDir)
	e.wantContent(e.p("s"), newContent)
	e.wantContent(e.p("f"), oldContent)
}

// testConcurrentRename races renames of distinct files onto one missing
// target with CreateOnly: exactly one may land, every other source stays.
func (s *suite) testConcurrentRename(t *testing.T) {
	e := s.setup(t)
	e.requireChanges("rename")
	e.requireAtomicPreconditions()
	contents := s.racingContents()
	for i, c := range contents {
		e.put(fmt.Sprintf("s%d", i), c)
	}
	errs := make([]error, len(contents))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range contents {
		wg.Go(func() {
			<-start
			errs[i] = backend.Rename(e.ctx, e.b, e.p(fmt.Sprintf("s%d", i)), e.p("t"),
				backend.RenameOptions{Precondition: backend.Precondition{CreateOnly: true}})
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("renames %d and %d both landed with CreateOnly", winner, i)
		case err == nil:
			winner = i
			e.wantMissing(e.p(fmt.Sprintf("s%d", i)))
		default:
			wantErr(t, fmt.Sprintf("losing rename %d", i), err, fs.ErrExist)
			e.wantContent(e.p(fmt.Sprintf("s%d", i)), contents[i])
		}
	}
	if winner < 0 {
		t.Fatalf("none of %d renames landed: %v", len(errs), errors.Join(errs...))
	}
	e.wantContent(e.p("t"), contents[winner])
}

// testConcurrentRemoveWrite races a MatchHash removal with a MatchHash
// write of the same file: at most one can win, and storage shows which.
func (s *suite) testConcurrentRemoveWrite(t *testing.T) {
	e := s.setup(t)
	e.requireChanges("remove")
	if !e.caps.AtomicRemove {
		t.Skipf("skipped: backend checks a removal's precondition apart from the removal (Capabilities.AtomicRemove=false)")
	}
	w := e.writer()
	for round := range 8 {
		e.put("f", oldContent)
		pre := backend.Precondition{MatchHash: sha256Hex(oldContent)}
		var werr, rerr error
		start := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() { <-start; werr = e.writeWith(w, e.p("f"), newContent, pre) })
		wg.Go(func() {
			<-start
			rerr = backend.Remove(e.ctx, e.b, e.p("f"), backend.RemoveOptions{Precondition: pre})
		})
		close(start)
		wg.Wait()
		got, err := backend.ReadFile(e.ctx, e.b, e.p("f"))
		switch {
		case werr == nil && rerr == nil:
			t.Fatalf("round %d: the write and the removal both succeeded with the same hash", round)
		case werr == nil:
			wantErr(t, "losing removal", rerr, backend.ErrPrecondition)
			if !bytes.Equal(got, newContent) {
				t.Fatalf("round %d: the write won but the file holds %s (%v)", round, describe(got), err)
			}
		case rerr == nil:
			wantErr(t, "losing write", werr, backend.ErrPrecondition, fs.ErrNotExist)
			if !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("round %d: the removal won but reading gives %s, %v", round, describe(got), err)
			}
		default:
			t.Fatalf("round %d: both failed: write %v, remove %v", round, werr, rerr)
		}
	}
}

// testChangesReadOnly checks that a read-only backend refuses every
// changing operation with ErrReadOnly and changes nothing.
func (s *suite) testChangesReadOnly(t *testing.T) {
	e := s.setup(t)
	e.requireReadOnly()
	arranged := e.canArrange()
	if arranged {
		e.put("f", oldContent)
	}
	ops := []struct {
		what string
		do   func(ctx context.Context) error
	}{
		{"Remove", func(ctx context.Context) error { return backend.Remove(ctx, e.b, e.p("f"), backend.RemoveOptions{}) }},
		{"RemoveAll", func(ctx context.Context) error {
			return backend.RemoveAll(ctx, e.b, e.p("f"), backend.RemoveAllOptions{})
		}},
		{"Rename", func(ctx context.Context) error {
			return backend.Rename(ctx, e.b, e.p("f"), e.p("g"), backend.RenameOptions{})
		}},
		{"Copy", func(ctx context.Context) error {
			return backend.Copy(ctx, e.b, e.p("f"), e.p("g"), backend.CopyOptions{})
		}},
	}
	for _, op := range ops {
		wantReadOnlyErr(t, op.what, op.do(e.ctx))
	}
	for _, direct := range []struct {
		what string
		err  func() (error, bool)
	}{
		{"Remover.Remove", func() (error, bool) {
			r, ok := e.b.(backend.Remover)
			if !ok {
				return nil, false
			}
			return r.Remove(e.ctx, e.p("f"), backend.RemoveOptions{}), true
		}},
		{"Renamer.Rename", func() (error, bool) {
			r, ok := e.b.(backend.Renamer)
			if !ok {
				return nil, false
			}
			return r.Rename(e.ctx, e.p("f"), e.p("g"), backend.RenameOptions{}), true
		}},
		{"Copier.Copy", func() (error, bool) {
			c, ok := e.b.(backend.Copier)
			if !ok {
				return nil, false
			}
			return c.Copy(e.ctx, e.p("f"), e.p("g"), backend.CopyOptions{}), true
		}},
	} {
		if err, ok := direct.err(); ok {
			wantReadOnlyErr(t, direct.what, err)
		}
	}
	if arranged {
		e.wantContent(e.p("f"), oldContent)
		e.wantMissing(e.p("g"))
	}
}
