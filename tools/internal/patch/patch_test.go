package patch

import (
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
			for _, h := range f.Hunks {
				if len(h.Lines) == 0 {
					t.Fatalf("an empty hunk in %+v", f)
				}
			}
		}
	})
}
