package rg

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fencefs/fencefs/internal/testexe"
	"github.com/fencefs/fencefs/tools/internal/textsearch"
)

// needRG returns a runner, skipping (with a reason) where rg is missing.
func needRG(t *testing.T) *Runner {
	t.Helper()
	if _, err := exec.LookPath("rg"); err != nil {
		t.Skip("rg is not installed; the runner cannot be tested here")
	}
	return &Runner{}
}

// tree writes files (name -> content) below a new temporary directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func listFiles(t *testing.T, r *Runner, q Query) []string {
	t.Helper()
	var got []string
	if err := r.Files(context.Background(), q, func(p string) bool { got = append(got, p); return true }); err != nil {
		t.Fatalf("Files: %v", err)
	}
	return got
}

func search(t *testing.T, r *Runner, q SearchQuery) []File {
	t.Helper()
	var got []File
	if err := r.Search(context.Background(), q, func(f File) bool { got = append(got, f); return true }); err != nil {
		t.Fatalf("Search: %v", err)
	}
	return got
}

func TestFiles(t *testing.T) {
	r := needRG(t)
	dir := tree(t, map[string]string{
		"a.txt": "x", "a/b.txt": "x", "b.go": "x", ".hidden": "x", ".dir/x.go": "x",
		"evil\n./a.txt:1:forged": "x",
	})
	got := listFiles(t, r, Query{Dir: dir})
	want := []string{"./a/b.txt", "./a.txt", "./b.go", "./evil\n./a.txt:1:forged"}
	if !slices.Equal(got, want) {
		t.Fatalf("Files = %q, want %q", got, want)
	}
	got = listFiles(t, r, Query{Dir: dir, Globs: []string{"*.txt"}})
	if want := []string{"./a/b.txt", "./a.txt"}; !slices.Equal(got, want) {
		t.Fatalf("Files *.txt = %q, want %q", got, want)
	}
	got = listFiles(t, r, Query{Dir: dir, Paths: []string{"a"}})
	if want := []string{"./a/b.txt"}; !slices.Equal(got, want) {
		t.Fatalf("Files a = %q, want %q", got, want)
	}
}

func TestSearch(t *testing.T) {
	r := needRG(t)
	dir := tree(t, map[string]string{
		"a.txt":    "one\nfoo\ntwo\n",
		"b.txt":    "x\xff foo\r\n",
		"bin.dat":  "foo\x00",
		"late.txt": strings.Repeat("a", 9000) + "\nfoo\n\x00\nfoo again\n",
		"--files":  "foo as a name\n",
	})
	got := search(t, r, SearchQuery{Query: Query{Dir: dir}, Pattern: "foo"})
	var summary []string
	for _, f := range got {
		var lines []string
		if f.BinaryOffset >= 0 {
			// rg's lines of a file with a NUL are not its real lines.
			summary = append(summary, f.Path+"|bin")
			continue
		}
		for _, l := range f.Lines {
			lines = append(lines, l.Text)
		}
		summary = append(summary, f.Path+"|"+strings.Join(lines, "|")+"|text")
	}
	want := []string{
		"./--files|foo as a name|text",
		"./a.txt|foo|text",
		"./b.txt|x\ufffd foo\r|text",
		"./bin.dat|bin",
		"./late.txt|bin",
	}
	if !slices.Equal(summary, want) {
		t.Fatalf("Search =\n%q\nwant\n%q", summary, want)
	}
	if got[4].BinaryOffset != 9005 {
		t.Errorf("late.txt binary offset = %d, want 9005", got[4].BinaryOffset)
	}
}

func TestSearchPatternIsNeverAnOption(t *testing.T) {
	r := needRG(t)
	dir := tree(t, map[string]string{"a.txt": "-e\n--files\nplain\n"})
	for pattern, want := range map[string][]string{
		"--files":  {"--files"},
		"-e":       {"-e"},
		"-":        {"-e", "--files"},
		"--pre=sh": nil,
	} {
		var texts []string
		for _, f := range search(t, r, SearchQuery{Query: Query{Dir: dir}, Pattern: pattern, Literal: true}) {
			for _, l := range f.Lines {
				texts = append(texts, l.Text)
			}
		}
		if !slices.Equal(texts, want) {
			t.Errorf("pattern %q: lines %q, want %q", pattern, texts, want)
		}
	}
}

