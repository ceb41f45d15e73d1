package rg

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

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
	got := search(t, r, SearchQuery{Query: Query{Dir: dir}, Pattern: "foo", Context: 1})
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
		"./a.txt|one|foo|two|text",
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

func TestUsageErrors(t *testing.T) {
	r := needRG(t)
	dir := tree(t, map[string]string{"a.txt": "x\n"})
	for _, q := range []SearchQuery{
		{Query: Query{Dir: dir}, Pattern: "("},
		{Query: Query{Dir: dir}, Pattern: "a\nb"},
		{Query: Query{Dir: dir, Type: "no-such-type"}, Pattern: "x"},
		{Query: Query{Dir: dir, Globs: []string{"a{"}}, Pattern: "x"},
	} {
		err := r.Search(context.Background(), q, func(File) bool { return true })
		var u *UsageError
		if !errors.As(err, &u) || u.Message == "" || strings.Contains(u.Message, dir) {
			t.Errorf("query %+v: err = %v, want a UsageError without the host path", q, err)
		}
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
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntouch "+marker+"\ncat \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
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
	if err := os.WriteFile(p, []byte("#!/bin/sh\nsleep 30 &\nwait\n"), 0o755); err != nil {
		t.Fatal(err)
	}
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

// FuzzParseJSON feeds arbitrary output to the JSON reader: it must never
// panic, and a path it reports comes from a begin message.
func FuzzParseJSON(f *testing.F) {
	f.Add([]byte(`{"type":"begin","data":{"path":{"text":"./a"}}}` + "\n" +
		`{"type":"match","data":{"path":{"text":"./a"},"lines":{"bytes":"/w=="},"line_number":1}}` + "\n" +
		`{"type":"end","data":{"path":{"text":"./a"},"binary_offset":null}}` + "\n"))
	f.Add([]byte(`{"type":"end","data":{"binary_offset":5}}`))
	f.Add([]byte("{\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = parseJSON(bufio.NewReader(bytes.NewReader(data)), 0, func(File) bool { return true })
	})
}

// BenchmarkParseJSON measures reading rg --json output of 500 files with
// one match each (about 335 KB, what the benchmark suite's literal
// search prints), to compare with the run of rg itself.
func BenchmarkParseJSON(b *testing.B) {
	var sb strings.Builder
	for i := range 500 {
		p := fmt.Sprintf("./src/load%d/config/v1/index_%05d.py", i%8, i)
		fmt.Fprintf(&sb, `{"type":"begin","data":{"path":{"text":%q}}}`+"\n", p)
		fmt.Fprintf(&sb, `{"type":"match","data":{"path":{"text":%q},"lines":{"text":"    path = parseManifest(file, 1121)\n"},"line_number":172,"absolute_offset":5774,"submatches":[{"match":{"text":"parseManifest"},"start":11,"end":24}]}}`+"\n", p)
		fmt.Fprintf(&sb, `{"type":"end","data":{"path":{"text":%q},"binary_offset":null,"stats":{"elapsed":{"secs":0,"nanos":15283,"human":"0.000015s"},"searches":1,"searches_with_match":1,"bytes_searched":16853,"bytes_printed":331,"matched_lines":1,"matches":1}}}`+"\n", p)
	}
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		n := 0
		if _, err := parseJSON(bufio.NewReader(bytes.NewReader(data)), 0, func(f File) bool { n += len(f.Lines); return true }); err != nil || n != 500 {
			b.Fatalf("parsed %d lines: %v", n, err)
		}
	}
}

// parseJSONReference is the straightforward reader the streaming one
// replaced: each line decoded whole with encoding/json. The streaming
// reader must agree with it on every output rg can print.
func parseJSONReference(out *bufio.Reader, maxCols int, fn func(File) bool) (bool, error) {
	type text struct {
		Text  *string `json:"text"`
		Bytes *string `json:"bytes"`
	}
	raw := func(t text) ([]byte, error) {
		switch {
		case t.Text != nil:
			return []byte(*t.Text), nil
		case t.Bytes != nil:
			return base64.StdEncoding.DecodeString(*t.Bytes)
		}
		return nil, nil
	}
	var cur File
	for {
		line, err := out.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var msg struct {
				Type string `json:"type"`
				Data struct {
					Path         text   `json:"path"`
					Lines        text   `json:"lines"`
					LineNumber   int    `json:"line_number"`
					BinaryOffset *int64 `json:"binary_offset"`
				} `json:"data"`
			}
			if jerr := json.Unmarshal(line, &msg); jerr != nil {
				return false, jerr
			}
			switch msg.Type {
			case "begin":
				p, perr := raw(msg.Data.Path)
				if perr != nil {
					return false, perr
				}
				cur = File{Path: string(p), BinaryOffset: -1}
			case "match", "context":
				t, terr := raw(msg.Data.Lines)
				if terr != nil {
					return false, terr
				}
				cur.Lines = append(cur.Lines, textsearch.Line{Number: msg.Data.LineNumber,
					Text: textsearch.Display(bytes.TrimSuffix(t, []byte{'\n'}), maxCols), Match: msg.Type == "match"})
			case "end":
				if msg.Data.BinaryOffset != nil {
					cur.BinaryOffset = *msg.Data.BinaryOffset
				}
				if !fn(cur) {
					return false, nil
				}
				cur = File{}
			}
		}
		if err == io.EOF {
			return true, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// rgText renders data as rg does: text when it is valid UTF-8, base64
// bytes otherwise.
func rgText(data []byte) map[string]string {
	if utf8.Valid(data) {
		return map[string]string{"text": string(data)}
	}
	return map[string]string{"bytes": base64.StdEncoding.EncodeToString(data)}
}

// rgOutput renders one file's search as rg --json prints it, with a
// submatch for every byte of the line that equals sub.
func rgOutput(t testing.TB, path, line []byte, number uint32, binary int64, sub byte) []byte {
	t.Helper()
	var subs []map[string]any
	for i, c := range line {
		if c == sub && len(subs) < 1000 {
			subs = append(subs, map[string]any{"match": rgText([]byte{c}), "start": i, "end": i + 1})
		}
	}
	var bo any
	if binary >= 0 {
		bo = binary
	}
	msgs := []any{
		map[string]any{"type": "begin", "data": map[string]any{"path": rgText(path)}},
		map[string]any{"type": "context", "data": map[string]any{"path": rgText(path), "lines": rgText(append(line, '\n')),
			"line_number": number, "absolute_offset": 0, "submatches": []any{}}},
		map[string]any{"type": "match", "data": map[string]any{"path": rgText(path), "lines": rgText(line),
			"line_number": number + 1, "absolute_offset": 12, "submatches": subs}},
		map[string]any{"type": "end", "data": map[string]any{"path": rgText(path), "binary_offset": bo,
			"stats": map[string]any{"elapsed": map[string]any{"secs": 0, "nanos": 1, "human": "0s"}, "searches": 1}}},
		map[string]any{"data": map[string]any{"elapsed_total": map[string]any{"human": "0s"}, "stats": map[string]any{"matches": 1}}, "type": "summary"},
	}
	var out []byte
	for _, m := range msgs {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(append(out, b...), '\n')
	}
	return out
}

func collectFiles(t testing.TB, parse func(*bufio.Reader, int, func(File) bool) (bool, error), data []byte, maxCols int) ([]File, error) {
	t.Helper()
	var files []File
	_, err := parse(bufio.NewReaderSize(bytes.NewReader(data), 16), maxCols, func(f File) bool {
		files = append(files, f)
		return true
	})
	return files, err
}

// FuzzParseJSONAgrees checks the streaming reader against the reference
// on rg-shaped output of any path and line, with any display width.
func FuzzParseJSONAgrees(f *testing.F) {
	f.Add([]byte("./a b/c\"d\\e"), []byte("needle \x00 \xff\\\"\u2028 \U0001F600"), uint32(7), int64(-1), byte('e'), int8(0))
	f.Add([]byte("./x"), bytes.Repeat([]byte("a"), 3000), uint32(1), int64(9000), byte('a'), int8(10))
	f.Add([]byte("./\xff"), []byte("\\\\\\\""), uint32(1<<31), int64(0), byte('\\'), int8(-1))
	f.Fuzz(func(t *testing.T, path, line []byte, number uint32, binary int64, sub byte, cols int8) {
		line = bytes.ReplaceAll(line, []byte{'\n'}, nil)
		data := rgOutput(t, path, line, number, binary, sub)
		want, werr := collectFiles(t, parseJSONReference, data, int(cols))
		got, gerr := collectFiles(t, parseJSON, data, int(cols))
		if werr != nil || gerr != nil {
			t.Fatalf("errors: reference %v, streaming %v", werr, gerr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("streaming reader:\n%+v\nreference:\n%+v", got, want)
		}
	})
}

// TestParseJSONBoundedMemory feeds the reader a match of a 20 MB line
// with a submatch for every byte, as rg prints it for "a" on a line of
// "a", and checks that it keeps only what can be displayed.
func TestParseJSONBoundedMemory(t *testing.T) {
	const n = 20 << 20
	var sb strings.Builder
	sb.WriteString(`{"type":"begin","data":{"path":{"text":"./long.txt"}}}` + "\n")
	sb.WriteString(`{"type":"match","data":{"path":{"text":"./long.txt"},"lines":{"text":"`)
	sb.WriteString(strings.Repeat("a", n))
	sb.WriteString(`\n"},"line_number":1,"absolute_offset":0,"submatches":[`)
	for i := range n / 64 { // a sample: the full list would be gigabytes
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"match":{"text":"a"},"start":%d,"end":%d}`, i, i+1)
	}
	sb.WriteString("]}}\n" + `{"type":"end","data":{"path":{"text":"./long.txt"},"binary_offset":null,"stats":{}}}` + "\n")
	data := sb.String()

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var got []File
	ok, err := parseJSON(bufio.NewReader(strings.NewReader(data)), 0, func(f File) bool { got = append(got, f); return true })
	runtime.ReadMemStats(&after)
	if !ok || err != nil || len(got) != 1 || len(got[0].Lines) != 1 {
		t.Fatalf("parse: %v %v %+v", ok, err, got)
	}
	if want := strings.Repeat("a", textsearch.DefaultMaxColumns) + textsearch.LongLineMarker; got[0].Lines[0].Text != want {
		t.Errorf("line = %.60q..., want the display cut", got[0].Lines[0].Text)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("reading %d MB of output allocated %d KiB, want it bounded", len(data)>>20, alloc>>10)
	}
}
