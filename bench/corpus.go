// Package bench is fencefs's benchmark suite: deterministic corpora, the
// benchmarks that time each tool side by side with the program a user
// would run instead, and the table of ratios they add up to.
//
// The corpora are generated once into a cache directory ([CacheDir],
// $FENCEFS_BENCH_DIR or /tmp/fencefs-bench) and reused while their
// version is current:
//
//   - [SourceTree]: about 20,000 source-like files (about 200 MB) in nested
//     directories, in a dozen languages, with some binary files;
//   - [WideTree]: 100,000 small entries, for walks;
//   - [BigFile]: one 1 GiB text file.
//
// Everything is generated from fixed seeds, so every machine benchmarks
// the same bytes. The whole suite runs with one command,
// scripts/bench.sh, which prints one table (see [Rows] and [WriteTable]).
package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
)

// EnvDir names the environment variable that overrides DefaultCacheDir.
const EnvDir = "FENCEFS_BENCH_DIR"

// DefaultCacheDir is where the corpora are generated when EnvDir is unset.
const DefaultCacheDir = "/tmp/fencefs-bench"

// Sizes of the corpora.
const (
	// SourceFiles is the number of files in the source tree.
	SourceFiles = 20_000
	// WideEntries is the number of files and directories in the wide tree.
	WideEntries = 100_000
	// BigSize is the size of the big file.
	BigSize = 1 << 30
)

// Patterns the search benchmarks look for in the source tree. The literal
// is an identifier in a few hundred lines; the regular expression has a
// required literal part ("Config(") that is far more common than its
// matches.
const (
	LiteralPattern = "parseManifest"
	RegexPattern   = `func \w+Config\(`
)

// corpusVersion changes whenever a generator's output changes, so that a
// stale cache is generated again rather than benchmarked.
const corpusVersion = "v1"

// CacheDir returns the directory the corpora are kept in.
func CacheDir() string {
	if d := os.Getenv(EnvDir); d != "" {
		return d
	}
	return DefaultCacheDir
}

// SourceTree returns the directory of the source-like tree under cache,
// generating it first when it is missing.
func SourceTree(ctx context.Context, cache string) (string, error) {
	return ensure(ctx, cache, "source-"+corpusVersion, writeSourceTree)
}

// WideTree returns the directory of the 100,000-entry tree under cache,
// generating it first when it is missing.
func WideTree(ctx context.Context, cache string) (string, error) {
	return ensure(ctx, cache, "wide-"+corpusVersion, writeWideTree)
}

// IgnoredFiles is the number of files in the ignored tree's
// node_modules, and IgnoredSourceFiles the number of files beside it.
const (
	IgnoredFiles       = 20_000
	IgnoredSourceFiles = 1_000
)

// IgnoredTree returns the directory of a git work tree whose .gitignore
// leaves out its node_modules of IgnoredFiles files, beside a source tree
// of IgnoredSourceFiles files, generating it first when it is missing.
func IgnoredTree(ctx context.Context, cache string) (string, error) {
	return ensure(ctx, cache, "ignored-"+corpusVersion, writeIgnoredTree)
}

// BigFile returns the directory holding the 1 GiB text file
// [BigFileName] under cache, generating it first when it is missing.
func BigFile(ctx context.Context, cache string) (string, error) {
	return ensure(ctx, cache, "big-"+corpusVersion, writeBigFile)
}

// BigFileName is the name of the big file in the directory BigFile
// returns.
const BigFileName = "big.txt"

// ensure returns cache/name, generating it with gen in a temporary
// directory that is renamed into place when complete, so that a corpus is
// either whole or absent, even when two runs generate it at once.
func ensure(ctx context.Context, cache, name string, gen func(ctx context.Context, dir string) error) (string, error) {
	final := filepath.Join(cache, name)
	if fi, err := os.Stat(final); err == nil && fi.IsDir() {
		return final, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(cache, name+".tmp-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := gen(ctx, tmp); err != nil {
		return "", fmt.Errorf("generating %s: %w", name, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		if fi, statErr := os.Stat(final); statErr == nil && fi.IsDir() {
			return final, nil // another run finished first
		}
		return "", err
	}
	return final, nil
}

// parallel runs fn(i) for i in [0, n) on every CPU, stopping at the first
// error.
func parallel(ctx context.Context, n int, fn func(i int) error) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		next int
		err  error
	)
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil || next >= n {
			return 0, false
		}
		if cerr := ctx.Err(); cerr != nil {
			err = cerr
			return 0, false
		}
		next++
		return next - 1, true
	}
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i, ok := take(); ok; i, ok = take() {
				if e := fn(i); e != nil {
					mu.Lock()
					if err == nil {
						err = e
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return err
}

// writeHidden adds a small .git directory, so that hidden entries are
// present (and skipped) as in a real checkout.
func writeHidden(dir string) error {
	for i := range 16 {
		p := filepath.Join(dir, ".git", "objects", fmt.Sprintf("%02x", i), "pack.idx")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte("hidden\n"), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
}

// writeBigFile writes BigSize bytes of numbered text lines.
func writeBigFile(ctx context.Context, dir string) error {
	f, err := os.Create(filepath.Join(dir, BigFileName))
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(3, 4))
	line := make([]byte, 0, 256)
	written := 0
	for n := 1; written < BigSize; n++ {
		if n%(1<<20) == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		line = append(line[:0], "line "...)
		line = strconv.AppendInt(line, int64(n), 10)
		line = append(line, ':')
		for range 4 + rng.IntN(8) {
			line = append(line, ' ')
			line = append(line, words[rng.IntN(len(words))]...)
		}
		line = append(line, '\n')
		if rest := BigSize - written; len(line) > rest {
			line = append(line[:rest-1], '\n')
		}
		w.Write(line)
		written += len(line)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// writeWideTree writes WideEntries entries: nested directories holding
// small files, a fifth of them Go files.
func writeWideTree(ctx context.Context, dir string) error {
	exts := []string{".go", ".txt", ".py", ".md", ".json"}
	const top, mid, leafPerMid = 20, 10, 25
	dirs := []string{}
	for a := range top {
		for b := range mid {
			for c := range leafPerMid {
				dirs = append(dirs, filepath.Join(fmt.Sprintf("area%02d", a), fmt.Sprintf("group%02d", b), fmt.Sprintf("unit%02d", c)))
			}
		}
	}
	dirCount := len(dirs) + top + top*mid
	files := WideEntries - dirCount
	if err := parallel(ctx, len(dirs), func(i int) error {
		return os.MkdirAll(filepath.Join(dir, dirs[i]), 0o755)
	}); err != nil {
		return err
	}
	return parallel(ctx, files, func(i int) error {
		d := dirs[i%len(dirs)]
		name := fmt.Sprintf("item%06d%s", i, exts[(i/len(dirs))%len(exts)])
		return os.WriteFile(filepath.Join(dir, d, name), []byte(name+"\n"), 0o644)
	})
}

// WalkCount counts the files and directories below dir, for tests of the
// generators.
func WalkCount(dir string) (files, dirs int, bytes int64, err error) {
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		if d.IsDir() {
			dirs++
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files++
		bytes += info.Size()
		return nil
	})
	if errors.Is(err, fs.SkipAll) {
		err = nil
	}
	return files, dirs, bytes, err
}
