//go:build !fencefs_oneshot

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOverlayCommand: an agent's edits through an overlay: mount reach
// only the upper layer; fencefs overlay lists them, diffs them, commits a
// subset with a conflict reported (exit 1) and discards the rest.
func TestOverlayCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, data := range map[string]string{"repo/a.txt": "one\n", "repo/b.txt": "bee\n", "repo/c.txt": "sea\n"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "up"), 0o755); err != nil {
		t.Fatal(err)
	}
	mount := "ws=overlay:local:" + filepath.Join(dir, "repo") + ":ro+local:" + filepath.Join(dir, "up")
	for _, args := range [][]string{
		{"edit_file", `{"path": "/ws/a.txt", "old_text": "one", "new_text": "two"}`},
		{"edit_file", `{"path": "/ws/b.txt", "old_text": "bee", "new_text": "be"}`},
		{"create_directory", `{"path": "/ws/new"}`},
		{"write_file", `{"path": "/ws/new/n.txt", "content": "new\n"}`},
	} {
		if got := runFencefs(t, dir, "", nil, append([]string{"call", "--mount", mount, "--tools", "all"}, args...)...); got.code != 0 {
			t.Fatalf("call %q: exit %d\n%s%s", args, got.code, got.stdout, got.stderr)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "repo", "a.txt")); string(data) != "one\n" {
		t.Fatalf("the base changed: %q", data)
	}
	spec := "overlay:local:" + filepath.Join(dir, "repo") + "+local:" + filepath.Join(dir, "up")
	got := runFencefs(t, dir, "", nil, "overlay", "changes", spec)
	if want := "modified a.txt\nmodified b.txt\ncreated new/\ncreated new/n.txt\n"; got.code != 0 || got.stdout != want {
		t.Fatalf("changes: exit %d, %q, want %q\n%s", got.code, got.stdout, want, got.stderr)
	}
	got = runFencefs(t, dir, "", nil, "overlay", "diff", spec, "a.txt")
	if want := "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+two\n"; got.code != 0 || got.stdout != want {
		t.Fatalf("diff: exit %d, %q, want %q\n%s", got.code, got.stdout, want, got.stderr)
	}
	// Someone else changes b.txt meanwhile: its commit is a conflict.
	if err := os.WriteFile(filepath.Join(dir, "repo", "b.txt"), []byte("theirs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got = runFencefs(t, dir, "", nil, "overlay", "commit", spec, "a.txt", "b.txt")
	if got.code != 1 || !strings.Contains(got.stdout, "landed a.txt\n") || !strings.Contains(got.stdout, "conflict b.txt") || !strings.Contains(got.stderr, "1 conflicts left") {
		t.Fatalf("commit: exit %d\n%s%s", got.code, got.stdout, got.stderr)
	}
	for name, want := range map[string]string{"a.txt": "two\n", "b.txt": "theirs\n"} {
		if data, _ := os.ReadFile(filepath.Join(dir, "repo", name)); string(data) != want {
			t.Errorf("base %s = %q after commit, want %q", name, data, want)
		}
	}
	if got = runFencefs(t, dir, "", nil, "overlay", "discard", spec); got.code != 0 {
		t.Fatalf("discard: exit %d\n%s", got.code, got.stderr)
	}
	if got = runFencefs(t, dir, "", nil, "overlay", "changes", spec); got.code != 0 || got.stdout != "" {
		t.Errorf("changes after discard: exit %d, %q\n%s", got.code, got.stdout, got.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "repo", "new")); err == nil {
		t.Error("a discarded directory reached the base")
	}
	for _, bad := range [][]string{
		{"overlay", "changes"},
		{"overlay", "land", spec},
		{"overlay", "discard", spec, "a.txt"},
		{"overlay", "diff", "local:" + dir},
	} {
		if got := runFencefs(t, dir, "", nil, bad...); got.code != 1 || got.stderr == "" {
			t.Errorf("%q: exit %d, stderr %q", bad, got.code, got.stderr)
		}
	}
}
