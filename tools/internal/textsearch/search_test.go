package textsearch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// collect runs m over text and returns the printed form of its lines.
func collect(t *testing.T, m *Matcher, text string) string {
	t.Helper()
	p := NewPrinter(0, m.Context() > 0)
	err := m.Search(context.Background(), strings.NewReader(text), func(l Line) error {
		p.AddLine("f", l)
		return nil
	})
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	return p.String()
}

func mustCompile(t *testing.T, pattern string, o Options) *Matcher {
	t.Helper()
	m, err := Compile(pattern, o)
	if err != nil {
		t.Fatalf("Compile(%q): %v", pattern, err)
	}
	return m
}

func TestSearch(t *testing.T) {
	ctxText := "a\nfoo1\nb\nc\nd\ne\nf\nfoo2\ng\nh\nfoo3\n"
	tests := []struct {
		name, pattern, text string
		opts                Options
		want                string
	}{
		{"literal", "foo", "foo\nbar\nxfoo\n", Options{}, "f:1:foo\nf:3:xfoo"},
		{"regex", `^b.r$`, "foo\nbar\nbarr\n", Options{}, "f:2:bar"},
		{"no trailing newline", "end", "a\nthe end", Options{}, "f:2:the end"},
		{"crlf keeps cr", "x$", "x\r\nx\n", Options{}, "f:2:x"},
		{"cr is part of the line", "x\r", "x\r\n", Options{}, "f:1:x\r"},
		{"lone cr is no break", "b", "a\rb\n", Options{}, "f:1:a\rb"},
		{"ignore case", "HELLO", "hello\nHeLLo\nbye\n", Options{IgnoreCase: true}, "f:1:hello\nf:2:HeLLo"},
		{"ignore case kelvin", "k", "\u212a\nx\n", Options{IgnoreCase: true}, "f:1:\u212a"},
		{"literal metachars", "a.b(", "a.b(\naxb(\n", Options{Literal: true}, "f:1:a.b("},
		{"class never spans lines", `a[^x]b`, "a\nb\naxb\nazb\n", Options{}, "f:4:azb"},
		{"space never spans lines", `a\s+b`, "a\nb\na  b\n", Options{}, "f:3:a  b"},
		{"dot all never spans lines", `(?s)a.b`, "a\nb\naqb\n", Options{}, "f:3:aqb"},
		{"newline literal never matches", "a\nb", "a\nb\n", Options{}, ""},
		{"text anchors are line anchors", `\Ab\z`, "a\nb\nc\n", Options{}, "f:2:b"},
		{"empty pattern matches every line", "", "a\n\nb", Options{}, "f:1:a\nf:2:\nf:3:b"},
		{"empty file", "x", "", Options{}, ""},
		{"invalid utf8", "a", "a\xffb\xfe\n", Options{}, "f:1:a\ufffdb\ufffd"},
		{"context", "foo", ctxText, Options{Context: 2},
			"f-1-a\nf:2:foo1\nf-3-b\nf-4-c\n--\nf-6-e\nf-7-f\nf:8:foo2\nf-9-g\nf-10-h\nf:11:foo3"},
		{"context 1", "foo", ctxText, Options{Context: 1},
			"f-1-a\nf:2:foo1\nf-3-b\n--\nf-7-f\nf:8:foo2\nf-9-g\nf-10-h\nf:11:foo3"},
		{"context at end without newline", "x", "a\nx\nb", Options{Context: 3}, "f-1-a\nf:2:x\nf-3-b"},
		{"context clamps", "x", "x\n", Options{Context: 99}, "f:1:x"},
		{"long line", "x", "x" + strings.Repeat("é", 600) + "\n", Options{MaxColumns: 5},
			"f:1:xéééé" + LongLineMarker},
		{"line at the limit is kept", "x", "x1234\n", Options{MaxColumns: 5}, "f:1:x1234"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mustCompile(t, tt.pattern, tt.opts)
			if got := collect(t, m, tt.text); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestSearchBinary(t *testing.T) {
	m := mustCompile(t, "x", Options{})
	for _, tt := range []struct {
		text   string
		binary bool
	}{
		{"x\x00", true},
		{strings.Repeat("a", 8191) + "\x00x", true},
		{strings.Repeat("a", 8192) + "\x00\nx\n", false},
	} {
		err := m.Search(context.Background(), strings.NewReader(tt.text), func(Line) error { return nil })
		if got := errors.Is(err, ErrBinary); got != tt.binary {
			t.Errorf("len %d: binary = %v, want %v", len(tt.text), got, tt.binary)
		}
	}
}

func TestCompileError(t *testing.T) {
	_, err := Compile("(", Options{})
	if err == nil || !strings.Contains(err.Error(), "missing closing )") {
		t.Fatalf("Compile(\"(\") error = %v", err)
	}
	if _, err := Compile("(", Options{Literal: true}); err != nil {
		t.Fatalf("literal: %v", err)
	}
}

// TestChunkBoundaries searches texts far larger than the read buffer, read
// a byte or a few bytes at a time, and compares with a line-by-line search.
func TestChunkBoundaries(t *testing.T) {
	var b strings.Builder
	for i := range 12000 {
		switch {
		case i%997 == 0:
			fmt.Fprintf(&b, "line %d has the needle\n", i)
		case i == 6789:
			b.WriteString(strings.Repeat("long needle ", 20000) + "\n")
		default:
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	text := b.String()
	for _, c := range []int{0, 1, 3} {
		for _, pattern := range []string{"needle", `ne+dle`, `(?i)NEEDLE`, `[n]eedle`} {
			o := Options{Context: c}
			m := mustCompile(t, pattern, o)
			want := naive(t, pattern, o, text)
			for name, r := range map[string]io.Reader{
				"whole": strings.NewReader(text),
				"half":  iotest.HalfReader(strings.NewReader(text)),
			} {
				p := NewPrinter(0, c > 0)
				if err := m.Search(context.Background(), r, func(l Line) error { p.AddLine("f", l); return nil }); err != nil {
					t.Fatal(err)
				}
				if got := p.String(); got != want {
					t.Fatalf("%s pattern %q context %d: outputs differ (got %d bytes, want %d)", name, pattern, c, len(got), len(want))
				}
			}
		}
	}
}

// naive is the obvious line-by-line search the engine must agree with.
func naive(t *testing.T, pattern string, o Options, text string) string {
	t.Helper()
	if o.Literal {
		pattern = regexp.QuoteMeta(pattern)
	}
	if o.IgnoreCase {
		pattern = "(?i)" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		t.Fatalf("naive: %v", err)
	}
	if text == "" {
		return ""
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	ctx := min(max(o.Context, 0), MaxContext)
	matched := make([]bool, len(lines))
	show := make([]bool, len(lines))
	for i, l := range lines {
		if re.MatchString(l) {
			matched[i] = true
			for j := max(0, i-ctx); j <= min(len(lines)-1, i+ctx); j++ {
				show[j] = true
			}
		}
	}
	p := NewPrinter(0, ctx > 0)
	for i, l := range lines {
		if show[i] {
			p.AddLine("f", Line{Number: i + 1, Text: Display([]byte(l), o.MaxColumns), Match: matched[i]})
		}
	}
	return p.String()
}

func TestPrinterCap(t *testing.T) {
	p := NewPrinter(2, false)
	if !p.Add("a", []Line{{Number: 1, Text: "x", Match: true}, {Number: 2, Text: "y", Match: true}}) {
		t.Fatal("cap reached too early")
	}
	if p.Truncated() {
		t.Fatal("truncated without a dropped line")
	}
	if p.AddLine("b", Line{Number: 1, Text: "z", Match: true}) || !p.Truncated() {
		t.Fatal("third line not refused")
	}
	if got, want := p.String(), "a:1:x\na:2:y"; got != want || p.Matches() != 2 || p.Lines() != 2 {
		t.Fatalf("got %q (%d matches), want %q", got, p.Matches(), want)
	}
}

func TestDisplay(t *testing.T) {
	tests := []struct {
		in   string
		cols int
		want string
	}{
		{"abc", 0, "abc"},
		{"a\xffb", 0, "a\ufffdb"},
		{"\xe2\x82", 0, "\ufffd\ufffd"},
		{"abcdef", 3, "abc" + LongLineMarker},
		{"abc", 3, "abc"},
		{"ab\xff\xffcd", 3, "ab\ufffd" + LongLineMarker},
		{strings.Repeat("x", 600), -1, strings.Repeat("x", 600)},
		{strings.Repeat("x", 501), 0, strings.Repeat("x", 500) + LongLineMarker},
	}
	for _, tt := range tests {
		if got := Display([]byte(tt.in), tt.cols); got != tt.want {
			t.Errorf("Display(%q, %d) = %q, want %q", tt.in, tt.cols, got, tt.want)
		}
	}
}

// FuzzSearch checks the engine against the line-by-line search on any
// pattern and text.
func FuzzSearch(f *testing.F) {
	f.Add("foo", "a\nfoo\nb\n", 1, false, false)
	f.Add(`(?i)k`, "\u212a\nK\n", 0, false, false)
	f.Add(`a[^x]b`, "a\nb\n", 2, false, false)
	f.Add(`^$`, "\n\n\xff\n", 0, true, false)
	f.Add(`x\z`, "x\r\nx", 3, false, true)
	f.Fuzz(func(t *testing.T, pattern, text string, context int, ignoreCase, literal bool) {
		if strings.IndexByte(text[:min(len(text), BinaryPrefix)], 0) >= 0 {
			return
		}
		o := Options{Context: context % 4, IgnoreCase: ignoreCase, Literal: literal}
		m, err := Compile(pattern, o)
		if err != nil {
			return
		}
		want := naive(t, pattern, o, text)
		if got := collect(t, m, text); got != want {
			t.Fatalf("pattern %q text %q: got\n%q\nwant\n%q", pattern, text, got, want)
		}
	})
}

// TestSkipBOM leaves a UTF-8 byte order mark out of line 1 for matching,
// display and context, and keeps it without the option.
func TestSkipBOM(t *testing.T) {
	text := "\xef\xbb\xbfa first\nsecond\na third\n\xef\xbb\xbfnot first\n"
	for _, tt := range []struct {
		opts    Options
		pattern string
		want    []string
	}{
		{Options{SkipBOM: true}, "^a", []string{"1:a first", "3:a third"}},
		{Options{SkipBOM: true, Context: 1}, "second", []string{"1-a first", "2:second", "3-a third"}},
		{Options{SkipBOM: true}, "^\ufeff", []string{"4:\ufeffnot first"}},
		{Options{}, "first", []string{"1:\ufeffa first", "4:\ufeffnot first"}},
	} {
		m, err := Compile(tt.pattern, tt.opts)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		err = m.Search(context.Background(), strings.NewReader(text), func(l Line) error {
			sep := "-"
			if l.Match {
				sep = ":"
			}
			got = append(got, fmt.Sprintf("%d%s%s", l.Number, sep, l.Text))
			return nil
		})
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%q %+v: %q, %v; want %q", tt.pattern, tt.opts, got, err, tt.want)
		}
	}
}
