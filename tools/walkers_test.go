package tools

import (
	"context"
	"io/fs"
	"sort"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/local"
)

// walkTree is the tree most walker tests search.
var walkTree = map[string]string{
	"a.txt":          "alpha\nneedle one\n",
	"a/b.txt":        "needle in a/b\n",
	"a/c/d.go":       "package c\n// needle\n",
	"b.go":           "package b\n",
	"bin.dat":        "needle\x00binary",
	".env":           "needle=secret\n",
	".hidden/x.txt":  "needle hidden\n",
	"sub/.dot/y.txt": "needle deep hidden\n",
	"sub/z.md":       "# needle\nline\n",
}

func putTree(t *testing.T, fx fixture, files map[string]string) {
	t.Helper()
	for name, data := range files {
		fx.put(t, name, data)
	}
}

func TestSearchFiles(t *testing.T) {
	hidden := "\n[2 hidden entries omitted; name a hidden path explicitly to include it]"
	hiddenDir := "\n[1 hidden entry omitted; name a hidden path explicitly to include it]"
	tests := []struct {
		name string
		opts Options
		args []any
		want string
	}{
		{"walk order", Options{}, []any{"pattern", "needle"},
			"a/b.txt:1:needle in a/b\na/c/d.go:2:// needle\na.txt:2:needle one\nsub/z.md:1:# needle" + hidden},
		{"regex", Options{}, []any{"pattern", `^package \w$`}, "a/c/d.go:1:package c\nb.go:1:package b" + hidden},
		{"include_glob spans directories", Options{}, []any{"pattern", "needle", "include_glob", "*.go"}, "a/c/d.go:2:// needle" + hiddenDir},
		{"include_glob against the root path", Options{Cwd: "a"}, []any{"pattern", "needle", "include_glob", "a/c/*"}, "c/d.go:2:// needle"},
		{"cwd relative output", Options{Cwd: "sub"}, []any{"pattern", "needle", "path", ".."},
			"../a/b.txt:1:needle in a/b\n../a/c/d.go:2:// needle\n../a.txt:2:needle one\nz.md:1:# needle" + hidden},
		{"file path", Options{}, []any{"pattern", "needle", "path", "a/b.txt"}, "a/b.txt:1:needle in a/b"},
		{"hidden file named explicitly", Options{}, []any{"pattern", "needle", "path", ".env"}, ".env:1:needle=secret"},
		{"hidden dir named explicitly", Options{}, []any{"pattern", "needle", "path", ".hidden"}, ".hidden/x.txt:1:needle hidden"},
		{"binary file path", Options{}, []any{"pattern", "needle", "path", "bin.dat"}, "No matches found."},
		{"no match", Options{}, []any{"pattern", "nothing here", "path", "sub"},
			"No matches found.\n[1 hidden entry omitted; name a hidden path explicitly to include it]"},
		{"cap", Options{MaxSearchResults: 2}, []any{"pattern", "needle"},
			"a/b.txt:1:needle in a/b\na/c/d.go:2:// needle\n[... truncated at 2 matches]" + hidden},
		{"cap not reached exactly", Options{MaxSearchResults: 4}, []any{"pattern", "needle"},
			"a/b.txt:1:needle in a/b\na/c/d.go:2:// needle\na.txt:2:needle one\nsub/z.md:1:# needle" + hidden},
		{"denied entries filtered", Options{Denied: []string{"a/c"}}, []any{"pattern", "needle"},
			"a/b.txt:1:needle in a/b\na.txt:2:needle one\nsub/z.md:1:# needle" + hidden},
		{"allowed entries only", Options{Allowed: []string{"*.md"}}, []any{"pattern", "needle"}, "sub/z.md:1:# needle" + hiddenDir},
	}
	forEach(t, func(t *testing.T, fx fixture) {
		putTree(t, fx, walkTree)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s := newSet(t, fx.b, tt.opts)
				wantEqual(t, ok(t, s, nameSearchFiles, tt.args...), tt.want)
			})
		}
	})
}

func TestSearchFilesErrors(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		putTree(t, fx, walkTree)
		s := newSet(t, fx.b, Options{Denied: []string{"sub"}})
		wantEqual(t, retry(t, s, nameSearchFiles, "pattern", "("), "Invalid regex pattern: missing closing ): `(`")
		wantEqual(t, retry(t, s, nameSearchFiles, "pattern", "x", "path", "nope"), "Path not found: nope")
		wantEqual(t, retry(t, s, nameSearchFiles, "pattern", "x", "path", "sub"), "Path 'sub' is denied by pattern 'sub'.")
		wantEqual(t, retry(t, s, nameSearchFiles, "pattern", "x", "path", "../x"), "Path '../x' resolves outside the root directory.")
		wantEqual(t, retry(t, s, nameSearchFiles, "path", "."), "Missing required argument 'pattern'.")
	})
}

