package rg

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestPrune checks that each pruned directory, whatever its name, is left
// out exactly: a sibling its name would match as an unescaped glob, a
// deeper directory of the same name and a file of the same name stay.
func TestPrune(t *testing.T) {
	r := needRG(t)
	odd := []string{"a?c", "[ab]c", "*", "{x,y}", `back\slash`, "!bang", "#hash", "trail ", " lead", "mid dle", "node_modules", "deep/node_modules"}
	files := map[string]string{}
	for _, d := range odd {
		files[d+"/f.txt"] = "x\n"
	}
	kept := []string{"abc/f.txt", "ac/f.txt", "bc/f.txt", "star/f.txt", "x/f.txt", "back/f.txt", "bang/f.txt", "hash/f.txt",
		"trail/f.txt", "mid/f.txt", "src/node_modules/f.txt", "deep/f.txt", "node_modules.txt"}
	for _, f := range kept {
		files[f] = "x\n"
	}
	dir := tree(t, files)
	want := make([]string, 0, len(kept))
	for _, f := range kept {
		want = append(want, "./"+f)
	}
	slices.SortFunc(want, func(a, b string) int {
		if pathLess(a, b) {
			return -1
		}
		return 1
	})
	got := listFiles(t, r, Query{Dir: dir, Prune: odd})
	if !slices.Equal(got, want) {
		t.Errorf("files with %q pruned:\n got %q\nwant %q", odd, got, want)
	}
	// The search honours the same globs.
	var searched []string
	for _, f := range search(t, r, SearchQuery{Query: Query{Dir: dir, Prune: odd}, Pattern: "x"}) {
		searched = append(searched, f.Path)
	}
	if !slices.Equal(searched, want) {
		t.Errorf("search with %q pruned:\n got %q\nwant %q", odd, searched, want)
	}
}

// TestPruneBounded checks that the excluding globs stay within the
// command line budget: those past it are dropped, so rg searches those
// directories, and the run still succeeds.
func TestPruneBounded(t *testing.T) {
	r := needRG(t)
	lowerLimits(t, maxFileOutput, 64)
	files := map[string]string{}
	var prune []string
	for i := range 20 {
		d := fmt.Sprintf("dir%02d", i)
		files[d+"/f.txt"] = "x\n"
		prune = append(prune, d)
	}
	dir := tree(t, files)
	q := Query{Dir: dir, Prune: prune}
	args := q.args()
	size := 0
	for _, a := range args {
		if strings.HasPrefix(a, "--glob=") {
			size += len(a) + 1
		}
	}
	if size > 64 || size == 0 {
		t.Errorf("globs of %d bytes for a budget of 64: %q", size, args)
	}
	got := listFiles(t, r, q)
	if len(got) == 0 || len(got) == len(prune) {
		t.Errorf("with a budget for some globs, %d of %d directories listed: %q", len(got), len(prune), got)
	}
	if got[len(got)-1] != "./dir19/f.txt" || slices.Contains(got, "./dir00/f.txt") {
		t.Errorf("the first directories are pruned, the last searched: %q", got)
	}
}
