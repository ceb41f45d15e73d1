package udiff

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// TestGolden compares Unified with the diffs Python's difflib prints; see
// testdata/gen.py, which wrote testdata/golden.json.
func TestGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct{ Name, Path, Old, New, Diff string }
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 30 {
		t.Fatalf("only %d golden cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			got, truncated := Unified(c.Path, c.Old, c.New)
			if truncated {
				t.Error("truncated = true for a small change")
			}
			if got != c.Diff {
				t.Fatalf("diff mismatch\n--- got:\n%s\n--- want:\n%s", got, c.Diff)
			}
			assertApplies(t, c.Old, c.New, got)
		})
	}
}

func TestIdentical(t *testing.T) {
	for _, s := range []string{"", "a\n", "no newline", strings.Repeat("x", MaxSourceChars+1)} {
		if diff, truncated := Unified("p", s, s); diff != "" || truncated {
			t.Errorf("Unified of identical %.20q = %q, %v; want \"\", false", s, diff, truncated)
		}
	}
}

func TestBounds(t *testing.T) {
	header := "--- a/big.txt\n+++ b/big.txt"
	tests := []struct {
		name        string
		old, new    string
		headersOnly bool
		truncated   bool
	}{
		{name: "old side at the character limit is diffed, then cut",
			old: strings.Repeat("é", MaxSourceChars), new: "x", truncated: true},
		{name: "old side over the character limit",
			old: strings.Repeat("é", MaxSourceChars+1), new: "x", headersOnly: true, truncated: true},
		{name: "new side over the character limit",
			old: "", new: strings.Repeat("a", MaxSourceChars+1), headersOnly: true, truncated: true},
		{name: "line product at the limit",
			old: strings.Repeat("\n", 255), new: strings.Repeat("x\n", 255)},
		{name: "line product over the limit",
			old: strings.Repeat("\n", 256), new: strings.Repeat("x\n", 255), headersOnly: true, truncated: true},
		{name: "many lines against one line are diffed, then cut",
			old: "a", new: strings.Repeat("b\n", MaxSourceChars/2), truncated: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diff, truncated := Unified("big.txt", tt.old, tt.new)
			if (diff == header) != tt.headersOnly {
				t.Errorf("headers only = %v, want %v (diff starts %.80q)", diff == header, tt.headersOnly, diff)
			}
			if truncated != tt.truncated {
				t.Errorf("truncated = %v, want %v", truncated, tt.truncated)
			}
			if n := utf8.RuneCountInString(diff); n > MaxDiffChars {
				t.Errorf("diff has %d characters, more than %d", n, MaxDiffChars)
			}
			if !truncated {
				assertApplies(t, tt.old, tt.new, diff)
			}
		})
	}
}

func TestCut(t *testing.T) {
	// 100 changed lines of 99 characters each give a diff far over the cap.
	var oldB, newB strings.Builder
	for i := range 100 {
		fmt.Fprintf(&oldB, "%-98d\n", i)
		fmt.Fprintf(&newB, "%-97dx\n", i)
	}
	diff, truncated := Unified("p", oldB.String(), newB.String())
	if !truncated {
		t.Fatal("truncated = false for a diff over the cap")
	}
	if n := utf8.RuneCountInString(diff); n > MaxDiffChars || n < MaxDiffChars-100 {
		t.Fatalf("cut diff has %d characters, want at most %d and close to it", n, MaxDiffChars)
	}
	full := mustFull(t, oldB.String(), newB.String())
	if !strings.HasPrefix(full, diff) || full[len(diff)] != '\n' {
		t.Fatal("cut diff is not the full diff cut at a line boundary")
	}

	// A cut at exactly the cap: the first lines end at character 8192.
	exact := "--- a/p\n+++ b/p"
	if got, tr := cut(exact, len(exact)); got != exact || tr {
		t.Errorf("cut of a short diff = %q, %v", got, tr)
	}
	long := exact + "\n" + strings.Repeat("x", MaxDiffChars-len(exact)-1) + "\n+y"
	if got, tr := cut(long, len(exact)); got != long[:MaxDiffChars] || !tr {
		t.Errorf("cut at exactly %d characters kept %d characters, truncated=%v", MaxDiffChars, len(got), tr)
	}
	// Multibyte characters count once.
	wide := exact + "\n" + strings.Repeat("é", MaxDiffChars-len(exact)-1)
	if got, tr := cut(wide, len(exact)); got != wide || tr {
		t.Errorf("cut counted bytes instead of characters: kept %d of %d bytes, truncated=%v", len(got), len(wide), tr)
	}
	// A header longer than the cap is kept whole.
	path := strings.Repeat("d/", MaxDiffChars)
	diff, truncated = Unified(path, "a\n", "b\n")
	if diff != Headers(path) || !truncated {
		t.Errorf("long path: diff %.40q..., truncated=%v; want the headers alone and true", diff, truncated)
	}
}

