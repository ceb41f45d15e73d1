//go:build !fencefs_oneshot

package main

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/cmd/fencefs/internal/config"
	"github.com/fencefs/fencefs/tools"
)

// TestCompletion checks that every script names every command, flag and
// tool, and runs bash's completion function as bash would.
func TestCompletion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, shell := range []string{"bash", "zsh", "fish"} {
		got := runFencefs(t, dir, "", nil, "completion", shell)
		if got.code != 0 || got.stderr != "" {
			t.Fatalf("completion %s: %+v", shell, got)
		}
		for _, c := range commandNames() {
			if !strings.Contains(got.stdout, c) {
				t.Errorf("%s: no command %s", shell, c)
			}
		}
		for _, cmd := range flagCommands() {
			for _, f := range config.Flags(cmd) {
				want := "--" + f.Name
				if shell == "fish" {
					want = "'__fish_seen_subcommand_from " + cmd + "' -l " + f.Name
				}
				if !strings.Contains(got.stdout, want) {
					t.Errorf("%s: no %s for %s", shell, want, cmd)
				}
			}
		}
		for _, tool := range tools.AllTools() {
			if !strings.Contains(got.stdout, tool) {
				t.Errorf("%s: no tool %s", shell, tool)
			}
		}
		if sh, err := exec.LookPath(shell); err == nil {
			if out, err := exec.Command(sh, "-n", "-c", got.stdout).CombinedOutput(); err != nil {
				t.Errorf("%s -n: %v\n%s", shell, err, out)
			}
		} else {
			t.Logf("%s is not installed here: its script was checked for content only", shell)
		}
	}
	script := runFencefs(t, dir, "", nil, "completion", "bash").stdout
	for _, tt := range []struct{ line, want string }{
		{"fencefs se", "serve"},
		{"fencefs serve --max-se", "--max-search --max-sessions"},
		{"fencefs call read_f", "read_file"},
		{"fencefs call --call-t", "--call-timeout"},
		{"fencefs help pa", "paths patterns"},
		{"fencefs completion f", "fish"},
		{"fencefs ov", "overlay"},
		{"fencefs overlay c", "changes commit"},
		{"fencefs audit v", "verify"},
		{"fencefs checkpoints --ro", "--root"},
		{"fencefs help au", "audit"},
	} {
		words := strings.Fields(tt.line)
		prog := script + "\nCOMP_WORDS=(" + tt.line + "); COMP_CWORD=" + strconv.Itoa(len(words)-1) + "; _fencefs; echo \"${COMPREPLY[*]}\"\n"
		out, err := exec.Command("bash", "-c", prog).CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, out)
		}
		if got := strings.TrimSpace(string(out)); got != tt.want {
			t.Errorf("completing %q: %q, want %q", tt.line, got, tt.want)
		}
	}
}
