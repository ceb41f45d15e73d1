package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEditPainPoints holds one case per reported class of failed edit:
// each names the report it comes from, and pins the hint that lets the
// model recover in one step instead of looping.
func TestEditPainPoints(t *testing.T) {
	tests := []struct {
		name, source string
		content, old string
		want         string
	}{
		{"tabs in the file, spaces sent", "anthropics/claude-code #9163",
			"func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n", "    if x {\n        return 1\n    }",
			"Lines 2-4 match if indentation is ignored: the file indents with tabs, old_text with spaces."},
		{"spaces in the file, tabs sent", "anthropics/claude-code #26996",
			"def f():\n    return 1\n", "def f():\n\treturn 1",
			"Lines 1-2 match if indentation is ignored: the file indents with spaces, old_text with tabs."},
		{"trailing whitespace", "google-gemini/gemini-cli #6835",
			"a = 1  \nb = 2\n", "a = 1\nb = 2",
			"Lines 1-2 match if trailing whitespace is ignored."},
		{"curly quotes in the file", "anthropics/claude-code #23945 (as cited by issue 15)",
			"say(\u201chello\u201d)\n", `say("hello")`,
			"Line 1 matches if curly and straight quotes are taken as equal: the file has curly quotes (\u201c \u201d \u2018 \u2019)."},
		{"curly quotes sent", "anthropics/claude-code #23945 (as cited by issue 15)",
			"it's here\n", "it\u2019s here",
			"Line 1 matches if curly and straight quotes are taken as equal: old_text has curly quotes, the file straight ones."},
		{"over-escaped newline", "google-gemini/gemini-cli #2137, modelcontextprotocol/servers #2034 (as cited by issue 15)",
			"first\nsecond\n", `first\nsecond`,
			`old_text contains a literal \n (a backslash and an n); with line breaks instead it matches lines 1-2. Send real line breaks.`},
		{"CRLF sent to an LF file", "google-gemini/gemini-cli #1497",
			"one\ntwo\n", "one\r\ntwo",
			`With \n line endings it matches lines 1-2: the file has \n line endings, old_text has \r\n.`},
		{"a near miss shows the line", "google-gemini/gemini-cli #18370",
			"func compute(total int) int {\n\treturn total * 2\n}\n", "return totl * 2",
			"The closest line is line 2 (1 character differs): '\treturn total * 2'."},
		{"a near miss in a block names old_text's line", "google-gemini/gemini-cli #18370",
			"x := 1\ny := compute(x, 2)\n", "x := 1\ny := compute(x, 3)",
			"The closest line to line 2 of old_text is line 2 (1 character differs): 'y := compute(x, 2)'."},
		{"nothing close: no hint", "issue 15",
			"alpha\n", "something else entirely", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forEach(t, func(t *testing.T, fx fixture) {
				fx.put(t, "f.txt", tt.content)
				s := newSet(t, fx.b, Options{})
				want := "old_text not found in f.txt. No changes were written."
				if tt.want != "" {
					want = "old_text not found in f.txt. " + tt.want + " No changes were written."
				}
				got := retry(t, s, "edit_file", "path", "f.txt", "old_text", tt.old, "new_text", "z")
				if got != want {
					t.Errorf("%s (from %s):\ngot  %q\nwant %q", tt.name, tt.source, got, want)
				}
				wantEqual(t, fx.mustGet(t, "f.txt"), tt.content)
			})
		})
	}
}

