package patch

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestParseV4A(t *testing.T) {
	text := "*** Begin Patch\n" +
		"*** Add File: hello.txt\n+Hello\n+world\n" +
		"*** Update File: src/app.py\n*** Move to: src/main.py\n@@ def greet():\n-print(\"Hi\")\n+print(\"Hello\")\n" +
		"@@ class A\n@@   def m():\n x\n-y\n+z\n*** End of File\n" +
		"*** Delete File: old.txt\n" +
		"*** End Patch\n"
	p, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	want := &Patch{Format: "v4a", Files: []File{
		{Kind: Add, Path: "hello.txt", Content: "Hello\nworld\n", Line: 2},
		{Kind: Update, Path: "src/app.py", MoveTo: "src/main.py", Line: 5, Hunks: []Hunk{
			{Anchors: []string{"def greet():"}, Lines: []Line{{'-', `print("Hi")`}, {'+', `print("Hello")`}}, Line: 7},
			{Anchors: []string{"class A", "def m():"}, Lines: []Line{{' ', "x"}, {'-', "y"}, {'+', "z"}}, EOF: true, Line: 10},
		}},
		{Kind: Delete, Path: "old.txt", Line: 16},
	}}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("got  %+v\nwant %+v", p, want)
	}
}

func TestParseUnified(t *testing.T) {
	text := "diff --git a/a.txt b/a.txt\nindex 1..2 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n" +
		"--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+n1\n+n2\n\\ No newline at end of file\n" +
		"--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n" +
		"--- a/from.txt\n+++ b/to.txt\n@@ -2 +2 @@\n-x\n+y\n"
	p, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	want := &Patch{Format: "unified", Files: []File{
		{Kind: Update, Path: "a.txt", Line: 3, Hunks: []Hunk{{Lines: []Line{{' ', "one"}, {'-', "two"}, {'+', "TWO"}, {' ', "three"}}, OldStart: 1, Unified: true, Line: 5}}},
		{Kind: Add, Path: "new.txt", Content: "n1\nn2", Line: 10},
		{Kind: Delete, Path: "gone.txt", Line: 16},
		{Kind: Update, Path: "from.txt", MoveTo: "to.txt", Line: 20, Hunks: []Hunk{{Lines: []Line{{'-', "x"}, {'+', "y"}}, OldStart: 2, Unified: true, Line: 22}}},
	}}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("got  %+v\nwant %+v", p, want)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ text, want string }{
		{"", "the patch is neither a V4A patch"},
		{"*** Begin Patch\n*** End Patch\n", "the patch changes no file"},
		{"*** Begin Patch\n*** Add File: a\n+x\n", "line 3: a V4A patch ends with '*** End Patch'"},
		{"*** Begin Patch\n*** Update File: a\n*** End Patch\n", "line 2: '*** Update File: a' has no hunks"},
		{"*** Begin Patch\n*** Update File: a\n@@\n*** End Patch\n", "line 3: hunk 1 of 'a' has no lines"},
		{"*** Begin Patch\n*** Update File: a\n@@\n x\nbogus\n*** End Patch\n", "line 5: a hunk line starts with ' ' (context), '-' (removed) or '+' (added), got 'bogus'"},
		{"*** Begin Patch\n*** Add File: a\nx\n*** End Patch\n", "line 3: every line of an added file starts with '+', got 'x'"},
		{"*** Begin Patch\n*** Frobnicate File: a\n*** End Patch\n", "line 2: expected '*** Add File: <path>'"},
		{"*** Begin Patch\n*** Delete File:\n*** End Patch\n", "line 2: '*** Delete File:' names no path"},
		{"--- a/x\n+++ b/x\n@@ -1 +1 @@ bad\n", "line 3: the hunk has no lines"},
		{"--- a/x\n+++ b/x\n@@ bogus @@\n-a\n", "line 3: a unified hunk header reads"},
		{"--- a/x\n+++ b/x\n", "line 1: the diff of 'x' has no hunks"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.text)
		switch {
		case tt.want == "" && err == nil:
		case tt.want == "":
			t.Errorf("Parse(%q): %v", tt.text, err)
		case err == nil || !strings.HasPrefix(err.Error(), tt.want):
			t.Errorf("Parse(%q) = %v, want %q", tt.text, err, tt.want)
		}
	}
}

