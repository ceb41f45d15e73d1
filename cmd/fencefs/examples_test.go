//go:build !fencefs_oneshot

package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestExamples loads the repository's example configuration and skills
// folder as a new user would, from another directory: they must keep
// working as the program changes.
func TestExamples(t *testing.T) {
	t.Parallel()
	conf, err := filepath.Abs(filepath.Join("..", "..", "examples", "fencefs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	got := runFencefs(t, dir, "", nil, "skills", "--config", conf)
	want := "NAME             PATH                     DESCRIPTION\n" +
		"changelog-entry  /skills/changelog-entry  Write a CHANGELOG entry for a change, in the project's style.\n" +
		"code-review      /skills/code-review      Review a change for correctness, tests and clarity before it is merged.\n"
	if got.code != 0 || got.stdout != want {
		t.Fatalf("skills with the example config: %+v\nwant stdout\n%s", got, want)
	}
	got = runFencefs(t, dir, "", nil, "call", "--config", conf, "read_file", `{"path":"notes.md"}`)
	if got.code != 0 || !strings.Contains(got.stdout, "A file to try the tools on") {
		t.Fatalf("read_file with the example config: %+v", got)
	}
	got = runFencefs(t, dir, "", nil, "call", "--config", conf, "write_file", `{"path":"/skills/x.md","content":"x"}`)
	if got.code != 2 || !strings.Contains(got.stdout, "read-only") {
		t.Fatalf("the example's skills mount is not read-only: %+v", got)
	}
	got = runFencefs(t, dir, "", nil, "call", "--config", conf, "read_file", `{"path":"/skills/code-review/checklist.md"}`)
	if got.code != 0 || !strings.Contains(got.stdout, "What is easy to miss") {
		t.Fatalf("a skill's resource: %+v", got)
	}
	// Skills given on the command line: the skills folder itself.
	skillsDir, _ := filepath.Abs(filepath.Join("..", "..", "examples", "skills"))
	got = runFencefs(t, dir, "", nil, "skills", "--root", skillsDir, "--skills", ".")
	if got.code != 0 || !strings.Contains(got.stdout, "code-review") {
		t.Fatalf("skills over the example folder: %+v", got)
	}
}
