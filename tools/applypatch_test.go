package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const twoFilePatch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: b.txt\n@@\n-b\n+B\n*** End Patch\n"

func TestApplyPatchResult(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		fx.put(t, "a.txt", "a\n")
		fx.put(t, "b.txt", "b\n")
		s := newSet(t, fx.b, Options{Tools: []string{"apply_patch"}})
		wantEqual(t, ok(t, s, "apply_patch", "patch", twoFilePatch),
			"Applied the patch to 2 files:\nM a.txt (line 1) [hash:"+h12("A\n")+"]\nM b.txt (line 1) [hash:"+h12("B\n")+"]")
		wantEqual(t, fx.mustGet(t, "a.txt"), "A\n")
		wantEqual(t, fx.mustGet(t, "b.txt"), "B\n")
	})
}

// TestApplyPatchRestoresOnFailedCommit changes the second file after the
// patch was approved: its commit fails on the precondition, and the first
// file, already committed, is restored from the version read.
func TestApplyPatchRestoresOnFailedCommit(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		fx.put(t, "a.txt", "a\n")
		fx.put(t, "b.txt", "b\n")
		rec := &recorder{}
		s := newSet(t, fx.b, Options{Tools: []string{"apply_patch"}, OnEvent: rec.on,
			OnChangeRequest: func(context.Context, *ChangeRequest) error {
				fx.put(t, "b.txt", "b changed meanwhile\n")
				return nil
			}})
		wantEqual(t, retry(t, s, "apply_patch", "patch", twoFilePatch),
			"The patch was not applied: Conflict: path 'b.txt' changed while the patch was being applied. Restored from the versions read: a.txt.")
		wantEqual(t, fx.mustGet(t, "a.txt"), "a\n")
		wantEqual(t, fx.mustGet(t, "b.txt"), "b changed meanwhile\n")
		if len(rec.events) > 0 {
			t.Errorf("a failed patch emitted %s", rec.kinds())
		}
	})
}

// TestApplyPatchRestoresMovesAndDeletes fails the last step of a patch
// that moved, deleted and created files: every one is put back.
func TestApplyPatchRestoresMovesAndDeletes(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		fx.put(t, "m.txt", "m\n")
		fx.put(t, "d.txt", "d\n")
		fx.put(t, "last.txt", "l\n")
		s := newSet(t, fx.b, Options{Tools: []string{"apply_patch"}, OnChangeRequest: func(context.Context, *ChangeRequest) error {
			fx.put(t, "last.txt", "changed\n")
			return nil
		}})
		p := "*** Begin Patch\n*** Update File: m.txt\n*** Move to: sub/moved.txt\n@@\n-m\n+M\n*** Delete File: d.txt\n*** Add File: n.txt\n+n\n" +
			"*** Update File: last.txt\n@@\n-l\n+L\n*** End Patch\n"
		got := retry(t, s, "apply_patch", "patch", p)
		if !s.canRemove() {
			// The test memfs has no Remover: moves and deletes are refused
			// before anything is written.
			wantEqual(t, got, "'m.txt': moves and deletes need a backend that can remove files, and this one cannot. No changes were written.")
			wantEqual(t, fx.mustGet(t, "m.txt"), "m\n")
			return
		}
		wantEqual(t, got, "The patch was not applied: Conflict: path 'last.txt' changed while the patch was being applied. Restored from the versions read: n.txt, d.txt, sub/moved.txt.")
		wantEqual(t, fx.mustGet(t, "m.txt"), "m\n")
		wantEqual(t, fx.mustGet(t, "d.txt"), "d\n")
		for _, gone := range []string{"sub/moved.txt", "n.txt"} {
			if _, ok := fx.get(t, gone); ok {
				t.Errorf("%s left behind", gone)
			}
		}
	})
}

// TestApplyPatchAcrossMounts moves a file from one mount to another,
// which no rename can do: it is written there and removed here.
func TestApplyPatchAcrossMounts(t *testing.T) {
	m, dir := mountedFixture(t)
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	s := newSet(t, m, Options{Tools: []string{"apply_patch"}, NoContentHashes: true, OnEvent: rec.on})
	wantEqual(t, ok(t, s, "apply_patch", "patch", "*** Begin Patch\n*** Update File: /work/a.txt\n*** Move to: /tenant/b.txt\n@@\n-a\n+b\n*** End Patch\n"),
		"Applied the patch to 1 file:\nR /work/a.txt -> /tenant/b.txt (line 1)")
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); !os.IsNotExist(err) {
		t.Errorf("source still there: %v", err)
	}
	wantEqual(t, rec.kinds(), "file_moved,file_edited")
	wantEqual(t, ok(t, newSet(t, m, Options{NoContentHashes: true}), "read_file", "path", "/tenant/b.txt"), "[/tenant/b.txt | 1 line]\n     1\tb\n")
	// A read-only mount refuses the whole patch before anything changes.
	got := retry(t, s, "apply_patch", "patch", "*** Begin Patch\n*** Add File: /tenant/c.txt\n+c\n*** Add File: /docs/x.md\n+x\n*** End Patch\n")
	if !strings.Contains(got, "read-only") {
		t.Errorf("patch onto a read-only mount: %q", got)
	}
	if _, err := m.Stat(context.Background(), "tenant/c.txt"); err == nil {
		t.Error("a refused patch created tenant/c.txt")
	}
}

func TestApplyPatchRequireRead(t *testing.T) {
	fx := localFixture(t)
	fx.put(t, "a.txt", "a\n")
	s := newSet(t, fx.b, Options{Tools: []string{"apply_patch", "read_file"}, RequireRead: true, NoContentHashes: true})
	p := "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** End Patch\n"
	wantEqual(t, retry(t, s, "apply_patch", "patch", p), "'a.txt' has not been read yet; read it before changing it. No changes were written.")
	ok(t, s, "read_file", "path", "a.txt")
	ok(t, s, "apply_patch", "patch", p)
	wantEqual(t, fx.mustGet(t, "a.txt"), "A\n")
}

func TestApplyPatchIsOptIn(t *testing.T) {
	s := newSet(t, newMemFS(), Options{})
	if _, found := s.Tool("apply_patch"); found {
		t.Error("apply_patch is in the default tool set")
	}
	if _, found := newSet(t, newMemFS(), Options{Tools: AllTools()}).Tool("apply_patch"); !found {
		t.Error("AllTools lacks apply_patch")
	}
	if s := newSet(t, newMemFS(), Options{Tools: AllTools(), ReadOnly: true}); func() bool { _, f := s.Tool("apply_patch"); return f }() {
		t.Error("a read-only set has apply_patch")
	}
}
