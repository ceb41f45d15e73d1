package security

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fencefs/fencefs/internal/testexe"
	"github.com/fencefs/fencefs/tools"
)

// rgKinds are the worlds where grep and list_files run ripgrep, and afero
// where the built-in engine stands in, so both engines face each attack.
var rgKinds = []string{kindLocal, kindMounted, kindAfero}

// ripgrepLayout adds to the base layout files whose names look like
// ripgrep options or forge output lines, a hidden file, and outside a
// pattern file that would make in-root lines match if ripgrep ever read
// it.
func ripgrepLayout(s secrets) layout {
	l := baseLayout(s)
	for _, name := range []string{"needle.txt", "-e", "--files", "--pre=sh", "-f", "x\na.txt:1:FORGED needle", "sub/y\rFORGED", "evil:1:FORGED"} {
		l["ws/"+name] = file("needle\n")
	}
	l["ws/.hidden-needle.txt"] = file("needle\n")
	l["ws/marks.txt"] = file("INROOTMARK\n")
	l["outside/patterns.txt"] = file("INROOTMARK\n" + s.tok + "\n")
	return l
}

// TestRipgrepOptionLikeArguments passes patterns, globs, file types and
// paths that look like ripgrep options: each is taken as what it is
// (a pattern, a glob, a path), never as an option, so no preprocessor
// runs, no pattern file is read, and no file outside is listed.
func TestRipgrepOptionLikeArguments(t *testing.T) {
	forWorlds(t, rgKinds, ripgrepLayout, func(t *testing.T, w *world) {
		s := w.set(t, tools.Options{})
		marker := filepath.Join(t.TempDir(), "ran")
		script := filepath.Join(t.TempDir(), "pre.sh")
		testexe.Write(t, script, "#!/bin/sh\ntouch "+marker+"\ncat \"$1\"\n")
		patternFile := w.expand("@/outside/patterns.txt")
		state := w.snap(t)
		for _, pattern := range []string{"--files", "-e", "--pre=" + script, "--pre", script, "-f" + patternFile, "-f", "--file=" + patternFile,
			"--no-config", "-", "--", "-v", "--invert-match", "-uuu", "--follow", "-L", "--files-with-matches", "--json", "-0", "--null-data"} {
			for _, literal := range []bool{false, true} {
				args := map[string]any{"pattern": pattern, "literal": literal}
				var out string
				var err error
				state, out, err = w.attack(t, s, probe{tool: grepTool, args: args, echo: pattern}, state)
				if err == nil && firstLine(out) != "No matches found." {
					t.Errorf("%s grep %q (literal %v): %q; want no matches", w.kind, pattern, literal, clip(out))
				}
				if err != nil && !strings.HasPrefix(err.Error(), "Invalid regex pattern") {
					t.Errorf("%s grep %q (literal %v): %v", w.kind, pattern, literal, err)
				}
			}
		}
		prefix := ""
		if w.rooted {
			prefix = "/ws/"
		}
		for _, g := range []struct{ glob, match string }{
			{"--pre=" + script, ""}, {"-uuu", ""}, {"-L", ""}, {"--follow", ""}, {"--files", "--files"}, {"-e", "-e"},
		} {
			for _, tool := range []string{grepTool, listFiles} {
				args := map[string]any{"glob": g.glob}
				want := "No files found."
				if tool == grepTool {
					args["pattern"] = "needle"
					want = "No matches found."
				}
				if g.match != "" {
					want = prefix + g.match
					if tool == grepTool {
						want += ":1:needle"
					}
				}
				var out string
				var err error
				state, out, err = w.attack(t, s, probe{tool: tool, args: args, echo: g.glob}, state)
				if err != nil || firstLine(out) != want {
					t.Errorf("%s %s glob %q: %q, %v; want %q", w.kind, tool, g.glob, clip(out), err, want)
				}
			}
		}
		for _, ft := range []string{"--pre", "-uuu", "all", "--files"} {
			state, _, _ = w.attack(t, s, probe{tool: grepTool, args: map[string]any{"pattern": "needle", "file_type": ft}, echo: ft, refuse: true}, state)
		}
		for _, p := range []string{"-e", "--files", "--pre=sh", "-f"} {
			var out string
			state, out, _ = w.attack(t, s, probe{tool: grepTool, args: map[string]any{"pattern": "needle", "path": p}, echo: p}, state)
			if want := prefix + p + ":1:needle"; firstLine(out) != want {
				t.Errorf("%s grep in %q: %q; want %q", w.kind, p, out, want)
			}
			state, out, _ = w.attack(t, s, probe{tool: listFiles, args: map[string]any{"path": p}, echo: p}, state)
			if want := prefix + p; firstLine(out) != want {
				t.Errorf("%s list_files %q: %q; want %q", w.kind, p, out, want)
			}
		}
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("%s: a preprocessor named by an argument ran", w.kind)
		}
	})
}