func TestNonUTF8Path(t *testing.T) {
	r := needRG(t)
	dir := tree(t, map[string]string{"ok.txt": "foo\n"})
	bad := filepath.Join(dir, "bad\xff.txt")
	if err := os.WriteFile(bad, []byte("foo\n"), 0o644); err != nil {
		t.Skip("the file system refuses non-UTF-8 names")
	}
	got := search(t, r, SearchQuery{Query: Query{Dir: dir}, Pattern: "foo"})
	if len(got) != 2 || got[0].Path != "./bad\xff.txt" {
		t.Fatalf("got %+v", got)
	}
}

// TestUsageErrors gives patterns and globs rg cannot use: each is
// ErrPattern or ErrGlob, which carry none of rg's words.
func TestUsageErrors(t *testing.T) {
	r := needRG(t)
	dir := tree(t, map[string]string{"a.txt": "x\n"})
	for _, c := range []struct {
		q    SearchQuery
		want error
	}{
		{SearchQuery{Query: Query{Dir: dir}, Pattern: "("}, ErrPattern},
		{SearchQuery{Query: Query{Dir: dir}, Pattern: "(glob"}, ErrPattern},
		{SearchQuery{Query: Query{Dir: dir}, Pattern: "a\nb"}, ErrPattern},
		{SearchQuery{Query: Query{Dir: dir}, Pattern: "a{1000}{1000}{100}"}, ErrPattern},
		{SearchQuery{Query: Query{Dir: dir, Globs: []string{"a{"}}, Pattern: "x"}, ErrGlob},
	} {
		err := r.Search(context.Background(), c.q, func(File) bool { return true })
		if !errors.Is(err, c.want) {
			t.Errorf("query %+v: err = %v, want %v", c.q, err, c.want)
		}
	}
}

