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
	"github.com/fencefs/fencefs/local"
)

// parityTree writes a tree that exercises what the two engines must agree
// on: ignore files inside a git repository, binary files (a NUL early and
// a NUL past the first 8192 bytes), long lines, invalid UTF-8, CRLF, no
// final newline, byte order marks (UTF-8, left out of line 1; UTF-16,
// binary), hidden entries, awkward names.
func parityTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		".git/HEAD":              "ref: refs/heads/main\n",
		".git/info/exclude":      "excluded.txt\n",
		".gitignore":             "*.log\nbuild/\n!keep.log\n/rootonly.txt\n",
		".ignore":                "vendor/\n",
		"excluded.txt":           "needle excluded\n",
		"rootonly.txt":           "needle root only\n",
		"sub/rootonly.txt":       "needle not root\n",
		"keep.log":               "needle kept log\n",
		"x.log":                  "needle log\n",
		"build/out.txt":          "needle build\n",
		"vendor/v.go":            "package v // needle\n",
		"src/main.go":            "package main\n\nfunc main() {\n\tneedle()\n}\n",
		"src/util/u.go":          "package util\n// Needle upper\nfunc needle() {}\n",
		"src/util/.gitignore":    "gen.go\n",
		"src/util/gen.go":        "// needle generated\n",
		"src/debug.log":          "needle ignored from above\n",
		"src/build/b.txt":        "needle ignored build from above\n",
		"src/a b/space name.txt": "needle with space\r\nsecond\r\n",
		"src/colon:1:name.txt":   "needle colon\n",
		"docs/readme.md":         strings.Repeat("filler\n", 30) + "needle\n" + strings.Repeat("filler\n", 3) + "needle again\nend",
		"docs/long.md":           "needle " + strings.Repeat("long ", 300) + "\n",
		"docs/utf8.txt":          "needle \xff\xfe bytes\nnaïve needle\n",
		"bin/early.bin":          "needle\x00binary\n",
		"bin/late.txt":           strings.Repeat("x", 9000) + "\nneedle before\n\x00\nneedle after\nneedle twice\n",
		".hidden/h.txt":          "needle hidden\n",
		"src/.cache/c.txt":       "needle cached\n",
		"empty.txt":              "",
		"unicode/ünï.txt":        "needle unicode name\n",
		"bom/utf8.txt":           "\xef\xbb\xbfneedle after a byte order mark\nsecond needle\n",
		"bom/utf16.txt":          "\xff\xfen\x00e\x00e\x00d\x00l\x00e\x00\n\x00",
	}
	for i := range 30 {
		files[fmt.Sprintf("many/f%02d.txt", i)] = strings.Repeat(fmt.Sprintf("line %d\n", i), i%4) + "needle\n"
	}
	writeTree(t, dir, files)
	return dir
}

// writeTree writes files (slash-separated name -> content) below dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEngineParity runs list_files and grep through ripgrep (local
// backend) and through the built-in engine (the same directory seen
// through afero) and requires identical output.
func TestEngineParity(t *testing.T) {
	if _, err := exec.LookPath("rg"); err != nil {
		t.Skip("rg is not installed; parity with ripgrep cannot be checked here")
	}
	dir := parityTree(t)
	lb, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lb.Close() })
	ab := aferoadapter.New(afero.NewBasePathFs(afero.NewOsFs(), dir))
	for _, opts := range []Options{{}, {Cwd: "src"}, {MaxSearchResults: 7, MaxFindResults: 5}, {Denied: []string{"docs/long.md"}}} {
		opts.Tools = AllTools()
		viaRG, viaBuiltin := newSet(t, lb, opts), newSet(t, ab, opts)
		if _, ok := any(ab).(interface{ LocalPath(string) (string, bool) }); ok {
			t.Fatal("the afero view must not offer a local path")
		}
		calls := [][]any{
			{nameListFiles},
			{nameListFiles, "path", "src"},
			{nameListFiles, "path", "src/util"},
			{nameListFiles, "glob", "*.txt"},
			{nameListFiles, "glob", "!*.txt"},
			{nameListFiles, "glob", "src/**"},
			{nameListFiles, "glob", "*.log"},
			{nameListFiles, "path", "docs/readme.md"},
			{nameGrep, "pattern", "needle"},
			{nameGrep, "pattern", "needle", "context", 2},
			{nameGrep, "pattern", "needle", "context", 20},
			{nameGrep, "pattern", "NEEDLE", "ignore_case", true},
			{nameGrep, "pattern", "needle()", "literal", true},
			{nameGrep, "pattern", `^func \w+\(`},
			{nameGrep, "pattern", "needle", "file_type", "go"},
			{nameGrep, "pattern", "needle", "file_type", "md", "context", 1},
			{nameGrep, "pattern", "needle", "glob", "*.go"},
			{nameGrep, "pattern", "needle", "glob", "!src/**"},
			{nameGrep, "pattern", "needle", "path", "docs/readme.md", "context", 3},
			{nameGrep, "pattern", "needle", "path", "bin"},
			{nameGrep, "pattern", "needle", "path", "src"},
			{nameGrep, "pattern", "second$"},
			{nameGrep, "pattern", "second\r$"},
			{nameGrep, "pattern", "bytes"},
			{nameGrep, "pattern", "nothing matches this"},
			{nameGrep, "pattern", "^needle", "path", "bom"},
			{nameGrep, "pattern", "second", "path", "bom", "context", 1},
		}
		for _, c := range calls {
			tool, kv := c[0].(string), c[1:]
			if opts.Cwd != "" {
				kv = append([]any{"path", ".."}, kv...)
				if i := indexOf(kv[2:], "path"); i >= 0 {
					kv = kv[2:]
					kv[i+1] = "../" + kv[i+1].(string)
				}
			}
			want := ok(t, viaRG, tool, kv...)
			got := ok(t, viaBuiltin, tool, kv...)
			if len(c) == 3 && c[2] == "needle" && opts.Cwd == "" && opts.MaxSearchResults == 0 {
				checkParityGrep(t, want)
			}
			if got != want {
				t.Errorf("opts %+v %s%v:\nripgrep:\n%s\nbuilt-in:\n%s", opts, tool, kv, want, got)
			}
		}
	}
}

func indexOf(kv []any, key string) int {
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i] == key {
			return i
		}
	}
	return -1
}

// checkParityGrep pins down what a plain grep for "needle" over the parity
// tree shows, so the comparison cannot pass on two empty outputs.
func checkParityGrep(t *testing.T, out string) {
	t.Helper()
	for _, want := range []string{
		"bin/late.txt:4:needle after", "bin/late.txt:5:needle twice", "keep.log:1:needle kept log",
		"src/colon:1:name.txt:1:needle colon", "docs/utf8.txt:1:needle \ufffd\ufffd bytes",
		"sub/rootonly.txt:1:needle not root", "src/a b/space name.txt:1:needle with space\r",
		"[4 hidden entries omitted; name a hidden path explicitly to include it]",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("grep output lacks %q:\n%s", want, out)
		}
	}
	for _, absent := range []string{"x.log", "build/", "vendor/", "excluded.txt", "early.bin", "gen.go", "needle hidden", "cached", "\nrootonly.txt"} {
		if strings.Contains(out, absent) {
			t.Errorf("grep output shows %q:\n%s", absent, out)
		}
	}
}