func TestFindFiles(t *testing.T) {
	// The notice counts the hidden entries of the root the pattern could
	// have found: .env and the directory .hidden, or only .hidden, whose
	// content a pattern spanning directories could match.
	hidden := "\n[2 hidden entries omitted; name a hidden path explicitly to include it]"
	hiddenDir := "\n[1 hidden entry omitted; name a hidden path explicitly to include it]"
	tests := []struct {
		name string
		opts Options
		args []any
		want string
	}{
		{"top level only", Options{}, []any{"pattern", "*.txt"}, "a.txt"},
		{"any depth", Options{}, []any{"pattern", "**/*.txt"}, "a/b.txt\na.txt" + hiddenDir},
		{"directories", Options{}, []any{"pattern", "*"}, "a/\na.txt\nb.go\nbin.dat\nsub/" + hidden},
		{"directories only", Options{}, []any{"pattern", "**/*/"}, "a/\na/c/\nsub/" + hiddenDir},
		{"negated class bang", Options{}, []any{"pattern", "[!a]*"}, "b.go\nbin.dat\nsub/" + hidden},
		{"negated class caret", Options{}, []any{"pattern", "[^ab]*"}, "sub/" + hidden},
		{"below a path", Options{}, []any{"pattern", "**", "path", "a"}, "a/b.txt\na/c/\na/c/d.go"},
		{"alternatives", Options{}, []any{"pattern", "**/*.{go,md}"}, "a/c/d.go\nb.go\nsub/z.md" + hiddenDir},
		{"cap", Options{MaxFindResults: 2}, []any{"pattern", "**"}, "a/\na/b.txt\n[... truncated at 2 matches]" + hidden},
		{"hidden never matched", Options{}, []any{"pattern", "**/.*"}, "No matches found." + hidden},
		{"cwd relative", Options{Cwd: "sub"}, []any{"pattern", "**/*.go", "path", "../a"}, "../a/c/d.go"},
		{"denied", Options{Denied: []string{"**/*.go"}}, []any{"pattern", "**/*.go"}, "No matches found." + hiddenDir},
	}
	forEach(t, func(t *testing.T, fx fixture) {
		putTree(t, fx, walkTree)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s := newSet(t, fx.b, tt.opts)
				wantEqual(t, ok(t, s, nameFindFiles, tt.args...), tt.want)
			})
		}
		s := newSet(t, fx.b, Options{})
		wantEqual(t, retry(t, s, nameFindFiles, "pattern", "/etc/*"), "Pattern '/etc/*' must be relative to the search path, not absolute.")
		wantEqual(t, retry(t, s, nameFindFiles, "pattern", "../*"), "Pattern '../*' is not a valid glob pattern.")
		wantEqual(t, retry(t, s, nameFindFiles, "pattern", "a/../*"), "Pattern 'a/../*' is not a valid glob pattern.")
		wantEqual(t, retry(t, s, nameFindFiles, "pattern", "*", "path", "a.txt"), "Not a directory: a.txt")
	})
}

func TestListFilesAndGrep(t *testing.T) {
	tree := map[string]string{
		"a.txt":        "alpha\nneedle one\nbeta\ngamma\ndelta\nneedle two\n",
		"a/b.go":       "package a\n// needle\n",
		"a/gen/x.go":   "// needle generated\n",
		"bin.dat":      "needle\x00",
		"logs/x.log":   "needle log\n",
		"notes.md":     "NEEDLE upper\n",
		".gitignore":   "*.log\ngen/\n",
		".git/HEAD":    "ref\n",
		"vendor/v.go":  "// needle vendored\n",
		"vendor/.keep": "",
		".ignore":      "vendor/\n",
	}
	type call struct {
		tool string
		args []any
		want string
	}
	calls := []call{
		{nameListFiles, nil, "a/b.go\na.txt\nbin.dat\nnotes.md" + "\n[3 hidden entries omitted; name a hidden path explicitly to include it]"},
		// Of .git, .gitignore and .ignore, only the directory could hold
		// a file the glob selects.
		{nameListFiles, []any{"glob", "*.go"}, "a/b.go" + "\n[1 hidden entry omitted; name a hidden path explicitly to include it]"},
		{nameGrep, []any{"pattern", "needle", "file_type", "go"}, "a/b.go:2:// needle" + "\n[1 hidden entry omitted; name a hidden path explicitly to include it]"},
		{nameListFiles, []any{"glob", "!*.go"}, "a.txt\nbin.dat\nnotes.md" + "\n[3 hidden entries omitted; name a hidden path explicitly to include it]"},
		{nameListFiles, []any{"path", "a"}, "a/b.go"},
		{nameListFiles, []any{"path", "a.txt"}, "a.txt"},
		{nameGrep, []any{"pattern", "needle"}, "a/b.go:2:// needle\na.txt:2:needle one\na.txt:6:needle two" + "\n[3 hidden entries omitted; name a hidden path explicitly to include it]"},
		{nameGrep, []any{"pattern", "needle", "ignore_case", true, "path", "notes.md"}, "notes.md:1:NEEDLE upper"},
		{nameGrep, []any{"pattern", "needle", "path", "a.txt", "context", 1},
			"a.txt-1-alpha\na.txt:2:needle one\na.txt-3-beta\n--\na.txt-5-delta\na.txt:6:needle two"},
		{nameGrep, []any{"pattern", "needle", "file_type", "go", "path", "a"}, "a/b.go:2:// needle"},
		{nameGrep, []any{"pattern", "ne.dle", "literal", true, "path", "a"}, "No matches found."},
	}
	forEach(t, func(t *testing.T, fx fixture) {
		putTree(t, fx, tree)
		s := newSet(t, fx.b, Options{Tools: AllTools()})
		for _, c := range calls {
			wantEqual(t, ok(t, s, c.tool, c.args...), c.want)
		}
	})
}

