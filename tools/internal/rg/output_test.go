package rg

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fencefs/fencefs/tools/internal/textsearch"
)

// parseAll is parseOutput without limits.
func parseAll(out *bufio.Reader, maxCols int, fn func(File) bool) (bool, error) {
	complete, _, err := parseOutput(out, maxCols, limits{}, fn)
	return complete, err
}

// collect parses data with a read buffer of size bytes.
func collect(data []byte, maxCols, size int) ([]File, error) {
	var files []File
	_, err := parseAll(bufio.NewReaderSize(bytes.NewReader(data), size), maxCols, func(f File) bool {
		files = append(files, f)
		return true
	})
	return files, err
}

// rgFile is one file's part of rg's output.
type rgFile struct {
	path   string
	lines  []textsearch.Line // Text is the raw line
	binary int64             // -1 for no notice
}

// render prints files as rg does with the runner's options.
func render(files ...rgFile) []byte {
	var b bytes.Buffer
	for _, f := range files {
		for _, l := range f.lines {
			sep := "-"
			if l.Match {
				sep = ":"
			}
			fmt.Fprintf(&b, "%s\x00%d%s%s\n", f.path, l.Number, sep, l.Text)
		}
		if f.binary >= 0 {
			fmt.Fprintf(&b, "%s: binary file matches (found \"\\0\" byte around offset %d)\n", f.path, f.binary)
		}
	}
	return b.Bytes()
}

func TestParseOutput(t *testing.T) {
	data := render(
		rgFile{"./a.txt", []textsearch.Line{{Number: 1, Text: "one"}, {Number: 2, Text: "foo\r", Match: true}}, -1},
		rgFile{"./new\nline.txt", []textsearch.Line{{Number: 7, Text: "foo \x00 \xff", Match: true}}, -1},
		rgFile{"./late.bin", []textsearch.Line{{Number: 3, Text: "foo", Match: true}}, 9000},
		rgFile{"./early\n.bin", nil, 3},
		rgFile{"./z.txt", []textsearch.Line{{Number: 10, Text: "foo:bar-1:x", Match: true}}, -1},
	)
	data = append(data, "./warned.bin: WARNING: stopped searching binary file after match (found \"\\0\" byte around offset 12)\n"...)
	want := []File{
		{Path: "./a.txt", Lines: []textsearch.Line{{Number: 1, Text: "one"}, {Number: 2, Text: "foo\r", Match: true}}, BinaryOffset: -1},
		{Path: "./new\nline.txt", Lines: []textsearch.Line{{Number: 7, Text: textsearch.Display([]byte("foo \x00 \xff"), 0), Match: true}}, BinaryOffset: -1},
		{Path: "./late.bin", Lines: []textsearch.Line{{Number: 3, Text: "foo", Match: true}}, BinaryOffset: 9000},
		{Path: "./early\n.bin", BinaryOffset: 3},
		{Path: "./z.txt", Lines: []textsearch.Line{{Number: 10, Text: "foo:bar-1:x", Match: true}}, BinaryOffset: -1},
		{Path: "./warned.bin", BinaryOffset: 12},
	}
	for _, size := range []int{16, 64 << 10} {
		got, err := collect(data, 0, size)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("buffer %d: %v\n%+v\nwant\n%+v", size, err, got, want)
		}
	}
}

func TestParseOutputMalformed(t *testing.T) {
	for _, data := range []string{
		"./a\x00x:y\n", // no line number
		"./a\x001?y\n", // no separator
		"./a\x001:y",   // cut short
		"./a\n",        // a path that never ends
		"./a\x001234567890123456789:y\n",
		strings.Repeat("x", maxPathBytes+1) + "\x001:y\n",
	} {
		if _, err := collect([]byte(data), 0, 16); err == nil {
			t.Errorf("%q: no error", data)
		}
	}
}