func mustFull(t *testing.T, old, new string) string {
	t.Helper()
	a, b := splitLines(old), splitLines(new)
	var sb strings.Builder
	sb.WriteString(Headers("p"))
	for _, g := range groupOpcodes(opcodes(a, b), ContextLines) {
		writeHunk(&sb, g, a, b)
	}
	return sb.String()
}

func TestFormatRange(t *testing.T) {
	tests := []struct {
		start, stop int
		want        string
	}{
		{0, 0, "0,0"},
		{0, 1, "1"},
		{0, 2, "1,2"},
		{4, 4, "4,0"},
		{4, 5, "5"},
		{4, 10, "5,6"},
	}
	for _, tt := range tests {
		if got := formatRange(tt.start, tt.stop); got != tt.want {
			t.Errorf("formatRange(%d, %d) = %q, want %q", tt.start, tt.stop, got, tt.want)
		}
	}
}

func TestSplitLines(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"\n", []string{"\n"}},
		{"a", []string{"a"}},
		{"a\nb", []string{"a\n", "b"}},
		{"a\r\nb\r\n", []string{"a\r\n", "b\r\n"}},
		{"a\rb", []string{"a\rb"}},
	}
	for _, tt := range tests {
		got := splitLines(tt.in)
		if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
			t.Errorf("splitLines(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// assertApplies checks that applying diff to old gives new.
func assertApplies(t *testing.T, old, new, diff string) {
	t.Helper()
	got, err := apply(old, diff)
	if err != nil {
		t.Fatalf("applying the diff: %v\n%s", err, diff)
	}
	if got != new {
		t.Fatalf("applying the diff gave %q, want %q\n%s", got, new, diff)
	}
}

// apply applies a diff made by Unified to old. It checks every context and
// removed line, and the hunk ranges, so a malformed diff fails.
func apply(old, diff string) (string, error) {
	if diff == "" {
		return old, nil
	}
	src := splitLines(old)
	lines := strings.Split(diff, "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "--- a/") || !strings.HasPrefix(lines[1], "+++ b/") {
		return "", errors.New("missing headers")
	}
	var out []string
	pos := 0
	for k := 2; k < len(lines); {
		oldStart, oldLen, newLen, err := parseHunkHeader(lines[k])
		if err != nil {
			return "", err
		}
		k++
		at := oldStart - 1
		if oldLen == 0 {
			at = oldStart
		}
		if at < pos || at > len(src) {
			return "", fmt.Errorf("hunk at line %d out of order", oldStart)
		}
		out = append(out, src[pos:at]...)
		pos = at
		seenOld, seenNew := 0, 0
		for k < len(lines) && !strings.HasPrefix(lines[k], "@@ ") {
			line := lines[k]
			k++
			if line == "" {
				return "", errors.New("empty diff line")
			}
			text := line[1:] + "\n"
			if k < len(lines) && lines[k] == noNewline {
				text = line[1:]
				k++
			}
			switch line[0] {
			case ' ', '-':
				if pos >= len(src) || src[pos] != text {
					return "", fmt.Errorf("line %d does not match %q", pos+1, line)
				}
				pos++
				seenOld++
				if line[0] == ' ' {
					out = append(out, text)
					seenNew++
				}
			case '+':
				out = append(out, text)
				seenNew++
			default:
				return "", fmt.Errorf("bad diff line %q", line)
			}
		}
		if seenOld != oldLen || seenNew != newLen {
			return "", fmt.Errorf("hunk counts %d,%d do not match its header %d,%d", seenOld, seenNew, oldLen, newLen)
		}
	}
	out = append(out, src[pos:]...)
	return strings.Join(out, ""), nil
}

func parseHunkHeader(h string) (oldStart, oldLen, newLen int, err error) {
	rest, ok := strings.CutPrefix(h, "@@ -")
	rest, ok2 := strings.CutSuffix(rest, " @@")
	oldR, newR, ok3 := strings.Cut(rest, " +")
	if !ok || !ok2 || !ok3 {
		return 0, 0, 0, fmt.Errorf("bad hunk header %q", h)
	}
	oldStart, oldLen, err = parseRange(oldR)
	if err != nil {
		return 0, 0, 0, err
	}
	_, newLen, err = parseRange(newR)
	return oldStart, oldLen, newLen, err
}

func parseRange(r string) (start, length int, err error) {
	s, l, found := strings.Cut(r, ",")
	if start, err = strconv.Atoi(s); err != nil {
		return 0, 0, err
	}
	if !found {
		return start, 1, nil
	}
	length, err = strconv.Atoi(l)
	return start, length, err
}

func FuzzUnified(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n")
	f.Add("", "x")
	f.Add("x", "")
	f.Add("a\r\nb", "a\nb\n")
	f.Add("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "0\n2\n3\n4\n5\n6\n7\n8\n9\n1O\n")
	f.Add("\\ No newline at end of file\n", "\\ No newline at end of file")
	f.Fuzz(func(t *testing.T, old, new string) {
		diff, truncated := Unified("f.txt", old, new)
		if limit := MaxDiffChars + len(Headers("f.txt")); utf8.RuneCountInString(diff) > limit {
			t.Fatalf("diff has %d characters, over %d", utf8.RuneCountInString(diff), limit)
		}
		if (diff == "") != (old == new) {
			t.Fatalf("empty diff = %v for equal = %v", diff == "", old == new)
		}
		if strings.HasSuffix(diff, "\n") {
			t.Fatal("diff ends with a newline")
		}
		if !truncated {
			assertApplies(t, old, new, diff)
			// Hunks is the same diff without its headers, ending
			// with a newline.
			hunks := Hunks(old, new)
			if want := strings.TrimPrefix(strings.TrimPrefix(diff, Headers("f.txt")), "\n"); hunks != "" && hunks != want+"\n" || hunks == "" && old != new {
				t.Fatalf("Hunks = %q, want %q and a newline", hunks, want)
			}
		}
	})
}

func BenchmarkUnified(b *testing.B) {
	var oldB, newB strings.Builder
	// The line product bound keeps two similar files at 255 lines at most.
	for i := range 255 {
		fmt.Fprintf(&oldB, "line %d\n", i)
		if i%40 == 0 {
			fmt.Fprintf(&newB, "changed %d\n", i)
		} else {
			fmt.Fprintf(&newB, "line %d\n", i)
		}
	}
	worst := func(a, b int) (string, string) {
		return strings.Repeat("a\n", a), strings.Repeat("b\n", b)
	}
	cases := []struct {
		name     string
		old, new string
	}{
		{"sparse changes in 255 lines", oldB.String(), newB.String()},
	}
	for _, dims := range [][2]int{{255, 255}, {2, 16383}, {16, 3854}} {
		o, n := worst(dims[0], dims[1])
		cases = append(cases, struct {
			name     string
			old, new string
		}{fmt.Sprintf("all different %dx%d", dims[0], dims[1]), o, n})
	}
	// Random lines from a two-line alphabet: many short partial matches.
	rng := rand.New(rand.NewPCG(1, 2))
	var ra, rb strings.Builder
	for range 255 {
		ra.WriteString([]string{"a\n", "b\n"}[rng.IntN(2)])
		rb.WriteString([]string{"a\n", "b\n"}[rng.IntN(2)])
	}
	cases = append(cases, struct {
		name     string
		old, new string
	}{"random two-letter lines 255x255", ra.String(), rb.String()})
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Unified("p", c.old, c.new)
			}
		})
	}
}

