//go:build !fencefs_oneshot

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStartupRefusals runs serve and call with settings that would give a
// server that cannot work as meant: each is refused at start-up, exit 1,
// with a message naming the setting.
func TestStartupRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing cwd", []string{"--root", f.root, "--cwd", "nope"}, "fencefs: --cwd nope: no such directory\n"},
		{"cwd is a file", []string{"--root", f.root, "--cwd", "a.txt"}, "fencefs: --cwd a.txt: not a directory\n"},
		{"cwd outside", []string{"--root", f.root, "--cwd", "../outside"}, "fencefs: --cwd: "},
		{"mounted missing cwd", []string{"--mount", "ws=local:" + f.root, "--cwd", "/ws/nope"}, "fencefs: --cwd /ws/nope: no such directory\n"},
		{"read-only with a write tool", []string{"--root", f.root, "--read-only", "--tools", "write_file"}, "fencefs: --read-only: contradicts --tools: write_file changes storage"},
	}
	for _, tt := range tests {
		for _, cmd := range []string{"serve", "call"} {
			t.Run(tt.name+" "+cmd, func(t *testing.T) {
				t.Parallel()
				args := append([]string{cmd}, tt.args...)
				if cmd == "call" {
					args = append(args, "list_directory")
				}
				got := runFencefs(t, f.root, "", nil, args...)
				if got.code != 1 || got.stdout != "" || !strings.Contains(got.stderr, tt.want) {
					t.Fatalf("fencefs %q: %+v, want exit 1 and stderr with %q", args, got, tt.want)
				}
			})
		}
	}
	// serve's approval key: only with approvals, and long enough.
	short := filepath.Join(t.TempDir(), "short.key")
	writeFile(t, short, "12345\n")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--approval-key-file", short}, "fencefs: --approval-key-file: needs --approve changes"},
		{[]string{"--approve", "changes", "--approval-key-file", short}, "short.key holds 5 bytes; a key needs at least 32"},
		{[]string{"--approve", "changes", "--approval-key-file", filepath.Join(f.root, "none.key")}, "fencefs: --approval-key-file: open "},
	} {
		args := append([]string{"serve", "--root", f.root}, tt.args...)
		if got := runFencefs(t, f.root, "", nil, args...); got.code != 1 || got.stdout != "" || !strings.Contains(got.stderr, tt.want) {
			t.Errorf("fencefs %q: %+v, want exit 1 and stderr with %q", args, got, tt.want)
		}
	}
	// A cwd that is a directory works, mounted too.
	if got := runFencefs(t, f.root, "", nil, "call", "--mount", "ws=local:"+f.root, "--cwd", "/ws/sub", "list_directory"); got.code != 0 || !strings.Contains(got.stdout, "b.go") {
		t.Fatalf("mounted cwd: %+v", got)
	}
}

// TestRipgrepMissingWarning offers grep with no rg on PATH: start-up says
// so on stderr, and grep still answers with the built-in engine.
func TestRipgrepMissingWarning(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	empty := t.TempDir()
	got := runFencefs(t, f.root, "", []string{"PATH=" + empty}, "call", "--tools", "grep,read_file", "grep", `{"pattern":"."}`)
	if got.code != 0 || !strings.Contains(got.stderr, "ripgrep (rg) is not on PATH: grep searches with the built-in engine") || !strings.Contains(got.stdout, "a.txt") {
		t.Fatalf("without rg: %+v", got)
	}
	got = runFencefs(t, f.root, "", []string{"PATH=" + empty}, "call", "--tools", "list_files,read_file", "read_file", `{"path":"a.txt"}`)
	if got.code != 0 || got.stderr != "" {
		t.Fatalf("without rg, list_files offered: %+v, want no warning (list_files needs no ripgrep)", got)
	}
	got = runFencefs(t, f.root, "", []string{"PATH=" + empty}, "call", "read_file", `{"path":"a.txt"}`)
	if got.code != 0 || got.stderr != "" {
		t.Fatalf("without rg and without grep: %+v, want no warning", got)
	}
}

// TestConfigRelativeToFile starts call from another directory with a
// config file whose mount is relative: it is taken from the file's folder.
func TestConfigRelativeToFile(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	writeFile(t, filepath.Join(base, "conf", "ref", "r.txt"), "from the file's folder\n")
	writeFile(t, filepath.Join(base, "conf", "fencefs.yaml"), "mounts:\n  ref: local:./ref:ro\n")
	elsewhere := t.TempDir()
	got := runFencefs(t, elsewhere, "", nil, "call", "--config", filepath.Join(base, "conf", "fencefs.yaml"), "read_file", `{"path":"/ref/r.txt"}`)
	if got.code != 0 || !strings.Contains(got.stdout, "from the file's folder") {
		t.Fatalf("relative mount in a config file: %+v", got)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "ref")); err == nil {
		t.Fatal("a directory appeared in the working directory")
	}
}

// TestServeInstructions checks that the server's instructions name the
// working directory, and never the host path of the root.
func TestServeInstructions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--root", f.root}, "Relative file paths start at the working directory, the workspace root."},
		{[]string{"--root", f.root, "--cwd", "sub"}, "Relative file paths start at the working directory, 'sub' (in the workspace)."},
		{[]string{"--mount", "ws=local:" + f.root, "--mount", "ref=local:" + f.outside + ":ro", "--cwd", "/ws/sub"},
			"File paths are rooted: each mount is a top-level directory. Mounts: /ref (read-only), /ws. The working directory is /ws/sub; relative paths start there."},
		{[]string{"--mount", "ws=local:" + f.root}, "The working directory is /; relative paths start there."},
	}
	for _, tt := range tests {
		cs, _ := startServer(t, "", tt.args...)
		got := cs.InitializeResult().Instructions
		if !strings.HasSuffix(got, tt.want) {
			t.Errorf("%q: instructions %q, want %q", tt.args, got, tt.want)
		}
		if strings.Contains(got, f.root) {
			t.Errorf("%q: the instructions name the host root: %q", tt.args, got)
		}
	}
}

// TestEditToleranceFlag edits a file indented with tabs with an old_text
// indented with spaces: refused by default, applied with --edit-tolerance
// whitespace keeping the file's tabs, and an unknown mode is refused at
// start-up.
func TestEditToleranceFlag(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	name := filepath.Join(f.root, "t.go")
	writeFile(t, name, "func f() int {\n\treturn 1\n}\n")
	args := `{"path":"t.go","old_text":"func f() int {\n    return 1\n}","new_text":"func f() int {\n    return 2\n}"}`
	if got := runFencefs(t, f.root, "", nil, "call", "edit_file", args); got.code == 0 {
		t.Fatalf("exact matching applied a whitespace-only match: %+v", got)
	}
	if got := runFencefs(t, f.root, "", nil, "call", "--edit-tolerance", "whitespace", "edit_file", args); got.code != 0 {
		t.Fatalf("--edit-tolerance whitespace: %+v", got)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if want := "func f() int {\n\treturn 2\n}\n"; string(data) != want {
		t.Fatalf("after the tolerant edit the file holds %q, want %q", data, want)
	}
	if got := runFencefs(t, f.root, "", nil, "call", "--edit-tolerance", "fuzzy", "read_file", `{"path":"t.go"}`); got.code == 0 || !strings.Contains(got.stderr, `--edit-tolerance: "fuzzy" is not one of whitespace`) {
		t.Fatalf("unknown mode: %+v", got)
	}
}
