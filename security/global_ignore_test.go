package security

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/internal/testexe"
	"github.com/fencefs/fencefs/tools"
)

// globalIgnoreLayout makes the root a git work tree (rg applies global
// git excludes only inside one) holding files that a global gitignore
// names.
func globalIgnoreLayout(s secrets) layout {
	l := baseLayout(s)
	l["ws/.git/HEAD"] = file("ref: refs/heads/main\n")
	l["ws/hideme.txt"] = file("needle\n")
	l["ws/sub/also.log"] = file("needle\n")
	return l
}

// globalIgnoreHome makes a home directory whose git configuration
// excludes hideme.txt and *.log everywhere, by every route ripgrep knows:
// core.excludesFile in ~/.gitconfig and in $XDG_CONFIG_HOME/git/config,
// and $XDG_CONFIG_HOME/git/ignore. It returns the environment that
// points at it.
func globalIgnoreHome(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	home, xdg := filepath.Join(dir, "home"), filepath.Join(dir, "xdg")
	excludes := filepath.Join(dir, "excludes")
	for name, data := range map[string]string{
		excludes:                                        "hideme.txt\n*.log\n",
		filepath.Join(home, ".gitconfig"):               "[core]\n\texcludesFile = " + excludes + "\n",
		filepath.Join(xdg, "git", "config"):             "[core]\n\texcludesFile = " + excludes + "\n",
		filepath.Join(xdg, "git", "ignore"):             "hideme.txt\n*.log\n",
		filepath.Join(home, ".config", "git", "ignore"): "hideme.txt\n*.log\n",
	} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return []string{"HOME=" + home, "XDG_CONFIG_HOME=" + xdg}
}

// TestGlobalGitignoreNeverRead runs grep and list_files with a ripgrep
// that finds a global gitignore in its home (as rg does through $HOME,
// $XDG_CONFIG_HOME or, with neither set, the password database): the
// results are those of an rg without one, so no rule outside the root
// steers what the tools show. A plain rg run in the same home is checked
// to hide the files, so the test can fail.
func TestGlobalGitignoreNeverRead(t *testing.T) {
	real, err := exec.LookPath("rg")
	if err != nil {
		t.Fatalf("ripgrep is not installed: %v", err)
	}
	forWorlds(t, []string{kindLocal, kindMounted}, globalIgnoreLayout, func(t *testing.T, w *world) {
		env := globalIgnoreHome(t)
		wrapper := filepath.Join(t.TempDir(), "rg")
		script := "#!/bin/sh\nexport " + strings.Join(env, " ") + "\nexec " + real + ` "$@"` + "\n"
		testexe.Write(t, wrapper, script)
		control := exec.Command(wrapper, "--files", "--sort=path", ".")
		control.Dir = w.hostRoot
		out, err := control.Output()
		if err != nil {
			t.Fatalf("rg --files in the hostile home: %v", err)
		}
		if strings.Contains(string(out), "hideme.txt") || strings.Contains(string(out), "also.log") {
			t.Fatalf("a plain rg in the hostile home lists the excluded files, so this test proves nothing:\n%s", out)
		}
		plain := w.set(t, tools.Options{})
		hostile := w.set(t, tools.Options{RipgrepPath: wrapper})
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{grepTool, map[string]any{"pattern": "needle"}},
			{grepTool, map[string]any{"pattern": "needle", "glob": "*.log"}},
			{grepTool, map[string]any{"pattern": "needle", "path": "sub"}},
			{listFiles, map[string]any{}},
			{listFiles, map[string]any{"path": "sub"}},
		} {
			want, err := call(t, plain, c.tool, c.args)
			if err != nil {
				t.Fatalf("%s %v: %v", c.tool, c.args, err)
			}
			got, err := call(t, hostile, c.tool, c.args)
			if err != nil || got != want {
				t.Errorf("%s %v with a global gitignore: %q, %v; want %q", c.tool, c.args, clip(got), err, clip(want))
			}
			if !strings.Contains(want, "also.log") {
				t.Errorf("%s %v: %q does not show sub/also.log", c.tool, c.args, clip(want))
			}
		}
	})
}
