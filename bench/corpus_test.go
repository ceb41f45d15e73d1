package bench

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSourceFilesDeterministic checks that a file of the source tree is
// the same bytes every time, and that a sample of the tree has the mix
// the suite promises: many languages, some binaries, nested directories,
// the search patterns present, about 10 KB per file.
func TestSourceFilesDeterministic(t *testing.T) {
	dirs := sourceDirs()
	exts := map[string]int{}
	binaries, total, depth := 0, 0, 0
	var literal int
	for i := range 400 {
		name, data := sourceFile(dirs, i)
		again, data2 := sourceFile(dirs, i)
		if name != again || !bytes.Equal(data, data2) {
			t.Fatalf("file %d differs between two generations", i)
		}
		exts[filepath.Ext(name)]++
		if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
			binaries++
		}
		total += len(data)
		depth = max(depth, strings.Count(name, "/"))
		literal += bytes.Count(data, []byte(LiteralPattern))
	}
	if len(exts) < 12 {
		t.Errorf("only %d extensions in 400 files: %v", len(exts), exts)
	}
	if binaries == 0 || binaries > 20 {
		t.Errorf("%d binary files in 400, want a few", binaries)
	}
	if avg := total / 400; avg < 7000 || avg > 14000 {
		t.Errorf("average file size %d bytes, want about 10 KB", avg)
	}
	if depth < 4 {
		t.Errorf("deepest file is %d directories down, want nesting", depth)
	}
	if literal == 0 {
		t.Errorf("%q does not appear in 400 files", LiteralPattern)
	}
}

func TestEnsure(t *testing.T) {
	cache := t.TempDir()
	calls := 0
	gen := func(_ context.Context, dir string) error {
		calls++
		return os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644)
	}
	for range 2 {
		dir, err := ensure(t.Context(), cache, "c-v1", gen)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "f")); err != nil {
			t.Fatal(err)
		}
	}
	if calls != 1 {
		t.Errorf("generated %d times, want once", calls)
	}

	failing := func(_ context.Context, dir string) error {
		os.WriteFile(filepath.Join(dir, "half"), nil, 0o644)
		return errors.New("disk full")
	}
	if _, err := ensure(t.Context(), cache, "broken-v1", failing); err == nil {
		t.Fatal("a failed generation succeeded")
	}
	entries, err := os.ReadDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "c-v1" {
		t.Errorf("cache holds %v after a failed generation, want only c-v1", entries)
	}
}

func TestCacheDir(t *testing.T) {
	t.Setenv(EnvDir, "")
	if CacheDir() != DefaultCacheDir {
		t.Errorf("CacheDir() = %q, want %q", CacheDir(), DefaultCacheDir)
	}
	t.Setenv(EnvDir, "/elsewhere")
	if CacheDir() != "/elsewhere" {
		t.Errorf("CacheDir() = %q with %s set", CacheDir(), EnvDir)
	}
}