// FuzzParseOutput feeds arbitrary output to the reader: it must never
// panic, and every path it reports appears in the output.
func FuzzParseOutput(f *testing.F) {
	f.Add(render(rgFile{"./a", []textsearch.Line{{Number: 1, Text: "x", Match: true}}, 5}), 16)
	f.Add([]byte("./a: binary file matches (found \"\\0\" byte around offset 99999999999999999999)\n"), 64)
	f.Add([]byte("./a\n./b\x001-\n"), 17)
	f.Fuzz(func(t *testing.T, data []byte, size int) {
		files, _ := collect(data, 0, 16+size&0xffff)
		for _, fl := range files {
			if !bytes.Contains(data, []byte(fl.Path)) {
				t.Fatalf("path %q is not in the output", fl.Path)
			}
		}
	})
}

// FuzzParseOutputRoundTrip renders a file with any name and line as rg
// prints it, between two ordinary files, and reads it back.
func FuzzParseOutputRoundTrip(f *testing.F) {
	f.Add("dir/name\nwith break", []byte("needle \x00 \xff\\\" \u2028 \U0001F600"), uint32(7), int64(-1), int8(0), uint16(16))
	f.Add("x", bytes.Repeat([]byte("a"), 3000), uint32(1), int64(9000), int8(10), uint16(100))
	f.Add("a: binary", []byte("é"), uint32(1<<31), int64(0), int8(-1), uint16(0))
	f.Fuzz(func(t *testing.T, name string, line []byte, number uint32, binary int64, cols int8, size uint16) {
		path := "./" + name
		if strings.IndexByte(path, 0) >= 0 || len(path) > maxPathBytes || path == "./!" {
			t.Skip("not a path, or the first file's")
		}
		for i := range len(path) {
			if path[i] == '\n' {
				if _, _, ok := notice([]byte(path[:i])); ok {
					t.Skip("a name built to end like a notice")
				}
			}
		}
		line = bytes.ReplaceAll(line, []byte{'\n'}, nil)
		if binary < -1 {
			binary = -1
		}
		n := int(number%1e9) + 1
		mid := rgFile{path, []textsearch.Line{{Number: n, Text: string(line)}, {Number: n + 1, Text: string(line), Match: true}}, binary}
		first := rgFile{"./!", []textsearch.Line{{Number: 1, Text: "a", Match: true}}, -1}
		last := rgFile{path + "~", []textsearch.Line{{Number: 2, Text: "b", Match: true}}, -1}
		got, err := collect(render(first, mid, last), int(cols), 16+int(size))
		if err != nil {
			t.Fatal(err)
		}
		shown := textsearch.Display(line, int(cols))
		want := []File{
			{Path: first.path, Lines: first.lines, BinaryOffset: -1},
			{Path: path, Lines: []textsearch.Line{{Number: n, Text: shown}, {Number: n + 1, Text: shown, Match: true}}, BinaryOffset: binary},
			{Path: last.path, Lines: last.lines, BinaryOffset: -1},
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("read\n%+v\nwant\n%+v", got, want)
		}
	})
}

// TestParseOutputBoundedMemory feeds the reader a 20 MB line, as rg would
// print it without --max-columns, and checks that it keeps only what can
// be displayed.
func TestParseOutputBoundedMemory(t *testing.T) {
	data := render(rgFile{"./long.txt", []textsearch.Line{{Number: 1, Text: strings.Repeat("a", 20<<20), Match: true}}, -1})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got, err := collect(data, 0, 64<<10)
	runtime.ReadMemStats(&after)
	if err != nil || len(got) != 1 || len(got[0].Lines) != 1 {
		t.Fatalf("parse: %v %+v", err, got)
	}
	if want := strings.Repeat("a", textsearch.DefaultMaxColumns) + textsearch.LongLineMarker; got[0].Lines[0].Text != want {
		t.Errorf("line = %.60q..., want the display cut", got[0].Lines[0].Text)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("reading %d MB of output allocated %d KiB, want it bounded", len(data)>>20, alloc>>10)
	}
}