// lineModeOpcodes is opcodes through go-diff's own line mode
// (DiffLinesToChars), which opcodes replaced by the lines it splits once.
func lineModeOpcodes(old, new string) []opcode {
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0
	c1, c2, _ := dmp.DiffLinesToChars(old, new)
	return opcodesOf(dmp.DiffMain(c1, c2, false))
}

// FuzzOpcodesLineMode: the opcodes of the lines split once are those of
// go-diff's line mode, alignment included.
func FuzzOpcodesLineMode(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n")
	f.Add("a\nc\n", "a\nb\na\nc\n")
	f.Add("x\nx\n", "x\nx\nx\n")
	f.Add("", "x")
	f.Add("a\r\nb", "a\nb\n")
	f.Fuzz(func(t *testing.T, old, new string) {
		if old == new || tooLarge(old, new) {
			return
		}
		got, want := opcodes(splitLines(old), splitLines(new)), lineModeOpcodes(old, new)
		if !slices.Equal(got, want) {
			t.Fatalf("opcodes %v, go-diff's line mode %v", got, want)
		}
	})
}

func TestLineRunesRunOut(t *testing.T) {
	ids := map[string]rune{}
	for i := range utf8.MaxRune - 0x800 {
		ids[strconv.Itoa(int(i))] = 0
	}
	if _, ok := lineRunes([]string{"new"}, ids); ok {
		t.Fatal("a character past the last one")
	}
}
