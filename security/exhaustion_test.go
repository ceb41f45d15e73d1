package security

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/aferoadapter"
	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/tools"
)

// Sizes of the exhaustion fixtures.
const (
	hugeBinSize  = 8 << 30  // sparse, all zeros: binary
	hugeTextSize = 1 << 30  // sparse: text lines, then zeros past byte 8192
	longLineSize = 50 << 20 // one line
	manyLines    = 3 << 20  // short lines, every one matching
	// defaultManyEntries is the size of the big directory; see
	// manyEntries.
	defaultManyEntries = 200_000
)

// manyEntries returns the number of entries of TestManyEntries' big
// directory: FENCEFS_MANY_ENTRIES when set, else 200,000. scripts/test.sh
// runs the test again with a million, without the race detector: then it
// takes about 40 s here (12 s to create the entries, 0.7 to 8 s per
// walker), and with -race search_files alone takes 16 s of its 30.
func manyEntries(t *testing.T) int {
	v := os.Getenv("FENCEFS_MANY_ENTRIES")
	if v == "" {
		return defaultManyEntries
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("FENCEFS_MANY_ENTRIES=%q: want a positive number", v)
	}
	return n
}

// measured is one call's answer and the bytes the process allocated
// while it ran.
type measured struct {
	out   string
	err   error
	alloc uint64
}

// measure runs a bounded call (see boundedCall) and reports what it
// allocated. Tests that use it do not run in parallel, so the count is
// the call's own.
func measure(t *testing.T, s *tools.Set, tool string, args any, deadline time.Duration) measured {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out, err := boundedCall(t, s, tool, args, deadline, func() {})
	runtime.ReadMemStats(&after)
	return measured{out: out, err: err, alloc: after.TotalAlloc - before.TotalAlloc}
}

// answered fails unless m is a result, a refusal or the deadline's error.
func (m measured) answered(t *testing.T, label string) {
	t.Helper()
	if m.err != nil && !tools.IsRetry(m.err) && !errors.Is(m.err, context.DeadlineExceeded) {
		t.Errorf("%s: %v; want an answer, a refusal or the deadline", label, m.err)
	}
}

// hugeCase is one call on a huge file and its bounds.
type hugeCase struct {
	file, tool string
	// maxAlloc bounds the bytes allocated by the call.
	maxAlloc uint64
	// answer: the call must answer by its deadline, not end with the
	// deadline's error.
	answer bool
}

// hugeCases are the calls on huge files and their bounds.
var hugeCases = []hugeCase{
	{"huge.bin", readFile, 64 << 20, true},
	{"huge.bin", fileInfo, 64 << 20, true},
	{"huge.bin", writeFile, 64 << 20, false},
	{"huge.bin", searchFiles, 64 << 20, true},
	{"huge.bin", grepTool, 64 << 20, true},
	{"huge.bin", listFiles, 64 << 20, true},
	{"huge.txt", readFile, 64 << 20, false},
	{"huge.txt", fileInfo, 64 << 20, false},
	{"huge.txt", writeFile, 64 << 20, false},
	{"huge.txt", listFiles, 64 << 20, true},
	// The built-in engine holds at most textsearch.MaxLineBytes of the
	// 1 GiB line and drops the rest as it reads it.
	{"huge.txt", searchFiles, 64 << 20, false},
	{"huge.txt", grepTool, 64 << 20, false},
	// edit_file refuses the binary file from its first bytes and the
	// text file from its size, both at once, neither loaded.
	{"huge.bin", editFile, 64 << 20, true},
	{"huge.txt", editFile, 64 << 20, true},
	{"long.txt", readFile, 64 << 20, true},
	{"long.txt", fileInfo, 64 << 20, true},
	{"long.txt", writeFile, 64 << 20, true},
	{"long.txt", searchFiles, 256 << 20, true},
	// ripgrep cuts the line to what can be shown (--max-columns), and
	// the line's check reads it through a fixed buffer.
	{"long.txt", grepTool, 64 << 20, true},
	// Millions of matching lines: both engines stop at the result cap.
	{"lines.txt", grepTool, 64 << 20, true},
	{"lines.txt", searchFiles, 64 << 20, true},
	// An edit holds the whole file, a few times over.
	{"long.txt", editFile, 8 * longLineSize, true},
}