// BenchmarkParseOutput measures reading rg's output for 500 files with
// one match each, what the benchmark suite's literal search prints.
func BenchmarkParseOutput(b *testing.B) {
	var files []rgFile
	for i := range 500 {
		p := fmt.Sprintf("./src/load%d/config/v1/index_%05d.py", i%8, i)
		files = append(files, rgFile{p, []textsearch.Line{{Number: 172, Text: "    path = parseManifest(file, 1121)", Match: true}}, -1})
	}
	data := render(files...)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		n := 0
		if _, err := parseAll(bufio.NewReader(bytes.NewReader(data)), 0, func(f File) bool { n += len(f.Lines); return true }); err != nil || n != 500 {
			b.Fatalf("parsed %d lines: %v", n, err)
		}
	}
}

// TestSearchLongLines runs rg on lines far longer than can be shown,
// matching at every character: rg cuts them itself, so the search ends
// at once, and shows the first characters of each, whatever their width.
func TestSearchLongLines(t *testing.T) {
	r := needRG(t)
	dir := tree(t, map[string]string{
		"a.txt": strings.Repeat("a", 20<<20) + "\nfoo a\n",
		"b.txt": strings.Repeat("é", 5000) + "a\n" + strings.Repeat("😀", 3000) + "a\n" + strings.Repeat("\xff", 9000) + "a\n",
		"c.txt": "a\n",
	})
	start := time.Now()
	got := search(t, r, SearchQuery{Query: Query{Dir: dir}, Pattern: "a"})
	t.Logf("searched in %v", time.Since(start))
	cut := func(s string) string { return textsearch.Display([]byte(s), 0) }
	want := []File{
		{Path: "./a.txt", Lines: []textsearch.Line{{Number: 1, Text: cut(strings.Repeat("a", 20<<20)), Match: true}, {Number: 2, Text: "foo a", Match: true}}, BinaryOffset: -1},
		{Path: "./b.txt", Lines: []textsearch.Line{
			{Number: 1, Text: cut(strings.Repeat("é", 5000)), Match: true},
			{Number: 2, Text: cut(strings.Repeat("😀", 3000)), Match: true},
			{Number: 3, Text: cut(strings.Repeat("\xff", 9000)), Match: true},
		}, BinaryOffset: -1},
		{Path: "./c.txt", Lines: []textsearch.Line{{Number: 1, Text: "a", Match: true}}, BinaryOffset: -1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%.300v\nwant\n%.300v", got, want)
	}
}

// TestSearchNamesWithLineBreaks searches files whose names hold line
// breaks, one of them binary.
func TestSearchNamesWithLineBreaks(t *testing.T) {
	r := needRG(t)
	dir := tree(t, map[string]string{"z.txt": "foo\n"})
	for name, content := range map[string]string{
		"a\nb.txt":     "foo\n",
		"bin\nary.dat": "foo\x00",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Skipf("the file system refuses the name %q", name)
		}
	}
	var got []string
	for _, f := range search(t, r, SearchQuery{Query: Query{Dir: dir}, Pattern: "foo"}) {
		got = append(got, fmt.Sprintf("%q %d %d", f.Path, len(f.Lines), f.BinaryOffset))
	}
	want := []string{`"./a\nb.txt" 1 -1`, `"./bin\nary.dat" 0 3`, `"./z.txt" 1 -1`}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// TestSearchStopsReadingEarly checks that a search stopped by fn ends
// rg at once, even inside a huge report.
func TestSearchStopsReadingEarly(t *testing.T) {
	r := needRG(t)
	dir := tree(t, map[string]string{"a.txt": strings.Repeat("a\n", 5<<20)})
	n := 0
	err := r.Search(context.Background(), SearchQuery{Query: Query{Dir: dir}, Pattern: "a", MaxLines: 100}, func(f File) bool {
		n = len(f.Lines)
		return false
	})
	if err != nil || n != 100 {
		t.Fatalf("lines %d, err %v", n, err)
	}
}
