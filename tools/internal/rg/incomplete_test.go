package rg

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/fencefs/fencefs/internal/testexe"
)

// lowerLimits sets the per-file output bound and the batch size for one
// test.
func lowerLimits(t *testing.T, output int64, batch int) {
	t.Helper()
	oldOutput, oldBatch := maxFileOutput, maxBatchBytes
	maxFileOutput, maxBatchBytes = output, batch
	t.Cleanup(func() { maxFileOutput, maxBatchBytes = oldOutput, oldBatch })
}

// TestSearchGoesOnAfterIncompleteFiles searches a tree with two files
// whose reports outgrow the bound: each is reported Incomplete, and every file after it is
// still searched, in rg's order, across several batches of names.
func TestSearchGoesOnAfterIncompleteFiles(t *testing.T) {
	r := needRG(t)
	lowerLimits(t, 64<<10, 40)
	long := strings.Repeat("a\n", 20_000)
	dir := tree(t, map[string]string{
		"a.txt":      "a\n",
		"b/a.txt":    "a\n",
		"b/long.txt": long,
		"b/z.txt":    "a\n",
		// '-' sorts before '/': a byte-wise comparison of whole paths
		// would put this file before b/long.txt and lose it.
		"b-c.txt":     "a\n",
		"c/d/e.txt":   "a\n",
		"c/d/f.txt":   long,
		"c/d/g.txt":   "a\n",
		"c/x.txt":     "a\n",
		"z/last.txt":  "zzz\n",
		"z/later.txt": "a\n",
	})
	var got []string
	err := r.Search(context.Background(), SearchQuery{Query: Query{Dir: dir}, Pattern: "a"}, func(f File) bool {
		name := f.Path
		if f.Incomplete {
			name += " (incomplete)"
			if f.BinaryOffset != -1 || len(f.Lines) == 0 || len(f.Lines) >= 20_000 {
				t.Errorf("%s: BinaryOffset %d, %d lines", f.Path, f.BinaryOffset, len(f.Lines))
			}
		} else if len(f.Lines) != 1 || f.Lines[0].Text != "a" {
			t.Errorf("%s: lines %+v", f.Path, f.Lines)
		}
		got = append(got, name)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"./a.txt", "./b/a.txt", "./b/long.txt (incomplete)", "./b/z.txt", "./b-c.txt",
		"./c/d/e.txt", "./c/d/f.txt (incomplete)", "./c/d/g.txt", "./c/x.txt", "./z/later.txt"}
	if !slices.Equal(got, want) {
		t.Fatalf("files:\n%q\nwant\n%q", got, want)
	}
}

// TestSearchStopsInIncompleteFile stops the search at an Incomplete file.
func TestSearchStopsInIncompleteFile(t *testing.T) {
	r := needRG(t)
	lowerLimits(t, 64<<10, 40)
	dir := tree(t, map[string]string{"a.txt": strings.Repeat("a\n", 20_000), "b.txt": "a\n"})
	var got []string
	err := r.Search(context.Background(), SearchQuery{Query: Query{Dir: dir}, Pattern: "a"}, func(f File) bool {
		got = append(got, f.Path)
		return false
	})
	if err != nil || !slices.Equal(got, []string{"./a.txt"}) {
		t.Fatalf("got %q, %v", got, err)
	}
}

// TestSearchIncompleteSingleFile searches one named file whose report
// outgrows the bound.
func TestSearchIncompleteSingleFile(t *testing.T) {
	r := needRG(t)
	lowerLimits(t, 64<<10, 40)
	dir := tree(t, map[string]string{"a.txt": strings.Repeat("a\n", 20_000), "b.txt": "a\n"})
	got := search(t, r, SearchQuery{Query: Query{Dir: dir, Paths: []string{"a.txt"}}, Pattern: "a"})
	if len(got) != 1 || got[0].Path != "./a.txt" || !got[0].Incomplete {
		t.Fatalf("got %+v", got)
	}
}

// TestSearchMaxLines reports a file with more lines than MaxLines with
// its first MaxLines lines, and goes on with the next file.
func TestSearchMaxLines(t *testing.T) {
	r := needRG(t)
	dir := tree(t, map[string]string{"a.txt": strings.Repeat("a\n", 50), "b.txt": "a\n"})
	got := search(t, r, SearchQuery{Query: Query{Dir: dir}, Pattern: "a", MaxLines: 10})
	if len(got) != 2 || len(got[0].Lines) != 10 || got[0].Lines[9].Number != 10 || got[1].Path != "./b.txt" || len(got[1].Lines) != 1 {
		t.Fatalf("got %+v", got)
	}
}

func TestPathLess(t *testing.T) {
	ordered := []string{"./a", "./a/b", "./a/b/c", "./a/c", "./a-b", "./a.b", "./b", "./b/\xff"}
	for i, a := range ordered {
		for j, b := range ordered {
			if got := pathLess(a, b); got != (i < j) {
				t.Errorf("pathLess(%q, %q) = %v", a, b, got)
			}
		}
	}
}

// TestSearchOutOfMemory bounds rg's memory below what a 100 MB line
// needs: the run ends with ErrOutOfMemory, and a search of ordinary
// files within the same bound succeeds.
func TestSearchOutOfMemory(t *testing.T) {
	r := needRG(t)
	if runtime.GOOS != "linux" {
		t.Skip("rg's memory is bounded on Linux only")
	}
	r.MaxMemory = 64 << 20
	small := tree(t, map[string]string{"a.txt": "a\n", "b/c.txt": "a\n"})
	if got := search(t, r, SearchQuery{Query: Query{Dir: small}, Pattern: "a"}); len(got) != 2 {
		t.Fatalf("search within the bound: %+v", got)
	}
	big := tree(t, map[string]string{"long.txt": strings.Repeat("a", 100<<20) + "\n"})
	err := r.Search(context.Background(), SearchQuery{Query: Query{Dir: big}, Pattern: "a"}, func(File) bool { return true })
	if !errors.Is(err, ErrOutOfMemory) {
		t.Fatalf("err = %v, want ErrOutOfMemory", err)
	}
}

// TestSlotsBoundRuns holds the only slot of a runner: a search waits for
// it until its context ends, or until the runner's timeout passes, and
// never starts rg meanwhile; once the slot is free it runs, and gives the
// slot back.
func TestSlotsBoundRuns(t *testing.T) {
	needRG(t)
	marker := filepath.Join(t.TempDir(), "started")
	fake := filepath.Join(t.TempDir(), "rg")
	testexe.Write(t, fake, "#!/bin/sh\ntouch "+marker+"\nexec rg \"$@\"\n")
	slots := semaphore.NewWeighted(1)
	r := &Runner{Path: fake, Slots: slots}
	dir := tree(t, map[string]string{"a.txt": "a\n"})
	q := SearchQuery{Query: Query{Dir: dir}, Pattern: "a"}
	if err := slots.Acquire(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.Search(ctx, q, func(File) bool { return true }); !errors.Is(err, context.Canceled) {
		t.Errorf("waiting with a cancelled context: %v, want context.Canceled", err)
	}
	short := &Runner{Path: fake, Slots: slots, Timeout: time.Millisecond}
	if err := short.Search(context.Background(), q, func(File) bool { return true }); !errors.Is(err, ErrTimeout) {
		t.Errorf("waiting past the timeout: %v, want ErrTimeout", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("rg started without a slot")
	}
	slots.Release(1)
	if got := search(t, r, q); len(got) != 1 {
		t.Fatalf("with the slot free: %+v", got)
	}
	if !slots.TryAcquire(1) {
		t.Fatal("the search kept its slot")
	}
}