func TestEditTolerance(t *testing.T) {
	tests := []struct {
		name         string
		content      string
		old, new     string
		want, result string
		refusal      string
	}{
		{"spaces sent to a tab file keep the tabs",
			"func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n", "    if x {\n        return 1\n    }", "    if x {\n        return 2\n    }",
			"func f() {\n\tif x {\n\t\treturn 2\n\t}\n}\n", "Edited f.txt (line 3). old_text matched only after ignoring indentation and trailing whitespace; the file's indentation was kept.", ""},
		{"a new line deeper than any old one is converted",
			"if x {\n\tf()\n}\n", "if x {\n    f()\n}", "if x {\n    f()\n    if y {\n        g()\n    }\n}",
			"if x {\n\tf()\n\tif y {\n\t\tg()\n\t}\n}\n", "Edited f.txt (lines 3-5). old_text matched only after ignoring indentation and trailing whitespace; the file's indentation was kept.", ""},
		{"tabs sent to a space file",
			"def f():\n    return 1\n", "def f():\n\treturn 1", "def f():\n\treturn 2",
			"def f():\n    return 2\n", "Edited f.txt (line 2). old_text matched only after ignoring indentation and trailing whitespace; the file's indentation was kept.", ""},
		{"trailing whitespace and CRLF",
			"a = 1  \r\nb = 2\r\n", "a = 1\nb = 2", "a = 3\nb = 4",
			"a = 3\r\nb = 4\r\n", "Edited f.txt (lines 1-2). old_text matched only after ignoring indentation and trailing whitespace; the file's indentation was kept.", ""},
		{"a fragment inside a line, then the next line with other indentation",
			"\tx := f(a)\n\ty := 2\n", "x := f(a)\n  y := 2", "x := g(a)\n  y := 3",
			"\tx := g(a)\n\ty := 3\n", "Edited f.txt (lines 1-2). old_text matched only after ignoring indentation and trailing whitespace; the file's indentation was kept.", ""},
		{"exact matches win without a note",
			"\tv\n", "\tv", "\tw", "\tw\n", "Edited f.txt (line 1).", ""},
		{"tolerant twice refuses with lines",
			"\tx()\n\ty()\n\tx()\n", "    x()", "z", "", "",
			"old_text not found in f.txt; ignoring indentation and trailing whitespace it occurs 2 times (lines 1, 3). Include more surrounding context to make the match unique. No changes were written."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forEach(t, func(t *testing.T, fx fixture) {
				fx.put(t, "f.txt", tt.content)
				s := newSet(t, fx.b, Options{EditTolerance: ToleranceWhitespace, NoContentHashes: true})
				if tt.refusal != "" {
					wantEqual(t, retry(t, s, "edit_file", "path", "f.txt", "old_text", tt.old, "new_text", tt.new), tt.refusal)
					wantEqual(t, fx.mustGet(t, "f.txt"), tt.content)
					return
				}
				wantEqual(t, ok(t, s, "edit_file", "path", "f.txt", "old_text", tt.old, "new_text", tt.new), tt.result)
				wantEqual(t, fx.mustGet(t, "f.txt"), tt.want)
			})
		})
	}
	fx := localFixture(t)
	fx.put(t, "f.txt", "\tv\n")
	s := newSet(t, fx.b, Options{NoContentHashes: true})
	wantEqual(t, retry(t, s, "edit_file", "path", "f.txt", "old_text", "  v", "new_text", "w"),
		"old_text not found in f.txt. Line 1 matches if indentation is ignored: the file indents with tabs, old_text with spaces. No changes were written.")
	if _, err := New(fx.b, Options{EditTolerance: "fuzzy"}); err == nil || !strings.Contains(err.Error(), `EditTolerance must be "whitespace"`) {
		t.Errorf("EditTolerance fuzzy: %v", err)
	}
}

func TestEditNoChange(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		fx.put(t, "f.txt", "a\nb\n")
		rec := &recorder{}
		s := newSet(t, fx.b, Options{OnEvent: rec.on, OnChangeRequest: func(context.Context, *ChangeRequest) error {
			t.Error("a change request for an edit that changes nothing")
			return nil
		}})
		wantEqual(t, ok(t, s, "edit_file", "path", "f.txt", "old_text", "b", "new_text", "b"),
			"No changes to f.txt: the new text equals the old text, so nothing was written. [hash:"+h12("a\nb\n")+"]")
		// The old text must still be there exactly once.
		wantEqual(t, retry(t, s, "edit_file", "path", "f.txt", "old_text", "zz", "new_text", "zz"),
			"old_text not found in f.txt. No changes were written.")
		if len(rec.events) > 0 {
			t.Errorf("an edit that changed nothing emitted %s", rec.kinds())
		}
	})
}

func TestEditReplacementCap(t *testing.T) {
	fx := localFixture(t)
	fx.put(t, "f.txt", "x\n")
	s := newSet(t, fx.b, Options{})
	reps := make([]map[string]string, MaxReplacements+1)
	for i := range reps {
		reps[i] = map[string]string{"old_text": fmt.Sprint("k", i), "new_text": "v"}
	}
	wantEqual(t, retry(t, s, "edit_file", "path", "f.txt", "replacements", reps),
		"replacements has 101 items; edit_file applies at most 100 per call. Send them in several calls of at most 100 each. No changes were written.")
}

func TestEditStopsAtDeadline(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := applyEdits(ctx, strings.Repeat("a", 1<<20), []replacement{{"a", "b"}}, "f", false)
	if err != context.Canceled {
		t.Errorf("cancelled edit: %v, want context.Canceled", err)
	}
}

func TestPieceText(t *testing.T) {
	pt := newPieceText("hello world")
	pt.replace(0, 5, "HE")
	pt.replace(2, 2, "LLO")
	pt.replace(pt.size, pt.size, "!")
	wantEqual(t, pt.slice(0, pt.size), "HELLO world!")
	m, err := pt.find(context.Background(), "LO w")
	if err != nil || m.count != 1 || m.starts[0] != 3 {
		t.Errorf("find across pieces: %+v, %v", m, err)
	}
	if l := pt.lineOf(5); l != 1 {
		t.Errorf("lineOf = %d", l)
	}
	wantEqual(t, pt.String(), "HELLO world!")
}

func TestEditHardLink(t *testing.T) {
	fx := localFixture(t)
	fx.put(t, "f.txt", "old\n")
	if err := os.Link(filepath.Join(fx.dir, "f.txt"), filepath.Join(fx.dir, "other.txt")); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	s := newSet(t, fx.b, Options{NoContentHashes: true})
	wantEqual(t, ok(t, s, "edit_file", "path", "f.txt", "old_text", "old", "new_text", "new"),
		"Edited f.txt (line 1). Its other hard link keeps the old content: the edit replaced the file, as every atomic write does.")
	wantEqual(t, fx.mustGet(t, "other.txt"), "old\n")
	wantEqual(t, ok(t, s, "edit_file", "path", "f.txt", "old_text", "new", "new_text", "newer"), "Edited f.txt (line 1).")
}