func TestParseLenient(t *testing.T) {
	for _, text := range []string{
		"  *** Begin Patch\r\n*** Update File: f\r\n@@\r\n-a\r\n+b\r\n*** End Patch  \r\n",
		"<<'EOF'\n*** Begin Patch\n  *** Update File: f\n-a\n+b\n*** End Patch\nEOF\n",
	} {
		p, err := Parse(text)
		if err != nil {
			t.Fatalf("Parse(%q): %v", text, err)
		}
		if len(p.Files) != 1 || p.Files[0].Path != "f" || !reflect.DeepEqual(p.Files[0].Hunks[0].Old(), []string{"a"}) ||
			!reflect.DeepEqual(p.Files[0].Hunks[0].New(), []string{"b"}) {
			t.Errorf("Parse(%q) = %+v", text, p)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("*** Begin Patch\n*** Add File: a\n+x\n*** Update File: b\n*** Move to: c\n@@ f\n x\n-y\n+z\n*** End of File\n*** Delete File: d\n*** End Patch\n")
	f.Add("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n")
	f.Add("--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+n\n")
	f.Add("<<EOF\n*** Begin Patch\n*** Update File: f\n-a\n*** End Patch\nEOF")
	f.Add("*** Begin Patch\n*** Update File: d\n\n@@\n @@ x\n- *** End Patch\n+y\n\n@@\n\n-c\n\n*** End Patch\n")
	f.Add("diff --git a/o b/n\nsimilarity index 100%\nrename from o\nrename to n\ndiff --git a/s b/d\ncopy from s\ncopy to d\n--- a/s\n+++ b/d\n@@ -1 +1 @@\n-a\n+b\n")
	f.Add("diff --git a/e b/e\nnew file mode 100644\nindex 0000000..e69de29\ndiff --git a/r b/r\nold mode 100644\nnew mode 100755\n")
	f.Add("From 589ad64d944374bf7f299489af75e7f92d04f1f0 Mon Sep 17 00:00:00 2001\nSubject: x\n---\n a | 1 +\n\ndiff --git \"a/caf\\303\\251\" \"b/caf\\303\\251\"\n--- \"a/caf\\303\\251\"\n+++ \"b/caf\\303\\251\"\n@@ -1 +1 @@\n-x\n+y\n-- \n2.39.5\n")
	f.Add("diff --git a/b b/b\nGIT binary patch\nliteral 5\nMcmZQzO3KUw00MIXJOBUy\n\n")
	f.Fuzz(func(t *testing.T, text string) {
		p, err := Parse(text)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T", err)
			}
			return
		}
		if len(p.Files) == 0 {
			t.Fatal("a parsed patch with no files")
		}
		for _, f := range p.Files {
			if f.Path == "" {
				t.Fatalf("a file section without a path: %+v", f)
			}
			if f.Kind == Update && len(f.Hunks) == 0 && f.MoveTo == "" {
				t.Fatalf("an update with nothing to do: %+v", f)
			}
			if f.Kind == Copy && f.MoveTo == "" {
				t.Fatalf("a copy without a target: %+v", f)
			}
			for _, h := range f.Hunks {
				if len(h.Lines) == 0 || h.SoftLead < 0 || h.SoftTrail < 0 || len(h.WithoutSoft().Lines) == 0 {
					t.Fatalf("an empty hunk in %+v", f)
				}
			}
		}
	})
}