// TestHugeFiles gives the tools a sparse 8 GiB binary file, a sparse
// 1 GiB text file (whose zeros past byte 8192 make one 1 GiB line), a
// 50 MB line and 3 million matching lines: every call answers by its deadline or ends with it, with
// bounded memory, and a read with MaxReadChars stays within it.
func TestHugeFiles(t *testing.T) {
	runHugeCases(t, hugeCases)
}

// runHugeCases builds the huge files and runs cases on them.
func runHugeCases(t *testing.T, cases []hugeCase) {
	t.Helper()
	dir := t.TempDir()
	sparse(t, filepath.Join(dir, "huge.bin"), "", hugeBinSize)
	sparse(t, filepath.Join(dir, "huge.txt"), strings.Repeat("line of text\n", 1000), hugeTextSize)
	long := strings.Repeat("a", longLineSize) + "\nend\n"
	if err := os.WriteFile(filepath.Join(dir, "long.txt"), []byte(long), 0o644); err != nil {
		t.Fatal(err)
	}
	lines := strings.Repeat("line of text\n", manyLines)
	if err := os.WriteFile(filepath.Join(dir, "lines.txt"), []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	const maxChars = 100_000
	s, err := tools.New(openLocal(t, dir), tools.Options{Tools: tools.AllTools(), MaxReadChars: maxChars})
	if err != nil {
		t.Fatal(err)
	}
	// A call that must answer gets the deadline scaled for the race
	// detector; one allowed to end by its deadline keeps it short.
	const deadline = 3 * time.Second
	before := statDir(t, dir)
	for _, c := range cases {
		args := pathArgs(c.tool, c.file)
		switch c.tool {
		case readFile:
			args["limit"] = 10
		case writeFile:
			// A stale hash makes the write hash the current file and
			// refuse, so the huge file stays.
			args["expected_hash"] = strings.Repeat("0", 12)
		case searchFiles, grepTool:
			args["pattern"] = "line|a"
		case editFile:
			args["old_text"] = "no such text"
		}
		d := deadline
		if c.answer {
			d *= slowdown
		}
		m := measure(t, s, c.tool, args, d)
		label := fmt.Sprintf("%s %s", c.tool, c.file)
		t.Logf("%s: %d MiB allocated, %d bytes out, err %v", label, m.alloc>>20, len(m.out), m.err)
		m.answered(t, label)
		if c.answer && m.err != nil && !tools.IsRetry(m.err) {
			t.Errorf("%s: %v; want an answer by the deadline", label, m.err)
		}
		if m.alloc > c.maxAlloc {
			t.Errorf("%s: allocated %d MiB; want at most %d MiB", label, m.alloc>>20, c.maxAlloc>>20)
		}
		if c.tool == readFile && len([]rune(m.out)) > maxChars {
			t.Errorf("%s: %d characters; MaxReadChars is %d", label, len([]rune(m.out)), maxChars)
		}
		if len(m.out) > 1<<20 {
			t.Errorf("%s: %d bytes of output", label, len(m.out))
		}
	}
	if d := before.diff(statDir(t, dir)); len(d) > 0 {
		t.Errorf("changed: %q", d)
	}
}

// statDir describes the files of dir by size and modification time (the
// huge files are too big to hash twice per test).
func statDir(t *testing.T, dir string) snapshot {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := snapshot{}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = fmt.Sprintf("%v %d %d", info.Mode(), info.Size(), info.ModTime().UnixNano())
	}
	return out
}

// sparse creates the file p holding head and then a hole up to size.
func sparse(t *testing.T, p, head string, size int64) {
	t.Helper()
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(head); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
}

