package overlay_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/memfs"
	"github.com/fencefs/fencefs/overlay"
	"github.com/fencefs/fencefs/overlay/overlaytest"
)

// agentRun changes s's overlay the way an agent would (overlaytest.AgentRun).
func agentRun(t *testing.T, s *stack) {
	t.Helper()
	overlaytest.AgentRun(t, s.o)
}

func TestChangesAndDiff(t *testing.T) {
	s := newStack(t, overlaytest.BaseFiles)
	agentRun(t, s)
	cs, err := s.o.Changes(s.ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"modified edit.txt", "deleted gone.txt", "created new/", "created new/file.txt",
		"deleted olddir/", "deleted olddir/a", "renamed renamed.txt from old.txt",
	}
	if got := overlaytest.DescribeChanges(cs); !slices.Equal(got, want) {
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

// layerKind names a way to make a base and an upper layer.
type layerKind struct {
	name string
	make func(t *testing.T) (base, upper backend.Backend)
}

// TestCommit runs the commit table over memfs layers (versions, atomic
// preconditions) and local disk (no versions: Commit presents hashes);
// conformance/containers/integration/overlay runs it over S3 (ETags).
func TestCommit(t *testing.T) {
	kinds := append([]layerKind{
		{"memfs", func(t *testing.T) (backend.Backend, backend.Backend) { return memfs.New(), memfs.New() }},
	}, localKinds...)
	for _, kind := range kinds {
		t.Run(kind.name, func(t *testing.T) { overlaytest.RunCommit(t, kind.make) })
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
	s := newStack(t, overlaytest.BaseFiles)
	agentRun(t, s)
	if err := s.o.Discard(s.ctx); err != nil {
		t.Fatal(err)
	}
	cs, err := s.o.Changes(s.ctx)
	if err != nil || len(cs) != 0 {
		t.Errorf("changes after Discard: %q, %v", overlaytest.DescribeChanges(cs), err)
	}
	for name, want := range overlaytest.BaseFiles {
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
	s := newStack(t, overlaytest.BaseFiles)
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
		t.Errorf("changes left: %q, %v", overlaytest.DescribeChanges(cs), err)
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