// TestParseGitSections reads the sections of a git diff that carry no
// hunk (as `git diff -M -C` and `git format-patch` print them): each
// becomes a file section or refuses the patch naming its file, so no
// section is dropped while the rest applies.
func TestParseGitSections(t *testing.T) {
	tests := []struct {
		name, text string
		want       []File
		err        string
	}{
		{"pure rename", "diff --git a/old.txt b/new.txt\nsimilarity index 100%\nrename from old.txt\nrename to new.txt\n",
			[]File{{Kind: Update, Path: "old.txt", MoveTo: "new.txt", Line: 1}}, ""},
		{"pure copy", "diff --git a/src.txt b/dst.txt\nsimilarity index 100%\ncopy from src.txt\ncopy to dst.txt\n",
			[]File{{Kind: Copy, Path: "src.txt", MoveTo: "dst.txt", Line: 1}}, ""},
		{"copy with a hunk", "diff --git a/s b/d\nsimilarity index 80%\ncopy from s\ncopy to d\nindex 1..2 100644\n--- a/s\n+++ b/d\n@@ -1 +1 @@\n-a\n+b\n",
			[]File{{Kind: Copy, Path: "s", MoveTo: "d", Line: 6, Hunks: []Hunk{{Lines: []Line{{'-', "a"}, {'+', "b"}}, OldStart: 1, Unified: true, Line: 8}}}}, ""},
		{"rename with spaces and a hunk", "diff --git a/my file b/your file\nsimilarity index 90%\nrename from my file\nrename to your file\n--- a/my file\n+++ b/your file\n@@ -1 +1 @@\n-a\n+b\n",
			[]File{{Kind: Update, Path: "my file", MoveTo: "your file", Line: 5, Hunks: []Hunk{{Lines: []Line{{'-', "a"}, {'+', "b"}}, OldStart: 1, Unified: true, Line: 7}}}}, ""},
		{"new empty file", "diff --git a/fresh.txt b/fresh.txt\nnew file mode 100644\nindex 0000000..e69de29\n",
			[]File{{Kind: Add, Path: "fresh.txt", Line: 1}}, ""},
		{"deleted empty file", "diff --git a/empty.txt b/empty.txt\ndeleted file mode 100644\nindex e69de29..0000000\n",
			[]File{{Kind: Delete, Path: "empty.txt", Line: 1}}, ""},
		{"new empty file with a space", "diff --git a/a b c b/a b c\nnew file mode 100644\nindex 0000000..e69de29\n",
			[]File{{Kind: Add, Path: "a b c", Line: 1}}, ""},
		{"mode change", "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n", nil,
			"line 1: 'run.sh' changes mode from 100644 to 100755; apply_patch does not set file modes"},
		{"mode change with a hunk", "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n--- a/run.sh\n+++ b/run.sh\n@@ -1 +1 @@\n-a\n+b\n", nil,
			"line 1: 'run.sh' changes mode from 100644 to 100755"},
		{"new executable", "diff --git a/x.sh b/x.sh\nnew file mode 100755\n--- /dev/null\n+++ b/x.sh\n@@ -0,0 +1 @@\n+echo\n", nil,
			"line 1: 'x.sh' is created with mode 100755; apply_patch creates plain files (mode 100644) only"},
		{"new symbolic link", "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+target\n\\ No newline at end of file\n", nil,
			"line 1: 'l' is created with mode 120000"},
		{"binary files differ", "diff --git a/b.bin b/b.bin\nindex 88768ef..3e3315e 100644\nBinary files a/b.bin and b/b.bin differ\n", nil,
			"line 3: 'b.bin' has a binary diff ('Binary files a/b.bin and b/b.bin differ'); apply_patch applies text changes only"},
		{"binary files differ, plain diff", "--- a/t\n+++ b/t\n@@ -1 +1 @@\n-a\n+b\nBinary files a/p.png and b/p.png differ\n", nil,
			"line 6: 'p.png' has a binary diff"},
		{"binary files differ before any header", "diff -ru a/p.png b/p.png\nBinary files a/p.png and b/p.png differ\n--- a/t\n+++ b/t\n@@ -1 +1 @@\n-a\n+b\n", nil,
			"line 2: 'p.png' has a binary diff"},
		{"git binary patch", "diff --git a/b.bin b/b.bin\nindex 88768ef..3e3315e 100644\nGIT binary patch\nliteral 5\nMcmZQzO3KUw00MIXJOBUy\n\nliteral 5\nMcmZQzOv=my00M6TI{*Lx\n\n", nil,
			"line 3: 'b.bin' has a binary diff ('GIT binary patch'); apply_patch applies text changes only"},
		{"hunks without ---/+++ lines", "diff --git a/x b/x\n@@ -1 +1 @@\n-a\n+b\n",
			[]File{{Kind: Update, Path: "x", Line: 1, Hunks: []Hunk{{Lines: []Line{{'-', "a"}, {'+', "b"}}, OldStart: 1, Unified: true, Line: 2}}}}, ""},
		{"a section that changes nothing", "diff --git a/x b/x\nindex 1..2 100644\n", nil, "line 1: the diff of 'x' changes nothing"},
	}
	for _, tt := range tests {
		p, err := Parse(tt.text)
		switch {
		case tt.err != "":
			if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
				t.Errorf("%s: got %v, %+v; want error %q", tt.name, err, p, tt.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case !reflect.DeepEqual(p.Files, tt.want):
			t.Errorf("%s:\ngot  %+v\nwant %+v", tt.name, p.Files, tt.want)
		}
	}
}

// TestParseFormatPatch reads a `git format-patch` mail series: headers,
// message and diffstat before the diff, the "-- " signature and version
// after it, then the next mail.
func TestParseFormatPatch(t *testing.T) {
	mail := func(sha, file, from, to string) string {
		return "From " + sha + " Mon Sep 17 00:00:00 2001\nFrom: A <a@example.com>\nDate: Sun, 6 Dec 2026 04:10:28 +0000\n" +
			"Subject: [PATCH] change " + file + "\n\nWhy it changes.\n---\n " + file + " | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n\n" +
			"diff --git a/" + file + " b/" + file + "\nindex 587be6b..975fbec 100644\n--- a/" + file + "\n+++ b/" + file + "\n@@ -1,2 +1,2 @@\n " + from + "\n-" + from + "\n+" + to + "\n-- \n2.39.5\n\n"
	}
	text := mail("589ad64d944374bf7f299489af75e7f92d04f1f0", "a.txt", "x", "y") + mail("689ad64d944374bf7f299489af75e7f92d04f1f0", "b.txt", "p", "q")
	p, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []File{
		{Kind: Update, Path: "a.txt", Line: 13, Hunks: []Hunk{{Lines: []Line{{' ', "x"}, {'-', "x"}, {'+', "y"}}, OldStart: 1, Unified: true, Line: 15}}},
		{Kind: Update, Path: "b.txt", Line: 34, Hunks: []Hunk{{Lines: []Line{{' ', "p"}, {'-', "p"}, {'+', "q"}}, OldStart: 1, Unified: true, Line: 36}}},
	}
	if !reflect.DeepEqual(p.Files, want) {
		t.Errorf("got  %+v\nwant %+v", p.Files, want)
	}
	// The signature with its trailing space stripped, and no version.
	p, err = Parse("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n--\n")
	if err != nil || len(p.Files[0].Hunks[0].Lines) != 2 {
		t.Errorf("signature without its space: %v %+v", err, p)
	}
	// Within a hunk's counts "-- " is a removed line "- ".
	p, err = Parse("--- a/f\n+++ b/f\n@@ -1,2 +1 @@\n-- \n-a\n+b\n")
	if err != nil || !reflect.DeepEqual(p.Files[0].Hunks[0].Old(), []string{"- ", "a"}) {
		t.Errorf("a removed line '- ': %v %+v", err, p)
	}
}

// TestParseQuotedPaths reads git's C-quoted names in every header that
// carries one.
func TestParseQuotedPaths(t *testing.T) {
	tests := []struct{ text, path, moveTo string }{
		{"diff --git \"a/caf\\303\\251.txt\" \"b/caf\\303\\251.txt\"\nindex 587be6b..975fbec 100644\n--- \"a/caf\\303\\251.txt\"\n+++ \"b/caf\\303\\251.txt\"\n@@ -1 +1 @@\n-x\n+y\n",
			"caf\u00e9.txt", ""},
		{"--- \"a/tab\\there\"\n+++ \"b/tab\\there\"\n@@ -1 +1 @@\n-x\n+y\n", "tab\there", ""},
		{"--- \"a/q\\\"uote\\\\back\\nline\"\t2026-01-01\n+++ \"b/q\\\"uote\\\\back\\nline\"\n@@ -1 +1 @@\n-x\n+y\n", "q\"uote\\back\nline", ""},
		{"diff --git a/x \"b/caf\\303\\251\"\nsimilarity index 100%\nrename from x\nrename to \"caf\\303\\251\"\n", "x", "caf\u00e9"},
		{"diff --git \"a/caf\\303\\251\" \"b/caf\\303\\251\"\nnew file mode 100644\nindex 0000000..e69de29\n", "caf\u00e9", ""},
		{"diff --git \"a/\\001ctl\" \"b/\\001ctl\"\ndeleted file mode 100644\nindex e69de29..0000000\n", "\x01ctl", ""},
	}
	for _, tt := range tests {
		p, err := Parse(tt.text)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.text, err)
			continue
		}
		if f := p.Files[0]; f.Path != tt.path || f.MoveTo != tt.moveTo {
			t.Errorf("Parse(%q): path %q move to %q, want %q %q", tt.text, f.Path, f.MoveTo, tt.path, tt.moveTo)
		}
	}
	for _, bad := range []string{
		"--- \"a/x\n+++ b/x\n@@ -1 +1 @@\n-x\n+y\n",
		"--- \"a/\\q\"\n+++ b/x\n@@ -1 +1 @@\n-x\n+y\n",
		"--- \"a/\\30\"\n+++ b/x\n@@ -1 +1 @@\n-x\n+y\n",
	} {
		if _, err := Parse(bad); err == nil || !strings.Contains(err.Error(), "is not closed or has an unknown escape") {
			t.Errorf("Parse(%q): %v", bad, err)
		}
	}
}