// TestManyEntries lists, walks and searches a directory of manyEntries
// files on tmpfs: every walker answers by its deadline, within its cap,
// saying that it truncated.
func TestManyEntries(t *testing.T) {
	base := "/dev/shm"
	if _, err := os.Stat(base); err != nil {
		base = ""
	}
	dir, err := os.MkdirTemp(base, "fencefs-many-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	big := filepath.Join(dir, "big")
	if err := os.Mkdir(big, 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	entries := manyEntries(t)
	for i := range entries {
		f, err := os.OpenFile(filepath.Join(big, fmt.Sprintf("f%07d.txt", i)), os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	t.Logf("created %d entries in %v", entries, time.Since(start))
	const limit = 100
	s, err := tools.New(openLocal(t, dir), tools.Options{Tools: tools.AllTools(),
		MaxListResults: limit, MaxSearchResults: limit, MaxFindResults: limit})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range walkers {
		args := pathArgs(tool, "big")
		if tool == findFiles {
			args["pattern"] = "**/*.txt"
		}
		start := time.Now()
		m := measure(t, s, tool, args, callTimeout)
		label := tool + " big"
		t.Logf("%s: %v, %d MiB allocated, %d bytes out", label, time.Since(start).Round(time.Millisecond), m.alloc>>20, len(m.out))
		if m.err != nil {
			t.Errorf("%s: %v", label, m.err)
			continue
		}
		lines := strings.Count(m.out, "\n") + 1
		if lines > limit+1 {
			t.Errorf("%s: %d lines; the cap is %d", label, lines, limit)
		}
		if tool != searchFiles && tool != grepTool && !strings.Contains(m.out, fmt.Sprintf("truncated at %d", limit)) {
			t.Errorf("%s: no truncation notice:\n%s", label, clip(m.out))
		}
	}
}

// TestLongLineRegexDeadline matches a pattern whose cost grows with the
// line's length times its own size ([a-z]{1,200}[0-9]: about 50 s for Go's
// regexp package on 16 MiB of "a") against the longest line the built-in
// engine holds: search_files, and grep by the built-in engine on storage
// that is not a host directory, end at a 3 s deadline instead of running
// the line to its end; grep by ripgrep answers.
func TestLongLineRegexDeadline(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "long.txt"), []byte(strings.Repeat("a", 16<<20)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"pattern": "[a-z]{1,200}[0-9]", "path": "long.txt"}
	for _, c := range []struct {
		name string
		b    backend.Backend
		tool string
	}{
		{"local", openLocal(t, dir), searchFiles},
		{"local", openLocal(t, dir), grepTool},
		{"afero", aferoadapter.New(afero.NewBasePathFs(afero.NewOsFs(), dir)), grepTool},
	} {
		s, err := tools.New(c.b, tools.Options{Tools: tools.AllTools()})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		m := measure(t, s, c.tool, args, 3*time.Second)
		label := c.tool + " on " + c.name
		t.Logf("%s: %v, %d MiB allocated, %d bytes out, err %v", label, time.Since(start).Round(time.Millisecond), m.alloc>>20, len(m.out), m.err)
		m.answered(t, label)
	}
}

// TestBlowUpPatterns sends regular expressions and globs built to blow up
// compile or match time or memory: each is refused with a retryable error
// or answered by its deadline.
func TestBlowUpPatterns(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("a", 200)
	deep := filepath.Join(dir, filepath.FromSlash(strings.Repeat("d/", 30)))
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(dir, long), filepath.Join(deep, long), filepath.Join(dir, "lines.txt")} {
		if err := os.WriteFile(p, []byte(strings.Repeat(long+"\n", 1000)+strings.Repeat("a", 1<<20)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := tools.New(openLocal(t, dir), tools.Options{Tools: tools.AllTools()})
	if err != nil {
		t.Fatal(err)
	}
	starA := strings.Repeat("*a", 40) + "*b"
	spans := strings.Repeat("**/", 25) + "x"
	braces := strings.Repeat("{a,b}", 30)
	alternation := strings.Repeat("a0|", 20_000) + "b"
	for _, c := range []struct {
		tool string
		args map[string]any
		// refused: the call must be a refusal (a pattern too large to
		// compile), not an answer.
		refused bool
	}{
		{searchFiles, map[string]any{"pattern": "((a{1000}){1000}){1000}"}, true},
		{grepTool, map[string]any{"pattern": "((a{1000}){1000}){1000}"}, false},
		{searchFiles, map[string]any{"pattern": "(a*)*(a|aa)*b"}, false},
		{grepTool, map[string]any{"pattern": "(a*)*(a|aa)*b"}, false},
		{searchFiles, map[string]any{"pattern": "(a|a?)+$x"}, false},
		{grepTool, map[string]any{"pattern": "(x+x+)+y"}, false},
		{searchFiles, map[string]any{"pattern": alternation}, false},
		{grepTool, map[string]any{"pattern": alternation}, false},
		{searchFiles, map[string]any{"pattern": "a", "include_glob": starA}, false},
		{searchFiles, map[string]any{"pattern": "a", "include_glob": spans}, false},
		{searchFiles, map[string]any{"pattern": "a", "include_glob": braces}, false},
		{findFiles, map[string]any{"pattern": starA}, false},
		{findFiles, map[string]any{"pattern": "**/" + starA}, false},
		{findFiles, map[string]any{"pattern": spans}, false},
		{findFiles, map[string]any{"pattern": braces}, false},
		{findFiles, map[string]any{"pattern": strings.Repeat("[a-z]", 200)}, false},
		{listFiles, map[string]any{"glob": starA}, false},
		{listFiles, map[string]any{"glob": spans}, false},
		{listFiles, map[string]any{"glob": braces}, false},
		{grepTool, map[string]any{"pattern": "a", "glob": starA}, false},
		{grepTool, map[string]any{"pattern": "a", "glob": braces}, false},
	} {
		m := measure(t, s, c.tool, c.args, callTimeout)
		raw, _ := json.Marshal(c.args)
		label := c.tool + " " + clip(string(raw))
		t.Logf("%s: %d MiB allocated, %d bytes out, err %.200v", label, m.alloc>>20, len(m.out), fmt.Sprint(m.err))
		switch {
		case m.err != nil && !tools.IsRetry(m.err) && !pendingFatal(kindLocal, c.tool, m.err):
			t.Errorf("%s: %v; want an answer or a refusal", label, m.err)
		case c.refused && m.err == nil:
			t.Errorf("%s: answered; want a refusal", label)
		}
		if len(m.out) > 1<<20 {
			t.Errorf("%s: %d bytes of output", label, len(m.out))
		}
	}
}

// TestOversizedArguments sends a 100 MB content, arguments of 1 MB (old
// and new text, paths, patterns, globs) and deeply nested JSON: each call writes what it was
// asked inside the root, or refuses with a retryable error.
func TestOversizedArguments(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := tools.New(openLocal(t, dir), tools.Options{Tools: tools.AllTools()})
	if err != nil {
		t.Fatal(err)
	}
	// 100 MB for the content written; 1 MB elsewhere, well past the
	// 128 KiB a single command-line argument may hold.
	const size = 100 << 20
	big := strings.Repeat("x", size)
	mb := strings.Repeat("x", 1<<20)
	nested := strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)
	for _, c := range []struct {
		tool string
		args string
		ok   bool // the call must succeed
	}{
		{writeFile, fmt.Sprintf(`{"path":"big.txt","content":%q}`, big), true},
		{editFile, fmt.Sprintf(`{"path":"a.txt","old_text":%q,"new_text":"y"}`, mb), false},
		{editFile, fmt.Sprintf(`{"path":"a.txt","old_text":"hello","new_text":%q}`, mb), true},
		{readFile, fmt.Sprintf(`{"path":%q}`, mb), false},
		{writeFile, fmt.Sprintf(`{"path":%q,"content":"x"}`, mb), false},
		{searchFiles, fmt.Sprintf(`{"pattern":%q}`, mb), false},
		{searchFiles, fmt.Sprintf(`{"pattern":"x","include_glob":%q}`, mb), false},
		{grepTool, fmt.Sprintf(`{"pattern":%q}`, mb), false},
		{grepTool, fmt.Sprintf(`{"pattern":"x","glob":%q}`, mb), false},
		{findFiles, fmt.Sprintf(`{"pattern":%q}`, mb), false},
		{listFiles, fmt.Sprintf(`{"glob":%q}`, mb), false},
		{readFile, `{"path":` + nested + `}`, false},
		{writeFile, `{"path":"n.txt","content":"x","extra":` + nested + `}`, false},
		{editFile, `{"path":"a.txt","replacements":` + nested + `}`, false},
	} {
		ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
		out, err := s.Call(ctx, c.tool, json.RawMessage(c.args))
		cancel()
		label := c.tool + " " + clip(c.args)
		switch {
		case err != nil && !tools.IsRetry(err) && !pendingFatal(kindLocal, c.tool, err):
			t.Errorf("%s: %v; want an answer or a refusal", label, err)
		case c.ok && err != nil:
			t.Errorf("%s: %v; want success", label, err)
		case !c.ok && c.tool != searchFiles && c.tool != grepTool && c.tool != findFiles && c.tool != listFiles && err == nil:
			t.Errorf("%s: succeeded with %q; want a refusal", label, clip(out))
		}
		if len(out) > 1<<20 {
			t.Errorf("%s: %d bytes of output", label, len(out))
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "big.txt")); err != nil || fi.Size() != size {
		t.Errorf("big.txt: %v, want %d bytes", err, size)
	}
}
