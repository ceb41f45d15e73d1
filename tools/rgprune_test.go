package tools

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/aferoadapter"
	"github.com/fencefs/fencefs/internal/testexe"
	"github.com/fencefs/fencefs/local"
)

// walkLogger returns a stand-in for rg that appends to log the files the
// real rg walks in each search (the same arguments with --files in place
// of the pattern) and then runs the search.
func walkLogger(t *testing.T) (fake, log string) {
	t.Helper()
	real, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("rg is not installed; what it walks cannot be checked here")
	}
	dir := t.TempDir()
	fake, log = filepath.Join(dir, "rg"), filepath.Join(dir, "walked")
	script := fmt.Sprintf(`#!/bin/sh
PATH=/usr/bin:/bin
pattern=
for a do
	shift
	case "$a" in
	--regexp=*) pattern="$a" ;;
	*) set -- "$@" "$a" ;;
	esac
done
if [ -z "$pattern" ]; then
	exec %[1]s "$@"
fi
%[1]s --files "$@" | tr '\0' '\n' >>%[2]s
exec %[1]s "$pattern" "$@"
`, real, log)
	testexe.Write(t, fake, script)
	return fake, log
}

// TestRipgrepPrunesIgnoredDirectories runs grep by ripgrep and by the
// built-in engine on a table of ignore layouts: both answer the same, and
// ripgrep walks none of the directories the built-in walk would not enter
// while it walks those a deeper ignore file re-includes.
func TestRipgrepPrunesIgnoredDirectories(t *testing.T) {
	fake, log := walkLogger(t)
	cases := []struct {
		name  string
		files map[string]string
		// unwalked are directories rg must not walk; walked, files it must.
		unwalked, walked []string
	}{
		{"node_modules", map[string]string{
			".git/HEAD": "ref: refs/heads/main\n", ".gitignore": "node_modules/\n",
			"node_modules/a/x.txt": "needle\n", "src/x.txt": "needle\n", "src/node_modules/y.txt": "needle\n",
		}, []string{"node_modules/", "src/node_modules/"}, []string{"src/x.txt"}},
		{"gitignore outside a repository", map[string]string{
			".gitignore": "node_modules/\n", "node_modules/a/x.txt": "needle\n", "src/x.txt": "needle\n",
		}, nil, []string{"node_modules/a/x.txt", "src/x.txt"}},
		{"negation of a child", map[string]string{
			".ignore": "build/*\n!build/keep/\n", "build/out/o.txt": "needle\n", "build/keep/k.txt": "needle\n", "build/b.txt": "needle\n",
		}, []string{"build/out/"}, []string{"build/keep/k.txt"}},
		{"negation below an excluded directory", map[string]string{
			".ignore": "logs/\n!logs/important.txt\n", "logs/important.txt": "needle\n", "logs/.ignore": "!*\n", "a.txt": "needle\n",
		}, []string{"logs/"}, []string{"a.txt"}},
		{"directory re-included by a deeper file", map[string]string{
			".ignore": "gen/\n", "gen/g.txt": "needle\n", "pkg/.ignore": "!gen/\n", "pkg/gen/g.txt": "needle\n",
		}, []string{"gen/"}, []string{"pkg/gen/g.txt"}},
		{"anchored and unanchored", map[string]string{
			".rgignore": "/out/\ntmp\n", "out/o.txt": "needle\n", "sub/out/o.txt": "needle\n", "sub/tmp/t.txt": "needle\n", "tmp/t.txt": "needle\n",
		}, []string{"out/", "sub/tmp/", "tmp/"}, []string{"sub/out/o.txt"}},
		{"deeper ignore file", map[string]string{
			"a/.ignore": "target/\n", "a/target/t.txt": "needle\n", "target/t.txt": "needle\n", "a/b/target/t.txt": "needle\n",
		}, []string{"a/target/", "a/b/target/"}, []string{"target/t.txt"}},
		{"names with glob characters", map[string]string{
			".ignore": "a\\?c/\n\\[ab\\]c/\n\\*/\n", "a?c/f.txt": "needle\n", "abc/f.txt": "needle\n", "[ab]c/f.txt": "needle\n",
			"ac/f.txt": "needle\n", "*/f.txt": "needle\n", "star/f.txt": "needle\n",
		}, []string{"a?c/", "[ab]c/", "*/"}, []string{"abc/f.txt", "ac/f.txt", "star/f.txt"}},
		{"denied directory", map[string]string{
			"private/p.txt": "needle\n", "public/p.txt": "needle\n",
		}, []string{"private/"}, []string{"public/p.txt"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, tc.files)
			lb, err := local.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { lb.Close() })
			ab := aferoadapter.New(afero.NewBasePathFs(afero.NewOsFs(), dir))
			opts := Options{Tools: AllTools(), RipgrepPath: fake, Denied: []string{"private"}}
			viaRG, viaBuiltin := newSet(t, lb, opts), newSet(t, ab, opts)
			for _, kv := range [][]any{{"pattern", "needle"}, {"pattern", "needle", "glob", "*.txt"}} {
				if err := os.Remove(log); err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
				got, want := ok(t, viaRG, nameGrep, kv...), ok(t, viaBuiltin, nameGrep, kv...)
				if got != want {
					t.Errorf("grep %v:\nripgrep:\n%s\nbuilt-in:\n%s", kv, got, want)
				}
				data, err := os.ReadFile(log)
				if err != nil {
					t.Fatalf("ripgrep did not run: %v", err)
				}
				walked := string(data)
				for _, d := range tc.unwalked {
					if strings.Contains(walked, "./"+d) {
						t.Errorf("grep %v: ripgrep walked %s:\n%s", kv, d, walked)
					}
				}
				for _, f := range tc.walked {
					if !strings.Contains(walked, "./"+f+"\n") {
						t.Errorf("grep %v: ripgrep did not walk %s:\n%s", kv, f, walked)
					}
				}
			}
		})
	}
}