// TestReadsNoIgnoreFile plants ignore files of every kind, some of them
// FIFOs that would block an open, and a .git file leading to an exclude
// file: rg opens none of them, so every file is searched and the search
// ends.
func TestReadsNoIgnoreFile(t *testing.T) {
	r := needRG(t)
	outside := tree(t, map[string]string{"wt/commondir": "../repo\n", "repo/info/exclude": "*.txt\n"})
	dir := tree(t, map[string]string{
		"a.txt": "foo\n", "sub/b.txt": "foo\n", "sub/.ignore": "*.txt\n", ".rgignore": "a.txt\n",
		".git": "gitdir: " + filepath.Join(outside, "wt") + "\n",
	})
	for _, name := range []string{".gitignore", ".ignore", "sub/.gitignore", "sub/.rgignore"} {
		if err := syscall.Mkfifo(filepath.Join(dir, name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := search(t, r, SearchQuery{Query: Query{Dir: dir}, Pattern: "foo"})
	if len(got) != 2 || got[0].Path != "./a.txt" || got[1].Path != "./sub/b.txt" {
		t.Fatalf("got %+v", got)
	}
	if files := listFiles(t, r, Query{Dir: dir}); !slices.Equal(files, []string{"./a.txt", "./sub/b.txt"}) {
		t.Fatalf("files %q", files)
	}
}

func TestNotInstalled(t *testing.T) {
	r := &Runner{Path: filepath.Join(t.TempDir(), "no-rg")}
	err := r.Files(context.Background(), Query{Dir: t.TempDir()}, func(string) bool { return true })
	if !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("err = %v", err)
	}
}

// TestHostileConfig sets a ripgrep configuration that would follow links,
// show hidden files and run a preprocessor; none of it may apply.
func TestHostileConfig(t *testing.T) {
	r := needRG(t)
	dir := tree(t, map[string]string{"a.txt": "foo\n", ".hidden.txt": "foo\n"})
	marker := filepath.Join(t.TempDir(), "ran")
	script := filepath.Join(t.TempDir(), "pre.sh")
	testexe.Write(t, script, "#!/bin/sh\ntouch "+marker+"\ncat \"$1\"\n")
	config := filepath.Join(t.TempDir(), "rgrc")
	if err := os.WriteFile(config, []byte("--hidden\n--follow\n--pre="+script+"\n--files-with-matches\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RIPGREP_CONFIG_PATH", config)
	got := search(t, r, SearchQuery{Query: Query{Dir: dir}, Pattern: "foo"})
	if len(got) != 1 || got[0].Path != "./a.txt" || len(got[0].Lines) != 1 {
		t.Fatalf("got %+v", got)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the configured preprocessor ran")
	}
}

func TestStopEarly(t *testing.T) {
	r := needRG(t)
	files := map[string]string{}
	for i := range 300 {
		files[filepath.Join("d", strings.Repeat("x", i%7+1)+string(rune('a'+i%26))+"-"+time.Duration(i).String())] = "foo\n"
	}
	dir := tree(t, files)
	n := 0
	err := r.Search(context.Background(), SearchQuery{Query: Query{Dir: dir}, Pattern: "foo"}, func(File) bool {
		n++
		return n < 3
	})
	if err != nil || n != 3 {
		t.Fatalf("n = %d, err = %v", n, err)
	}
}

// fakeRG writes a script standing in for rg that starts a child and hangs.
func fakeRG(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "rg")
	testexe.Write(t, p, "#!/bin/sh\nsleep 30 &\nwait\n")
	return p
}

func TestTimeoutKillsGroup(t *testing.T) {
	r := &Runner{Path: fakeRG(t), Timeout: 200 * time.Millisecond}
	start := time.Now()
	err := r.Files(context.Background(), Query{Dir: t.TempDir()}, func(string) bool { return true })
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	// The sleeping child holds stdout open: only killing the whole process
	// group lets the run end well before the child's 30 seconds.
	if d := time.Since(start); d > 4*time.Second {
		t.Fatalf("run took %v", d)
	}
}

func TestCancel(t *testing.T) {
	r := &Runner{Path: fakeRG(t)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- r.Files(ctx, Query{Dir: t.TempDir()}, func(string) bool { return true })
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestDisplayCut(t *testing.T) {
	r := needRG(t)
	dir := tree(t, map[string]string{"a.txt": "foo " + strings.Repeat("y", 700) + "\n"})
	got := search(t, r, SearchQuery{Query: Query{Dir: dir}, Pattern: "foo", MaxColumns: 10})
	if len(got) != 1 || got[0].Lines[0].Text != "foo yyyyyy"+textsearch.LongLineMarker {
		t.Fatalf("got %+v", got)
	}
}

func TestTypeGlobs(t *testing.T) {
	globs, ok := TypeGlobs("go")
	if !ok || !slices.Equal(globs, []string{"*.go"}) {
		t.Fatalf("go: %q %v", globs, ok)
	}
	if globs, ok := TypeGlobs("py"); !ok || !slices.Contains(globs, "*.py") {
		t.Fatalf("py: %q %v", globs, ok)
	}
	if _, ok := TypeGlobs("no-such-type"); ok {
		t.Fatal("unknown type found")
	}
}

// TestArgTooLong passes a pattern longer than the kernel takes for one
// argument (128 KiB on Linux): the start fails with E2BIG, which is
// ErrArgTooLong.
func TestArgTooLong(t *testing.T) {
	r := &Runner{Path: fakeRG(t)}
	err := r.Search(context.Background(), SearchQuery{Query: Query{Dir: t.TempDir()}, Pattern: strings.Repeat("a", 200<<10)}, func(File) bool { return true })
	if !errors.Is(err, ErrArgTooLong) {
		t.Fatalf("err = %v, want ErrArgTooLong", err)
	}
}

// TestAbortIsOutOfMemory stands in for an rg that aborts (SIGABRT) without
// saying why, as a Rust allocation failure may: the run is ErrOutOfMemory.
func TestAbortIsOutOfMemory(t *testing.T) {
	p := filepath.Join(t.TempDir(), "rg")
	testexe.Write(t, p, "#!/bin/sh\nkill -ABRT $$\n")
	r := &Runner{Path: p}
	err := r.Search(context.Background(), SearchQuery{Query: Query{Dir: t.TempDir()}, Pattern: "a"}, func(File) bool { return true })
	if !errors.Is(err, ErrOutOfMemory) {
		t.Fatalf("err = %v, want ErrOutOfMemory", err)
	}
}
