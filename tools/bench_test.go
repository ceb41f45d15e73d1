package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fencefs/fencefs/local"
)

// The walker benchmarks compare each tool with the program it stands in
// for, on the same generated tree, timing both inside one loop so the
// ratio comes from one run:
//
//	go test ./tools -run '^$' -bench Walkers -benchtime 20x
//	FENCEFS_BENCH_FILES=20000 go test ./tools -run '^$' -bench Walkers -benchtime 5x
//
// Each reports fencefs-ns/op, ref-ns/op and ratio (fencefs / reference).

// benchTree writes a deterministic tree of n source-like files and returns
// its directory.
func benchTree(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"alpha", "beta", "gamma", "delta", "return", "value", "func", "if", "err", "nil", "ctx", "data"}
	exts := []string{".go", ".txt", ".md", ".go", ".py"}
	for i := range n {
		name := filepath.Join(dir, fmt.Sprintf("d%02d", i%40), fmt.Sprintf("s%d", i%7), fmt.Sprintf("file%05d%s", i, exts[i%len(exts)]))
		var sb strings.Builder
		for l := range 120 {
			switch {
			case l == 60 && i%20 == 0:
				sb.WriteString("func findNeedle(ctx context.Context) error {\n")
			case rng.IntN(400) == 0:
				sb.WriteString("\t// the needle is here\n")
			default:
				for w := range 6 + rng.IntN(6) {
					if w > 0 {
						sb.WriteByte(' ')
					}
					sb.WriteString(words[rng.IntN(len(words))])
				}
				sb.WriteByte('\n')
			}
		}
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

func benchFiles() int {
	if n, err := strconv.Atoi(os.Getenv("FENCEFS_BENCH_FILES")); err == nil && n > 0 {
		return n
	}
	return 2000
}

// benchPair times ours and ref alternately in one loop.
func benchPair(b *testing.B, ours func() int, ref func() int) {
	b.Helper()
	var tOurs, tRef time.Duration
	n := 0
	for b.Loop() {
		t0 := time.Now()
		a := ours()
		t1 := time.Now()
		r := ref()
		t2 := time.Now()
		tOurs += t1.Sub(t0)
		tRef += t2.Sub(t1)
		if a != r {
			b.Fatalf("result counts differ: fencefs %d, reference %d", a, r)
		}
		n++
	}
	b.ReportMetric(float64(tOurs.Nanoseconds())/float64(n), "fencefs-ns/op")
	b.ReportMetric(float64(tRef.Nanoseconds())/float64(n), "ref-ns/op")
	b.ReportMetric(float64(tOurs)/float64(tRef), "ratio")
}

// lineCount counts the result lines of a tool output or a command's
// output, leaving out notices and separators.
func lineCount(out string) int {
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" && l != "--" && !strings.HasPrefix(l, "[") && l != "No matches found." {
			n++
		}
	}
	return n
}

func run(b *testing.B, dir string, name string, args ...string) int {
	b.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil && cmd.ProcessState.ExitCode() != 1 {
		b.Fatalf("%s: %v", name, err)
	}
	return lineCount(string(out))
}

func BenchmarkWalkers(b *testing.B) {
	if _, err := exec.LookPath("rg"); err != nil {
		b.Skip("rg is not installed; nothing to compare with")
	}
	dir := benchTree(b, benchFiles())
	lb, err := local.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { lb.Close() })
	s, err := New(lb, Options{Tools: AllTools(), MaxSearchResults: 1 << 30, MaxFindResults: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	call := func(tool string, kv ...any) func() int {
		return func() int {
			m := map[string]any{}
			for i := 0; i+1 < len(kv); i += 2 {
				m[kv[i].(string)] = kv[i+1]
			}
			raw, _ := json.Marshal(m)
			out, err := s.Call(context.Background(), tool, raw)
			if err != nil {
				b.Fatal(err)
			}
			return lineCount(out)
		}
	}
	rgCmd := func(args ...string) func() int {
		return func() int { return run(b, dir, "rg", append([]string{"--no-config"}, args...)...) }
	}
	b.Run("search_files_literal_vs_rg", func(b *testing.B) {
		benchPair(b, call(nameSearchFiles, "pattern", "needle"), rgCmd("-n", "needle"))
	})
	b.Run("search_files_regex_vs_rg", func(b *testing.B) {
		benchPair(b, call(nameSearchFiles, "pattern", `func \w+Needle\(`), rgCmd("-n", `func \w+Needle\(`))
	})
	b.Run("search_files_noliteral_vs_rg", func(b *testing.B) {
		benchPair(b, call(nameSearchFiles, "pattern", `[Nn]e+dle`), rgCmd("-n", `[Nn]e+dle`))
	})
	b.Run("grep_vs_rg", func(b *testing.B) {
		benchPair(b, call(nameGrep, "pattern", "needle", "context", 1), rgCmd("--sort=path", "-n", "-C1", "needle"))
	})
	b.Run("list_files_vs_rg", func(b *testing.B) {
		benchPair(b, call(nameListFiles), rgCmd("--files", "--sort=path"))
	})
	b.Run("find_files_vs_gnu_find", func(b *testing.B) {
		if _, err := exec.LookPath("find"); err != nil {
			b.Skip("find is not installed")
		}
		benchPair(b, call(nameFindFiles, "pattern", "**/*.go"), func() int { return run(b, dir, "find", ".", "-name", "*.go") })
	})
}