// TestParseV4AMarkersAsContext reads V4A lines as the reference grammar
// does: a line starting with a space is context even when it looks like
// a marker, and blank lines before the first hunk are nothing, while
// those that open or close a hunk may be separators.
func TestParseV4AMarkersAsContext(t *testing.T) {
	tests := []struct {
		name, body string
		want       []Hunk
	}{
		{"markers quoted as context", "*** Update File: doc.md\n@@\n Example:\n @@ def f():\n- *** End Patch\n+ *** End of File\n *** Update File: x\n",
			[]Hunk{{Lines: []Line{{' ', "Example:"}, {' ', "@@ def f():"}, {'-', " *** End Patch"}, {'+', " *** End of File"}, {' ', "*** Update File: x"}}, Line: 3}}},
		{"blank lines before the first @@", "*** Update File: doc.md\n\n  \n@@ f\n-a\n+b\n",
			[]Hunk{{Anchors: []string{"f"}, Lines: []Line{{'-', "a"}, {'+', "b"}}, Line: 5}}},
		{"blank lines between hunks and sections", "*** Update File: doc.md\n@@\n-a\n+b\n\n@@\n\n-c\n+d\n\n\n*** Delete File: z\n",
			[]Hunk{{Lines: []Line{{'-', "a"}, {'+', "b"}, {' ', ""}}, Line: 3, SoftTrail: 1},
				{Lines: []Line{{' ', ""}, {'-', "c"}, {'+', "d"}, {' ', ""}, {' ', ""}}, Line: 7, SoftLead: 1, SoftTrail: 2}}},
		{"blank line inside a hunk", "*** Update File: doc.md\n@@\n a\n\n-b\n",
			[]Hunk{{Lines: []Line{{' ', "a"}, {' ', ""}, {'-', "b"}}, Line: 3}}},
	}
	for _, tt := range tests {
		p, err := Parse("*** Begin Patch\n" + tt.body + "*** End Patch\n")
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !reflect.DeepEqual(p.Files[0].Hunks, tt.want) {
			t.Errorf("%s:\ngot  %+v\nwant %+v", tt.name, p.Files[0].Hunks, tt.want)
		}
	}
	h := Hunk{Lines: []Line{{' ', ""}, {'-', "c"}, {' ', ""}}, SoftLead: 1, SoftTrail: 1}
	if got := h.WithoutSoft(); !reflect.DeepEqual(got.Lines, []Line{{'-', "c"}}) || got.SoftLead+got.SoftTrail != 0 {
		t.Errorf("WithoutSoft = %+v", got)
	}
	// Blank lines after an added file separate it from the next section.
	p, err := Parse("*** Begin Patch\n*** Add File: a\n+x\n\n\n*** Add File: b\n+y\n\n*** End Patch\n")
	if err != nil || p.Files[0].Content != "x\n" || p.Files[1].Content != "y\n" {
		t.Errorf("blank lines after added files: %v %+v", err, p)
	}
}

// quoteC quotes s as git does for a name with special bytes.
func quoteC(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			b.WriteString(`\n`)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// FuzzUnquoteC checks that every name git can quote reads back as it was,
// with what follows the closing quote, and that no input panics.
func FuzzUnquoteC(f *testing.F) {
	f.Add("caf\u00e9.txt", "\t2026")
	f.Add("q\"uote\\back\nline\ttab\x01", "")
	f.Add("\"", " b/x")
	f.Fuzz(func(t *testing.T, name, rest string) {
		got, after, ok := unquoteC(quoteC(name) + rest)
		if !ok || got != name || after != rest {
			t.Fatalf("unquoteC(quoteC(%q)+%q) = %q, %q, %v", name, rest, got, after, ok)
		}
		unquoteC(name)
		unquoteC(`"` + name)
	})
}
