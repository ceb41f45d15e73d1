package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/mounted"
	"github.com/fencefs/fencefs/tools"
)

// The benchmarks time each fencefs tool and the program a user would run
// instead alternately, in the same loop, and report the medians and the
// median ratio (see pair). They are meant to be run once each:
//
//	go test ./bench -run '^$' -bench . -benchtime 1x
//
// scripts/bench.sh does that and prints the table. FENCEFS_BENCH_ROUNDS
// multiplies the number of rounds.

// Environment of the child processes whose peak memory is measured.
const (
	envChild    = "FENCEFS_BENCH_CHILD"     // what the child does
	envChildArg = "FENCEFS_BENCH_CHILD_ARG" // its argument
)

func TestMain(m *testing.M) {
	if what := os.Getenv(envChild); what != "" {
		err := runChild(what, os.Getenv(envChildArg))
		if err == nil {
			err = ReportPeakRSS(os.Stdout)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runChild is the body of a measured child process. It does one thing
// and nothing else, so its peak RSS is the cost of that thing.
func runChild(what, arg string) error {
	switch what {
	case "read-window":
		return childReadWindow(arg)
	}
	return fmt.Errorf("unknown child %q", what)
}

// rounds returns the number of alternating rounds of a benchmark.
func rounds(def int) int {
	if k, err := strconv.Atoi(os.Getenv("FENCEFS_BENCH_ROUNDS")); err == nil && k > 0 {
		return def * k
	}
	return def
}

// pair times ours and ref alternately, rounds times (the first of the two
// alternating too), each sample covering batch calls, after one untimed
// call of each whose result counts must agree. It reports the median time
// of one call of each and the median of the per-round ratios, which
// cancels most of the noise of a shared machine: both sides of a ratio
// ran under the same load. Many short rounds beat a few long ones.
func pair(b *testing.B, rounds, batch int, ours, ref func() int) {
	b.Helper()
	if a, r := ours(), ref(); a != r {
		b.Fatalf("result counts differ: fencefs %d, reference %d", a, r)
	}
	var tOurs, tRef, ratios []float64
	timeBatch := func(fn func() int) float64 {
		// Each side starts from a collected heap, so that neither pays
		// for the garbage of the other.
		runtime.GC()
		t0 := time.Now()
		for range batch {
			fn()
		}
		return float64(time.Since(t0).Nanoseconds()) / float64(batch)
	}
	for i := range rounds {
		var o, r float64
		if i%2 == 0 {
			o, r = timeBatch(ours), timeBatch(ref)
		} else {
			r, o = timeBatch(ref), timeBatch(ours)
		}
		tOurs, tRef, ratios = append(tOurs, o), append(tRef, r), append(ratios, o/r)
	}
	b.ReportMetric(Median(tOurs), MetricOurs)
	b.ReportMetric(Median(tRef), MetricRef)
	b.ReportMetric(Median(ratios), MetricRatio)
}

// command returns a function running name with args in dir and counting
// its output lines.
func command(b *testing.B, dir, name string, args ...string) func() int {
	b.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		b.Skipf("SKIPPED: %s is not installed, nothing to compare with", name)
	}
	return func() int {
		cmd := exec.Command(path, args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil && cmd.ProcessState.ExitCode() != 1 {
			b.Fatalf("%s %v: %v", name, args, err)
		}
		return CountLines(string(out))
	}
}

// toolSet returns tools over b with caps high enough never to cut a
// result, since the programs compared with have none.
func toolSet(b *testing.B, be backend.Backend, cwd string) *tools.Set {
	b.Helper()
	s, err := tools.New(be, tools.Options{Cwd: cwd, Tools: tools.AllTools(), MaxSearchResults: 1 << 30, MaxFindResults: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// call returns a function calling tool with args on s and counting its
// result lines.
func call(b *testing.B, s *tools.Set, tool string, args map[string]any) func() int {
	b.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		b.Fatal(err)
	}
	return func() int {
		out, err := s.Call(context.Background(), tool, raw)
		if err != nil {
			b.Fatalf("%s: %v", tool, err)
		}
		return CountLines(out)
	}
}

func localBackend(b *testing.B, dir string) *local.FS {
	b.Helper()
	lb, err := local.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { lb.Close() })
	return lb
}

func sourceTree(b *testing.B) string {
	b.Helper()
	dir, err := SourceTree(b.Context(), CacheDir())
	if err != nil {
		b.Fatal(err)
	}
	return dir
}

func wideTree(b *testing.B) string {
	b.Helper()
	dir, err := WideTree(b.Context(), CacheDir())
	if err != nil {
		b.Fatal(err)
	}
	return dir
}

func BenchmarkSearchLiteral(b *testing.B) {
	dir := sourceTree(b)
	rg := command(b, dir, "rg", "-n", LiteralPattern)
	s := toolSet(b, localBackend(b, dir), "")
	pair(b, rounds(11), 1, call(b, s, "search_files", map[string]any{"pattern": LiteralPattern}), rg)
}

func BenchmarkSearchRegex(b *testing.B) {
	dir := sourceTree(b)
	rg := command(b, dir, "rg", "-n", RegexPattern)
	s := toolSet(b, localBackend(b, dir), "")
	pair(b, rounds(11), 1, call(b, s, "search_files", map[string]any{"pattern": RegexPattern}), rg)
}

// BenchmarkGrep compares the grep tool with rg run with the flags the
// tool gives it: the difference is the tool's own cost (reading rg's
// output, checking every path and line through the backend).
func BenchmarkGrep(b *testing.B) {
	dir := sourceTree(b)
	rg := command(b, dir, "rg", grepFlags(LiteralPattern)...)
	s := toolSet(b, localBackend(b, dir), "")
	pair(b, rounds(11), 1, call(b, s, "grep", map[string]any{"pattern": LiteralPattern}), rg)
}

// grepFlags are the rg arguments the grep tool's search of pattern is
// compared with: the tool's own, less those that keep rg from its
// ignore files.
func grepFlags(pattern string) []string {
	return []string{"--no-config", "--sort=path", "--color=never", "--no-follow", "--no-ignore-parent",
		"--null", "--with-filename", "--line-number", "--no-heading", "--no-context-separator", "--binary",
		"--max-columns=2004", "--max-columns-preview", "--case-sensitive", "--regexp=" + pattern, "--", "."}
}

// BenchmarkGrepIgnored compares the grep tool with rg, flags as in
// BenchmarkGrep, in a tree whose .gitignore leaves out a big node_modules:
// rg skips it by its own reading of the .gitignore, which the tool does
// not let it do (it reads the ignore files through the backend instead).
func BenchmarkGrepIgnored(b *testing.B) {
	dir, err := IgnoredTree(b.Context(), CacheDir())
	if err != nil {
		b.Fatal(err)
	}
	rg := command(b, dir, "rg", grepFlags(LiteralPattern)...)
	s := toolSet(b, localBackend(b, dir), "")
	pair(b, rounds(21), 1, call(b, s, "grep", map[string]any{"pattern": LiteralPattern}), rg)
}

func BenchmarkFindFiles(b *testing.B) {
	dir := wideTree(b)
	find := command(b, dir, "find", ".", "-name", "*.go")
	s := toolSet(b, localBackend(b, dir), "")
	pair(b, rounds(21), 1, call(b, s, "find_files", map[string]any{"pattern": "**/*.go"}), find)
}

// smallFile writes a 4 KiB text file of short lines into dir and returns
// its name.
func smallFile(b *testing.B, dir string) string {
	b.Helper()
	var sb strings.Builder
	for i := 0; sb.Len() < 4096; i++ {
		fmt.Fprintf(&sb, "line %d: %s\n", i, strings.Join(words[i%40:i%40+5], " "))
	}
	data := sb.String()[:4096]
	if err := os.WriteFile(filepath.Join(dir, "small.txt"), []byte(data), 0o644); err != nil {
		b.Fatal(err)
	}
	return "small.txt"
}

// readFormat is what a program without fencefs does to show a file the
// way read_file does: open and read it (os.ReadFile: open, fstat for the
// size, one read), number the lines.
func readFormat(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	var sb strings.Builder
	sb.Grow(len(data) + len(data)/4 + 64)
	lines := bytes.Count(data, []byte{'\n'})
	if len(data) > 0 && data[len(data)-1] != '\n' {
		lines++
	}
	sb.WriteString("[" + filepath.Base(path) + " | " + strconv.Itoa(lines) + " lines]\n")
	var num []byte
	for i, n := 0, 1; i < len(data); n++ {
		e := bytes.IndexByte(data[i:], '\n')
		end := len(data)
		if e >= 0 {
			end = i + e + 1
		}
		num = strconv.AppendInt(num[:0], int64(n), 10)
		for range 6 - len(num) {
			sb.WriteByte(' ')
		}
		sb.Write(num)
		sb.WriteByte('\t')
		sb.Write(data[i:end])
		if data[end-1] != '\n' {
			sb.WriteByte('\n')
		}
		i = end
	}
	return CountLines(sb.String())
}

func BenchmarkReadFile(b *testing.B) {
	dir := b.TempDir()
	name := smallFile(b, dir)
	s := toolSet(b, localBackend(b, dir), "")
	pair(b, rounds(101), 100, call(b, s, "read_file", map[string]any{"path": name}), func() int {
		return readFormat(filepath.Join(dir, name))
	})
}

// childRSS runs this test binary as a child doing what, and returns its
// peak resident set in MiB.
func childRSS(b *testing.B, what, arg string) float64 {
	b.Helper()
	cmd := exec.CommandContext(b.Context(), os.Args[0])
	cmd.Env = append(os.Environ(), envChild+"="+what, envChildArg+"="+arg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("child %s: %v\n%s", what, err, stderr.String())
	}
	rss, ok := ParsePeakRSS(string(out))
	if !ok {
		b.Fatalf("child %s reported no peak RSS:\n%s", what, out)
	}
	return rss
}

// BenchmarkReadWindowRSS reads 50 lines of the 1 GiB file with read_file
// in a child process and reports the child's peak resident set.
func BenchmarkReadWindowRSS(b *testing.B) {
	dir, err := BigFile(b.Context(), CacheDir())
	if err != nil {
		b.Fatal(err)
	}
	var rss []float64
	for range rounds(1) {
		rss = append(rss, childRSS(b, "read-window", dir))
	}
	b.ReportMetric(slices.Max(rss), MetricRSS)
}

func childReadWindow(dir string) error {
	lb, err := local.New(dir)
	if err != nil {
		return err
	}
	defer lb.Close()
	s, err := tools.New(lb, tools.Options{})
	if err != nil {
		return err
	}
	out, err := s.Call(context.Background(), "read_file", json.RawMessage(`{"path":"`+BigFileName+`","limit":50}`))
	if err != nil {
		return err
	}
	if n := CountLines(out); n != 51 {
		return fmt.Errorf("read_file printed %d lines, want 50 lines and the hint:\n%s", n, out)
	}
	return nil
}

// BenchmarkMounted runs tools through a mounted namespace holding one
// local mount, against the same local backend used directly.
func BenchmarkMounted(b *testing.B) {
	src, wide := sourceTree(b), wideTree(b)
	small := b.TempDir()
	name := smallFile(b, small)
	cases := []struct {
		name   string
		dir    string
		tool   string
		args   map[string]any
		rounds int
		batch  int
	}{
		// A 5% goal needs more rounds than a 1.5x one to stand out of
		// the noise of a shared machine.
		{"search_files", src, "search_files", map[string]any{"pattern": LiteralPattern}, 21, 1},
		{"find_files", wide, "find_files", map[string]any{"pattern": "**/*.go"}, 31, 1},
		{"read_file", small, "read_file", map[string]any{"path": name}, 101, 100},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			lb := localBackend(b, c.dir)
			m, err := mounted.New(map[string]backend.Backend{"w": lb})
			if err != nil {
				b.Fatal(err)
			}
			direct := toolSet(b, lb, "")
			through := toolSet(b, m, "/w")
			pair(b, rounds(c.rounds), c.batch, call(b, through, c.tool, c.args), call(b, direct, c.tool, c.args))
		})
	}
}
