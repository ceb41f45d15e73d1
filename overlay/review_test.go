package overlay_test

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/memfs"
	"github.com/fencefs/fencefs/overlay"
)

// describeChanges renders changes as "kind path" lines for comparison.
func describeChanges(cs []overlay.Change) []string {
	var out []string
	for _, c := range cs {
		s := c.Kind.String() + " " + c.Path
		if c.From != "" {
			s += " from " + c.From
		}
		if c.Dir {
			s += "/"
		}
		out = append(out, s)
	}
	return out
}

// agentRun changes s's overlay the way an agent would: an edit, a new
// file in a new directory, a deletion, a rename and a directory removed.
func agentRun(t *testing.T, s *stack) {
	t.Helper()
	s.mustWrite("edit.txt", "one\ntwo changed\nthree\n")
	s.mustWrite("same.txt", "same\n") // written back unchanged
	s.mustWrite("new/file.txt", "new\n")
	for _, err := range []error{
		backend.Remove(s.ctx, s.o, "gone.txt", backend.RemoveOptions{}),
		backend.Rename(s.ctx, s.o, "old.txt", "renamed.txt", backend.RenameOptions{}),
		backend.RemoveAll(s.ctx, s.o, "olddir", backend.RemoveAllOptions{}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// baseFiles are the base of the review tests.
var baseFiles = map[string]string{
	"edit.txt": "one\ntwo\nthree\n", "same.txt": "same\n", "gone.txt": "bye\n",
	"old.txt": "moving\n", "olddir/a": "a\n", "keep.txt": "keep\n",
}

func TestChangesAndDiff(t *testing.T) {
	s := newStack(t, baseFiles)
	agentRun(t, s)
	cs, err := s.o.Changes(s.ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"modified edit.txt", "deleted gone.txt", "created new/", "created new/file.txt",
		"deleted olddir/", "deleted olddir/a", "renamed renamed.txt from old.txt",
	}
	if got := describeChanges(cs); !slices.Equal(got, want) {
		t.Errorf("Changes =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	diff, err := s.o.Diff(s.ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantDiff := `--- a/edit.txt
+++ b/edit.txt
@@ -1,3 +1,3 @@
 one
-two
+two changed
 three
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
--- /dev/null
+++ b/new/file.txt
@@ -0,0 +1 @@
+new
--- a/olddir/a
+++ /dev/null
@@ -1 +0,0 @@
-a
--- a/old.txt
+++ b/renamed.txt
`
	if diff != wantDiff {
		t.Errorf("Diff =\n%s\nwant\n%s", diff, wantDiff)
	}
	sub, err := s.o.Diff(s.ctx, "new")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sub, "--- /dev/null\n+++ b/new/file.txt\n") || strings.Count(sub, "---") != 1 {
		t.Errorf("Diff(new) = %q", sub)
	}
}

// layerKinds make the layers of the review tests: memfs (versions,
// atomic preconditions), local disk (no versions: Commit presents hashes)
// and S3 on versitygw (ETags).
func layerKinds() []layerKind {
	return append([]layerKind{
		{"memfs", func(t *testing.T) (backend.Backend, backend.Backend) { return memfs.New(), memfs.New() }},
		{"s3", s3LayerPair},
	}, localKinds...)
}

// layerKind names a way to make a base and an upper layer.
type layerKind struct {
	name string
	make func(t *testing.T) (base, upper backend.Backend)
}

func TestCommit(t *testing.T) {
	for _, kind := range layerKinds() {
		t.Run(kind.name, func(t *testing.T) {
			testCommit(t, func(t *testing.T) *stack {
				base, upper := kind.make(t)
				return newStackOn(t, base, upper, baseFiles)
			})
		})
	}
}

// testCommit runs the commit table on the stacks mk makes.
func testCommit(t *testing.T, mk func(t *testing.T) *stack) {
	for _, tc := range []struct {
		name string
		// meanwhile changes the base behind the overlay's back.
		meanwhile     func(t *testing.T, s *stack)
		paths         []string
		wantLanded    []string
		wantConflicts []string
		// wantBase is the base's content afterwards.
		wantBase map[string]string
		// wantLeft are the changes the overlay still holds.
		wantLeft []string
	}{
		{
			name:       "all",
			wantLanded: []string{"gone.txt", "olddir/a", "olddir", "new", "edit.txt", "renamed.txt", "new/file.txt"},
			wantBase: map[string]string{
				"edit.txt": "one\ntwo changed\nthree\n", "gone.txt": "<missing>", "new/file.txt": "new\n",
				"old.txt": "<missing>", "renamed.txt": "moving\n", "olddir/a": "<missing>", "keep.txt": "keep\n",
			},
		},
		{
			name: "conflicts",
			meanwhile: func(t *testing.T, s *stack) {
				for name, data := range map[string]string{"edit.txt": "someone else\n", "gone.txt": "still here\n", "new/file.txt": "theirs\n"} {
					if err := backend.WriteFile(s.ctx, s.base, name, []byte(data), backend.WriteOptions{}); err != nil {
						t.Fatal(err)
					}
				}
			},
			wantLanded:    []string{"olddir/a", "olddir", "renamed.txt"},
			wantConflicts: []string{"gone.txt", "edit.txt", "new/file.txt"},
			wantBase: map[string]string{
				"edit.txt": "someone else\n", "gone.txt": "still here\n", "new/file.txt": "theirs\n",
				"old.txt": "<missing>", "renamed.txt": "moving\n", "olddir/a": "<missing>",
			},
			wantLeft: []string{"deleted gone.txt", "modified edit.txt", "created new/file.txt"},
		},
		{
			name:       "subset",
			paths:      []string{"edit.txt", "old.txt"},
			wantLanded: []string{"edit.txt", "renamed.txt"},
			wantBase: map[string]string{
				"edit.txt": "one\ntwo changed\nthree\n", "gone.txt": "bye\n", "new/file.txt": "<missing>",
				"old.txt": "<missing>", "renamed.txt": "moving\n", "olddir/a": "a\n",
			},
			wantLeft: []string{"created new/", "created new/file.txt", "deleted gone.txt", "deleted olddir/", "deleted olddir/a"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mk(t)
			agentRun(t, s)
			if tc.meanwhile != nil {
				tc.meanwhile(t, s)
			}
			res, err := s.o.Commit(s.ctx, tc.paths...)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Landed, tc.wantLanded) {
				t.Errorf("landed %q, want %q", res.Landed, tc.wantLanded)
			}
			var conflicts []string
			for _, c := range res.Conflicts {
				conflicts = append(conflicts, c.Path)
				if !errors.Is(c.Err, backend.ErrPrecondition) && !errors.Is(c.Err, fs.ErrExist) {
					t.Errorf("conflict %s: %v, want a failed precondition or fs.ErrExist", c.Path, c.Err)
				}
			}
			if !slices.Equal(conflicts, tc.wantConflicts) {
				t.Errorf("conflicts %q, want %q", conflicts, tc.wantConflicts)
			}
			for name, want := range tc.wantBase {
				if got := content(t, s.base, name); got != want {
					t.Errorf("base %s = %q, want %q", name, got, want)
				}
			}
			left, err := s.o.Changes(s.ctx)
			if err != nil {
				t.Fatal(err)
			}
			got := describeChanges(left)
			slices.Sort(got)
			want := slices.Clone(tc.wantLeft)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("changes left %q, want %q", got, want)
			}
			// What the overlay shows is what was landed or kept.
			for name, want := range map[string]string{"edit.txt": "", "renamed.txt": "moving\n", "old.txt": "<missing>"} {
				if want == "" {
					continue
				}
				if got := content(t, s.o, name); got != want {
					t.Errorf("overlay %s = %q, want %q", name, got, want)
				}
			}
		})
	}
}

// TestCommitThenWriteAgain: a path written again after it landed is a
// change against what landed, and lands over it.
func TestCommitThenWriteAgain(t *testing.T) {
	s := newStack(t, map[string]string{"f": "v0"})
	for i := 1; i <= 3; i++ {
		s.mustWrite("f", fmt.Sprintf("v%d", i))
		res, err := s.o.Commit(s.ctx)
		if err != nil || len(res.Conflicts) > 0 || !slices.Equal(res.Landed, []string{"f"}) {
			t.Fatalf("commit %d: %+v, %v", i, res, err)
		}
		if got := content(t, s.base, "f"); got != fmt.Sprintf("v%d", i) {
			t.Fatalf("base f = %q after commit %d", got, i)
		}
	}
	if raw := names(t, s.upper, "."); len(raw) != 1 || raw[0] != overlay.IndexName {
		t.Errorf("upper layer after commits holds %q, want only the index", raw)
	}
}

func TestDiscard(t *testing.T) {
	s := newStack(t, baseFiles)
	agentRun(t, s)
	if err := s.o.Discard(s.ctx); err != nil {
		t.Fatal(err)
	}
	cs, err := s.o.Changes(s.ctx)
	if err != nil || len(cs) != 0 {
		t.Errorf("changes after Discard: %q, %v", describeChanges(cs), err)
	}
	for name, want := range baseFiles {
		if got := content(t, s.o, name); got != want {
			t.Errorf("%s after Discard = %q, want %q", name, got, want)
		}
	}
	if got := names(t, s.upper, "."); len(got) != 0 {
		t.Errorf("upper layer after Discard holds %q", got)
	}
}

// TestCommitReadOnlyBase: landing needs a writable base.
func TestCommitReadOnlyBase(t *testing.T) {
	s := newStack(t, baseFiles)
	o, err := overlay.New(backend.ReadOnly(s.base), s.upper, overlay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := backend.WriteFile(s.ctx, o, "x", []byte("x"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Commit(s.ctx); !errors.Is(err, backend.ErrReadOnly) {
		t.Errorf("Commit over a read-only base: %v, want ErrReadOnly", err)
	}
}

// TestCommitCompletesAfterCrash: a commit cut short after a file reached
// the base and before the overlay recorded it completes on the next
// Commit instead of reporting its own write as a conflict.
func TestCommitCompletesAfterCrash(t *testing.T) {
	s := newStack(t, map[string]string{"f": "old\n"})
	s.mustWrite("f", "new\n")
	if err := backend.WriteFile(s.ctx, s.base, "f", []byte("new\n"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := s.o.Commit(s.ctx)
	if err != nil || len(res.Conflicts) != 0 || !slices.Equal(res.Landed, []string{"f"}) {
		t.Fatalf("Commit = %+v, %v; want f landed", res, err)
	}
	if cs, err := s.o.Changes(s.ctx); err != nil || len(cs) != 0 {
		t.Errorf("changes left: %q, %v", describeChanges(cs), err)
	}
}

// TestAbandonedWriteRecordsNothingStale: a write over a base file that was
// abandoned leaves no record a later change would be judged against, so a
// base changed meanwhile is not a false conflict.
func TestAbandonedWriteRecordsNothingStale(t *testing.T) {
	s := newStack(t, map[string]string{"f": "v1"})
	w, err := s.o.OpenWrite(s.ctx, "f", backend.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := backend.WriteFile(s.ctx, s.base, "f", []byte("v2"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	s.mustWrite("f", "mine")
	res, err := s.o.Commit(s.ctx)
	if err != nil || len(res.Conflicts) != 0 {
		t.Fatalf("Commit = %+v, %v; want no conflict", res, err)
	}
	if got := content(t, s.base, "f"); got != "mine" {
		t.Errorf("base f = %q", got)
	}
}