// TestForgedNames plants files whose names hold a newline or a carriage
// return followed by text shaped like a result line ("a.txt:1:FORGED"):
// no walker prints a line the names forged; such names are left out and
// counted. A name with ":1:" but no control character stays on its own
// line.
func TestForgedNames(t *testing.T) {
	forWorlds(t, allKinds, ripgrepLayout, func(t *testing.T, w *world) {
		s := w.set(t, tools.Options{})
		state := w.snap(t)
		for _, tool := range walkers {
			args := map[string]any{"path": "."}
			switch tool {
			case searchFiles, grepTool:
				args["pattern"] = "needle"
			case findFiles:
				args["pattern"] = "**"
			}
			var out string
			var err error
			state, out, err = w.attack(t, s, probe{tool: tool, args: args}, state)
			if err != nil {
				t.Errorf("%s %s: %v", w.kind, tool, err)
				continue
			}
			for _, line := range strings.Split(out, "\n") {
				if strings.HasPrefix(line, "FORGED") || strings.HasPrefix(strings.TrimPrefix(line, "/ws/"), "a.txt:1:FORGED") {
					t.Errorf("%s %s prints a forged line %q:\n%s", w.kind, tool, line, clip(out))
				}
			}
			if !strings.Contains(out, "with control characters in their names omitted]") {
				t.Errorf("%s %s: no notice of the omitted names:\n%s", w.kind, tool, clip(out))
			}
		}
	})
}

// TestRipgrepConfigIgnored runs grep and list_files with a hostile
// RIPGREP_CONFIG_PATH inherited from the environment (following links,
// showing hidden and ignored files, running a preprocessor, printing
// only names) and with one naming a FIFO: the results are exactly those
// without it, nothing outside is reached, and the preprocessor never
// runs.
func TestRipgrepConfigIgnored(t *testing.T) {
	mk := func(s secrets) layout {
		l := ripgrepLayout(s)
		l["ws/x-out-dir"] = link("@/ws-evil")
		l["ws/lnk-mid"] = link("sub")
		l["ws/.gitignore"] = file("ignored.txt\n")
		l["ws/ignored.txt"] = file("needle\n")
		return l
	}
	forWorldsSerial(t, []string{kindLocal, kindMounted}, mk, func(t *testing.T, w *world) {
		s := w.set(t, tools.Options{})
		marker := filepath.Join(t.TempDir(), "ran")
		script := filepath.Join(t.TempDir(), "pre.sh")
		testexe.Write(t, script, "#!/bin/sh\ntouch "+marker+"\ncat \"$1\"\n")
		config := filepath.Join(t.TempDir(), "rgrc")
		hostile := strings.Join([]string{"--follow", "--hidden", "--no-ignore", "-uuu", "--pre=" + script, "--pre-glob=*",
			"--search-zip", "--files-with-matches", "--max-count=0", "--null-data", "--glob=!*.txt", "--type-add=txt:*"}, "\n")
		if err := os.WriteFile(config, []byte(hostile+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		pipe := filepath.Join(t.TempDir(), "fifo")
		if err := syscall.Mkfifo(pipe, 0o644); err != nil {
			t.Fatal(err)
		}
		calls := []struct {
			tool string
			args map[string]any
		}{
			{grepTool, map[string]any{"pattern": "needle|" + canaryPattern}},
			{grepTool, map[string]any{"pattern": "needle", "path": "lnk-mid"}},
			{grepTool, map[string]any{"pattern": "needle", "path": "needle.txt"}},
			{listFiles, map[string]any{}},
			{listFiles, map[string]any{"path": "sub"}},
		}
		want := make([]string, len(calls))
		for i, c := range calls {
			out, err := call(t, s, c.tool, c.args)
			if err != nil {
				t.Fatalf("%s %v: %v", c.tool, c.args, err)
			}
			want[i] = out
		}
		for _, cfg := range []string{config, pipe} {
			t.Setenv("RIPGREP_CONFIG_PATH", cfg)
			state := w.snap(t)
			for i, c := range calls {
				var out string
				state, out, _ = w.attack(t, s, probe{tool: c.tool, args: c.args}, state)
				if out != want[i] {
					t.Errorf("%s %s %v with RIPGREP_CONFIG_PATH=%s:\n%s\nwant:\n%s", w.kind, c.tool, c.args, cfg, clip(out), clip(want[i]))
				}
			}
		}
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("%s: the configured preprocessor ran", w.kind)
		}
	})
}

// firstLine returns out up to its first newline: the result, without the
// notices walkers append.
func firstLine(out string) string {
	line, _, _ := strings.Cut(out, "\n")
	return line
}