func TestWalkerEvents(t *testing.T) {
	fx := localFixture(t)
	putTree(t, fx, walkTree)
	var got []FilesSearched
	s := newSet(t, fx.b, Options{Tools: AllTools(), MaxSearchResults: 2, OnEvent: func(_ context.Context, ev Event) {
		got = append(got, ev.(FilesSearched))
	}})
	ok(t, s, nameSearchFiles, "pattern", "needle")
	ok(t, s, nameFindFiles, "pattern", "**/*.txt", "path", "a")
	ok(t, s, nameListFiles)
	ok(t, s, nameGrep, "pattern", "needle", "path", "sub")
	retry(t, s, nameGrep, "pattern", "(")
	want := []FilesSearched{
		{Path: ".", Pattern: "needle", Search: "grep", MatchCount: 2, Truncated: true},
		{Path: "a", Pattern: "**/*.txt", Search: "find", MatchCount: 1},
		{Path: ".", Search: "find", MatchCount: 6},
		{Path: "sub", Pattern: "needle", Search: "grep", MatchCount: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("events %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// shuffledWalker is a backend with a Walker that reports entries in an
// order unlike the contract's (by depth, names descending), as an object
// store listing might.
type shuffledWalker struct{ backend.Backend }

func (w shuffledWalker) Walk(ctx context.Context, dir string, fn backend.WalkFunc) error {
	type item struct {
		name string
		e    backend.DirEntry
	}
	var items []item
	err := backend.Walk(ctx, w.Backend, dir, func(name string, e backend.DirEntry) error {
		items = append(items, item{name, e})
		return nil
	})
	if err != nil {
		return err
	}
	sort.SliceStable(items, func(i, j int) bool {
		di, dj := strings.Count(items[i].name, "/"), strings.Count(items[j].name, "/")
		if di != dj {
			return di < dj
		}
		return items[i].name > items[j].name
	})
	for _, it := range items {
		if err := fn(it.name, it.e); err != nil && err != fs.SkipDir {
			return err
		}
	}
	return nil
}

func TestWalkerBackendOrder(t *testing.T) {
	fx := backends(t)[2]
	putTree(t, fx, walkTree)
	s := newSet(t, shuffledWalker{fx.b}, Options{Tools: AllTools()})
	hidden := "\n[2 hidden entries omitted; name a hidden path explicitly to include it]"
	wantEqual(t, ok(t, s, nameFindFiles, "pattern", "**"), "a/\na/b.txt\na/c/\na/c/d.go\na.txt\nb.go\nbin.dat\nsub/\nsub/z.md"+hidden)
	wantEqual(t, ok(t, s, nameSearchFiles, "pattern", "needle", "path", "a"), "a/b.txt:1:needle in a/b\na/c/d.go:2:// needle")
	wantEqual(t, ok(t, s, nameListFiles), "a/b.txt\na/c/d.go\na.txt\nb.go\nbin.dat\nsub/z.md"+hidden)
}

// skipRecorder is a backend with a Walker (the listing fallback, which
// honours fs.SkipDir) that records the directories the walk asked to
// skip, and the directories it listed.
type skipRecorder struct {
	backend.Backend
	skipped, listed []string
}

func (r *skipRecorder) List(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	r.listed = append(r.listed, dir)
	return r.Backend.List(ctx, dir)
}

func (r *skipRecorder) Walk(ctx context.Context, dir string, fn backend.WalkFunc) error {
	return backend.Walk(ctx, r.Backend, dir, func(name string, e backend.DirEntry) error {
		err := fn(name, e)
		if err == fs.SkipDir {
			r.skipped = append(r.skipped, name)
		}
		return err
	})
}

// TestWalkerPrunes checks that a whole-tree walk skips what no walker
// may enter (hidden and denied directories, and for find_files the
// directories its pattern cannot reach), and that the output is the same
// as without pruning.
func TestWalkerPrunes(t *testing.T) {
	tree := map[string]string{
		"src/a.go": "needle\n", "src/deep/b.go": "needle\n", "docs/c.md": "needle\n",
		".git/config": "needle\n", "private/key.go": "needle\n", "src/.cache/x.go": "needle\n",
	}
	tests := []struct {
		tool        string
		args        []any
		want        string
		wantSkipped []string
	}{
		{nameSearchFiles, []any{"pattern", "needle"},
			"docs/c.md:1:needle\nsrc/a.go:1:needle\nsrc/deep/b.go:1:needle\n[1 hidden entry omitted; name a hidden path explicitly to include it]",
			[]string{".git", "private", "src/.cache"}},
		{nameFindFiles, []any{"pattern", "src/*.go"},
			"src/a.go",
			[]string{".git", "docs", "private", "src/.cache", "src/deep"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			fx := backends(t)[1]
			putTree(t, fx, tree)
			rec := &skipRecorder{Backend: fx.b}
			s := newSet(t, rec, Options{Denied: []string{"private"}})
			wantEqual(t, ok(t, s, tt.tool, tt.args...), tt.want)
			sort.Strings(rec.skipped)
			if strings.Join(rec.skipped, " ") != strings.Join(tt.wantSkipped, " ") {
				t.Errorf("skipped %q, want %q", rec.skipped, tt.wantSkipped)
			}
		})
	}
}

// localRecorder is a local backend that records the directories it
// lists.
type localRecorder struct {
	*local.FS
	listed []string
}

func (r *localRecorder) List(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	r.listed = append(r.listed, dir)
	return r.FS.List(ctx, dir)
}

// ListTypes records the listing too, whether or not the local backend
// lists types on its own.
func (r *localRecorder) ListTypes(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	r.listed = append(r.listed, dir)
	return backend.ListTypes(ctx, r.FS, dir)
}

// TestLocalWalkListsAsItGoes checks that on local disk the walk lists one
// directory at a time, never hidden, denied or pruned ones, and stops
// listing once a capped walker has its output.
func TestLocalWalkListsAsItGoes(t *testing.T) {
	fx := localFixture(t)
	putTree(t, fx, map[string]string{
		"a/x.go": "needle\n", "a/y.go": "needle\n", "b/z.go": "needle\n", "c/w.txt": "needle\n",
		".git/objects/o": "needle\n", "private/p.go": "needle\n",
	})
	rec := &localRecorder{FS: fx.b.(*local.FS)}
	tests := []struct {
		tool       string
		opts       Options
		args       []any
		wantListed string
	}{
		{nameSearchFiles, Options{Denied: []string{"private"}}, []any{"pattern", "needle"}, ". a b c"},
		{nameFindFiles, Options{}, []any{"pattern", "b/*.go"}, ". b"},
		{nameFindFiles, Options{MaxFindResults: 1}, []any{"pattern", "**/*.go"}, ". a"},
	}
	for _, tt := range tests {
		rec.listed = nil
		s := newSet(t, rec, tt.opts)
		ok(t, s, tt.tool, tt.args...)
		if got := strings.Join(rec.listed, " "); got != tt.wantListed {
			t.Errorf("%s %v listed %q, want %q", tt.tool, tt.args, got, tt.wantListed)
		}
	}
}

// TestListFilesListsEachDirectoryOnce checks that list_files walks as
// every walker does: one listing per directory, none per file.
func TestListFilesListsEachDirectoryOnce(t *testing.T) {
	fx := localFixture(t)
	putTree(t, fx, map[string]string{"a/1.txt": "", "a/2.txt": "", "a/3.txt": "", "b/4.txt": "", "c.txt": ""})
	rec := &localRecorder{FS: fx.b.(*local.FS)}
	s := newSet(t, rec, Options{Tools: AllTools()})
	wantEqual(t, ok(t, s, nameListFiles), "a/1.txt\na/2.txt\na/3.txt\nb/4.txt\nc.txt")
	if got := strings.Join(rec.listed, " "); got != ". a b" {
		t.Errorf("listed %q, want \". a b\"", got)
	}
}
