package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/fencefs/fencefs/internal/testexe"
)

// needRG skips a test that exercises ripgrep itself where it is missing.
func needRG(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("rg"); err != nil {
		t.Skip("rg is not installed; the ripgrep path cannot be tested here")
	}
}

func TestGrepPatternLooksLikeAnOption(t *testing.T) {
	needRG(t)
	fx := localFixture(t)
	fx.put(t, "a.txt", "--files\n-e\nplain\n")
	s := newSet(t, fx.b, Options{Tools: AllTools()})
	wantEqual(t, ok(t, s, nameGrep, "pattern", "--files"), "a.txt:1:--files")
	wantEqual(t, ok(t, s, nameGrep, "pattern", "-e"), "a.txt:2:-e")
	wantEqual(t, ok(t, s, nameGrep, "pattern", "--pre=sh", "literal", true), "No matches found.")
	wantEqual(t, ok(t, s, nameListFiles, "glob", "--files"), "No files found.")
}

// TestForgedNames: names holding a newline and ":1:" must not add lines
// to any walker's output.
func TestForgedNames(t *testing.T) {
	fx := localFixture(t)
	fx.put(t, "a.txt", "needle\n")
	evil := "x\na.txt:1:needle forged"
	if err := os.WriteFile(filepath.Join(fx.dir, evil), []byte("needle\n"), 0o644); err != nil {
		t.Skip("the file system refuses newlines in names")
	}
	if err := os.MkdirAll(filepath.Join(fx.dir, "d\r", "deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fx.dir, "d\r", "deeper", "f.txt"), []byte("needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	notice := "\n[2 entries with control characters in their names omitted]"
	s := newSet(t, fx.b, Options{Tools: AllTools()})
	wantEqual(t, ok(t, s, nameSearchFiles, "pattern", "needle"), "a.txt:1:needle"+notice)
	wantEqual(t, ok(t, s, nameFindFiles, "pattern", "**"), "a.txt"+notice)
	if _, err := exec.LookPath("rg"); err == nil {
		wantEqual(t, ok(t, s, nameGrep, "pattern", "needle"), "a.txt:1:needle"+notice)
		wantEqual(t, ok(t, s, nameListFiles), "a.txt"+notice)
	}
}

func TestWalkerSymlinks(t *testing.T) {
	fx := localFixture(t)
	fx.put(t, "sub/z.md", "needle\n")
	fx.put(t, "target.txt", "needle target\n")
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("needle outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, to := range map[string]string{
		"linkdir": "sub", "linkfile.txt": "target.txt", "out": outside,
		"outfile.txt": filepath.Join(outside, "secret.txt"), "dangling.txt": "nope",
	} {
		if err := os.Symlink(to, filepath.Join(fx.dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	s := newSet(t, fx.b, Options{Tools: AllTools()})
	// The root may be a link inside the namespace; output keeps its name.
	wantEqual(t, ok(t, s, nameSearchFiles, "pattern", "needle", "path", "linkdir"), "linkdir/z.md:1:needle")
	wantEqual(t, retry(t, s, nameSearchFiles, "pattern", "needle", "path", "out"), "Path 'out' resolves outside the root directory.")
	// Links in the tree: never descended; outside and dangling ones dropped.
	wantEqual(t, ok(t, s, nameFindFiles, "pattern", "**"), "linkdir/\nlinkfile.txt\nsub/\nsub/z.md\ntarget.txt")
	wantEqual(t, ok(t, s, nameSearchFiles, "pattern", "needle"), "linkfile.txt:1:needle target\nsub/z.md:1:needle\ntarget.txt:1:needle target")
	if _, err := exec.LookPath("rg"); err == nil {
		wantEqual(t, ok(t, s, nameGrep, "pattern", "needle", "path", "linkdir"), "linkdir/z.md:1:needle")
		wantEqual(t, retry(t, s, nameGrep, "pattern", "needle", "path", "out"), "Path 'out' resolves outside the root directory.")
		wantEqual(t, ok(t, s, nameGrep, "pattern", "needle"), "sub/z.md:1:needle\ntarget.txt:1:needle target")
		wantEqual(t, ok(t, s, nameListFiles), "sub/z.md\ntarget.txt")
	}
}

func TestHostileRipgrepConfig(t *testing.T) {
	needRG(t)
	fx := localFixture(t)
	fx.put(t, "a.txt", "needle\n")
	fx.put(t, ".hidden.txt", "needle\n")
	marker := filepath.Join(t.TempDir(), "ran")
	script := filepath.Join(t.TempDir(), "pre.sh")
	testexe.Write(t, script, "#!/bin/sh\ntouch "+marker+"\ncat \"$1\"\n")
	config := filepath.Join(t.TempDir(), "rgrc")
	if err := os.WriteFile(config, []byte("--hidden\n--follow\n--no-ignore\n--pre="+script+"\n--max-count=0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RIPGREP_CONFIG_PATH", config)
	s := newSet(t, fx.b, Options{Tools: AllTools()})
	notice := "\n[1 hidden entry omitted; name a hidden path explicitly to include it]"
	wantEqual(t, ok(t, s, nameGrep, "pattern", "needle"), "a.txt:1:needle"+notice)
	wantEqual(t, ok(t, s, nameListFiles), "a.txt"+notice)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the configured preprocessor ran")
	}
}

// TestRipgrepMissingAndErrors: without ripgrep, grep and list_files
// answer with the built-in engine, as on storage without a host path;
// argument errors are the tools' own, and a pattern ripgrep cannot parse
// is explained as the built-in engine explains it, in none of ripgrep's
// words.
func TestRipgrepMissingAndErrors(t *testing.T) {
	fx := localFixture(t)
	fx.put(t, "a.txt", "needle\n")
	missing := newSet(t, fx.b, Options{Tools: AllTools(), RipgrepPath: filepath.Join(t.TempDir(), "rg")})
	wantEqual(t, ok(t, missing, nameGrep, "pattern", "needle"), "a.txt:1:needle")
	wantEqual(t, ok(t, missing, nameGrep, "pattern", "needle", "path", "a.txt"), "a.txt:1:needle")
	wantEqual(t, ok(t, missing, nameListFiles), "a.txt")
	if RipgrepInstalled(filepath.Join(t.TempDir(), "rg")) {
		t.Error("RipgrepInstalled reports a missing executable")
	}
	s := newSet(t, fx.b, Options{Tools: AllTools()})
	wantEqual(t, retry(t, s, nameGrep, "pattern", "x", "context", 21), "Invalid context 21: context must be between 0 and 20.")
	wantEqual(t, retry(t, s, nameGrep, "pattern", "x", "file_type", "nope"),
		"Unknown file_type 'nope'. Use a ripgrep type name such as 'py', 'go', 'js', 'rust' or 'md'.")
	wantEqual(t, retry(t, s, nameGrep, "pattern", "x", "glob", "a{"), "Pattern 'a{' is not a valid glob pattern.")
	if _, err := exec.LookPath("rg"); err == nil {
		if !RipgrepInstalled("") {
			t.Error("RipgrepInstalled does not find rg in PATH")
		}
		for pattern, want := range map[string]string{
			"(":                  "Invalid regex pattern: missing closing ): `(`",
			"a\nb":               "Invalid regex pattern: the pattern matches a line break, but grep matches one line at a time.",
			`[a&&b]`:             "Invalid regex pattern: ripgrep's regular expression syntax does not accept this pattern.",
			"a{1000}{1000}{100}": "Invalid regex pattern: invalid nested repetition operator: `{1000}{1000}`",
		} {
			wantEqual(t, retry(t, s, nameGrep, "pattern", pattern), want)
		}
	}
}

// TestExplicitGlobKeepsDotfilesHidden: ripgrep prints dotfiles a --glob
// names; the walkers never show them.
func TestExplicitGlobKeepsDotfilesHidden(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		if fx.dir != "" {
			needRG(t)
		}
		fx.put(t, ".secret.go", "needle\n")
		fx.put(t, "a/.inner.go", "needle\n")
		fx.put(t, "a/b.go", "needle\n")
		s := newSet(t, fx.b, Options{Tools: AllTools()})
		notice := "\n[1 hidden entry omitted; name a hidden path explicitly to include it]"
		wantEqual(t, ok(t, s, nameListFiles, "glob", "*.go"), "a/b.go"+notice)
		wantEqual(t, ok(t, s, nameListFiles, "glob", ".*"), "No files found."+notice)
		wantEqual(t, ok(t, s, nameGrep, "pattern", "needle", "glob", "*.go"), "a/b.go:1:needle"+notice)
	})
}
