package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestEditFile(t *testing.T) {
	tests := []struct {
		name    string
		content string
		args    []any
		want    string
		lines   string
	}{
		{"single pair", "Hello\nWorld\n", []any{"old_text", "World", "new_text", "There"}, "Hello\nThere\n", "line 2"},
		{"replacements in order, each on the previous result", "a b c\n",
			[]any{"replacements", []map[string]string{{"old_text": "a", "new_text": "x a"}, {"old_text": "x a b", "new_text": "y"}}}, "y c\n", "line 1"},
		{"list of one", "abc\n", []any{"replacements", []map[string]string{{"old_text": "b", "new_text": "B"}}}, "aBc\n", "line 1"},
		{"dollar is literal", "price\n", []any{"old_text", "price", "new_text", "$1 ${x} $$ \\1"}, "$1 ${x} $$ \\1\n", "line 1"},
		{"CRLF survives", "a\r\nb\r\nc\r\n", []any{"old_text", "b", "new_text", "B"}, "a\r\nB\r\nc\r\n", "line 2"},
		{"LF old_text matches a CRLF file", "a\r\nb\r\nc\r\n", []any{"old_text", "a\nb", "new_text", "x\ny"}, "x\r\ny\r\nc\r\n", "lines 1-2"},
		{"BOM kept", "\ufeffhello\n", []any{"old_text", "hello", "new_text", "bye"}, "\ufeffbye\n", "line 1"},
		{"tabs preserved", "func f() {\n\treturn 1\n}\n", []any{"old_text", "\treturn 1", "new_text", "\treturn 2\n\t// two"}, "func f() {\n\treturn 2\n\t// two\n}\n", "lines 2-3"},
		{"no trailing newline added", "a\nb", []any{"old_text", "b", "new_text", "c"}, "a\nc", "line 2"},
		{"no trailing newline removed", "a\nb\n", []any{"old_text", "a\n", "new_text", ""}, "b\n", "line 1"},
		{"empty new_text deletes", "keep drop\n", []any{"old_text", " drop", "new_text", ""}, "keep\n", "line 1"},
		{"unicode", "größe: 1\n", []any{"old_text", "größe: 1", "new_text", "größe: 2"}, "größe: 2\n", "line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forEach(t, func(t *testing.T, fx fixture) {
				fx.put(t, "f.txt", tt.content)
				s := newSet(t, fx.b, Options{})
				got := ok(t, s, "edit_file", append([]any{"path", "f.txt"}, tt.args...)...)
				wantEqual(t, got, "Edited f.txt ("+tt.lines+"). [hash:"+h12(tt.want)+"]")
				wantEqual(t, fx.mustGet(t, "f.txt"), tt.want)
			})
		})
	}
}

func TestEditFileErrors(t *testing.T) {
	many := strings.Repeat("x\n", 12)
	tests := []struct {
		name    string
		content string
		args    []any
		want    string
	}{
		{"empty", "a\n", []any{"old_text", "", "new_text", "b"}, "old_text is empty; old_text must be the exact text to replace."},
		{"whitespace only", "a \n", []any{"old_text", " \n\t", "new_text", "b"}, "old_text is only whitespace; include the surrounding text so the match is unambiguous."},
		{"not found", "a\n", []any{"old_text", "zzz", "new_text", "b"}, "old_text not found in f.txt. No changes were written."},
		{"several", "x = 1\ny = 2\nx = 1\n", []any{"old_text", "x = 1", "new_text", "b"},
			"old_text found 2 times in f.txt (lines 1, 3). Include more surrounding context to make the match unique. No changes were written."},
		{"several on one line", "ab ab\n", []any{"old_text", "ab", "new_text", "c"},
			"old_text found 2 times in f.txt (line 1). Include more surrounding context to make the match unique. No changes were written."},
		{"overlapping matches are ambiguous", "aaa\n", []any{"old_text", "aa", "new_text", "b"},
			"old_text found 2 times in f.txt (line 1). Include more surrounding context to make the match unique. No changes were written."},
		{"at most ten line numbers", many, []any{"old_text", "x", "new_text", "y"},
			"old_text found 12 times in f.txt (lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, ...). Include more surrounding context to make the match unique. No changes were written."},
		{"replacement labels", "a b\n", []any{"replacements", []map[string]string{{"old_text": "a", "new_text": "c"}, {"old_text": "zz", "new_text": "d"}}},
			"replacement 2 not found in f.txt. No changes were written."},
		{"replacement empty label", "a b\n", []any{"replacements", []map[string]string{{"old_text": "", "new_text": "c"}, {"old_text": "b", "new_text": "d"}}},
			"replacement 1 is empty; old_text must be the exact text to replace."},
		{"replacement whitespace label", "a b\n", []any{"replacements", []map[string]string{{"old_text": "a", "new_text": "c"}, {"old_text": "  ", "new_text": "d"}}},
			"replacement 2 is only whitespace; include the surrounding text so the match is unambiguous."},
		{"list of one labels old_text", "a\n", []any{"replacements", []map[string]string{{"old_text": "q", "new_text": "c"}}},
			"old_text not found in f.txt. No changes were written."},
		{"neither", "a\n", nil, "Provide old_text and new_text, or a non-empty replacements list."},
		{"old_text alone", "a\n", []any{"old_text", "a"}, "Provide old_text and new_text, or a non-empty replacements list."},
		{"empty list", "a\n", []any{"replacements", []map[string]string{}}, "Provide old_text and new_text, or a non-empty replacements list."},
		{"both", "a\n", []any{"old_text", "a", "new_text", "b", "replacements", []map[string]string{{"old_text": "a", "new_text": "c"}}},
			"Provide either old_text and new_text or a non-empty replacements list, not both."},
		{"item missing a field", "a\n", []any{"replacements", []map[string]string{{"old_text": "a"}}},
			"Missing required argument 'replacements[0].new_text'."},
		{"item unknown field", "a\n", []any{"replacements", []map[string]string{{"old_text": "a", "new_text": "b", "x": "y"}}},
			"Unknown argument 'replacements[0].x'. Valid arguments: old_text, new_text."},
		{"list of strings", "a\n", []any{"replacements", []string{"a"}},
			"Argument 'replacements[0]' must be an object with old_text and new_text."},
		{"binary", "PK\x00\x03", []any{"old_text", "PK", "new_text", "x"}, "f.txt is a binary file; edit_file only edits text files."},
		{"invalid UTF-8 names the offset", "abc\xffdef\n", []any{"old_text", "abc", "new_text", "x"},
			"f.txt is not valid UTF-8 (invalid byte at offset 3); edit_file only edits UTF-8 text."},
		{"stale expected_hash", "a\n", []any{"old_text", "a", "new_text", "b", "expected_hash", "111111111111"},
			"Conflict: file 'f.txt' has changed (expected hash:111111111111, got hash:" + h12("a\n") + "). Re-read the file and retry."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forEach(t, func(t *testing.T, fx fixture) {
				fx.put(t, "f.txt", tt.content)
				rec := &recorder{}
				s := newSet(t, fx.b, Options{OnEvent: rec.on})
				wantEqual(t, retry(t, s, "edit_file", append([]any{"path", "f.txt"}, tt.args...)...), tt.want)
				wantEqual(t, fx.mustGet(t, "f.txt"), tt.content)
				if len(rec.events) > 0 {
					t.Errorf("failed edit emitted %s", rec.kinds())
				}
			})
		})
	}
}

func TestEditFileTargets(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		fx.mkdir(t, "d")
		s := newSet(t, fx.b, Options{})
		wantEqual(t, retry(t, s, "edit_file", "path", "nope.txt", "old_text", "a", "new_text", "b"), "File not found: nope.txt")
		wantEqual(t, retry(t, s, "edit_file", "path", "d", "old_text", "a", "new_text", "b"), "'d' is a directory, not a file.")
		if _, ok := fx.get(t, "nope.txt"); ok {
			t.Error("edit_file created a missing file")
		}
	})
	fx := localFixture(t)
	if err := syscall.Mkfifo(filepath.Join(fx.dir, "fifo"), 0o644); err == nil {
		s := newSet(t, fx.b, Options{})
		wantEqual(t, retry(t, s, "edit_file", "path", "fifo", "old_text", "a", "new_text", "b"), "File not found: fifo")
	}
}

func TestEditFileEvent(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		fx.put(t, "sub/f.txt", "a\nb\n")
		rec := &recorder{}
		s := newSet(t, fx.b, Options{OnEvent: rec.on})
		ok(t, s, "edit_file", "path", "sub/f.txt", "old_text", "b", "new_text", "c")
		want := FileEdited{
			FileWritten: FileWritten{Path: "sub/f.txt", ContentHash: hashBytes([]byte("a\nc\n"))},
			Diff:        "--- a/sub/f.txt\n+++ b/sub/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c",
		}
		if len(rec.events) != 1 || rec.events[0] != want {
			t.Errorf("events %#v, want %#v", rec.events, want)
		}
	})
}

func TestEditsAreSerializedWithinASet(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		fx.put(t, "log.txt", "END\n")
		s := newSet(t, fx.b, Options{})
		const n = 8
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.Call(context.Background(), "edit_file",
					args(t, "path", "log.txt", "old_text", "END", "new_text", string(rune('a'+i))+"\nEND"))
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
		if got := fx.mustGet(t, "log.txt"); strings.Count(got, "\n") != n+1 {
			t.Errorf("lost edits: %q", got)
		}
		if s.locks.size() != 0 {
			t.Errorf("%d path locks left behind", s.locks.size())
		}
	})
}

func TestEditFileKeepsOtherBytes(t *testing.T) {
	fx := localFixture(t)
	content := "\ufeffline one\r\n\tindented\r\nno newline at end"
	os.WriteFile(filepath.Join(fx.dir, "w.txt"), []byte(content), 0o600)
	s := newSet(t, fx.b, Options{})
	ok(t, s, "edit_file", "path", "w.txt", "old_text", "indented", "new_text", "INDENTED")
	wantEqual(t, fx.mustGet(t, "w.txt"), strings.Replace(content, "indented", "INDENTED", 1))
	if fi, _ := os.Stat(filepath.Join(fx.dir, "w.txt")); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
}

// naiveStarts is the reference search: every overlapping occurrence.
func naiveStarts(text, sub string) []int {
	var out []int
	for i := 0; i+len(sub) <= len(text); i++ {
		if text[i:i+len(sub)] == sub && utf8.RuneStart(text[i]) {
			out = append(out, i)
		}
	}
	return out
}

// naiveApply is the reference for one exact replacement, with the CRLF
// retry: the new text, or ok false when old does not occur exactly once.
func naiveApply(text, old, repl string) (string, bool) {
	starts := naiveStarts(text, old)
	if len(starts) == 0 {
		if c := crlfText(old); c != old {
			if starts = naiveStarts(text, c); len(starts) > 0 {
				old, repl = c, crlfText(repl)
			}
		}
	}
	if len(starts) != 1 {
		return "", false
	}
	return text[:starts[0]] + repl + text[starts[0]+len(old):], true
}

func FuzzApplyEdit(f *testing.F) {
	f.Add("Hello\nWorld\n", "World", "There")
	f.Add("a\r\nb\r\n", "a\nb", "c\nd")
	f.Add("aaa", "aa", "b")
	f.Add("\ufeffx", "x", "$1")
	f.Add("\xff\xfe", "\xfe", "")
	f.Fuzz(func(t *testing.T, text, old, repl string) {
		checkEdits(t, text, []replacement{{old, repl}})
	})
}

// FuzzApplyEdits checks two replacements in a row, so the second one
// searches a text made of several pieces.
func FuzzApplyEdits(f *testing.F) {
	f.Add("Hello\nWorld\n", "World", "There", "There", "x")
	f.Add("a\r\nb\r\n", "a\nb", "c\nd", "d", "")
	f.Add("aaa", "aa", "b", "a", "ba")
	f.Add("abcabc", "ca", "XY", "bX", "Z")
	f.Fuzz(func(t *testing.T, text, old1, new1, old2, new2 string) {
		checkEdits(t, text, []replacement{{old1, new1}, {old2, new2}})
	})
}

// checkEdits compares applyEdits with the naive reference.
func checkEdits(t *testing.T, text string, edits []replacement) {
	t.Helper()
	if !utf8.ValidString(text) {
		return
	}
	got, err := applyEdits(context.Background(), text, edits, "f", false)
	want, ok := text, true
	for _, e := range edits {
		if !ok {
			break
		}
		if strings.TrimFunc(e.OldText, unicode.IsSpace) == "" {
			ok = false
			break
		}
		want, ok = naiveApply(want, e.OldText, e.NewText)
	}
	if err != nil {
		if !IsRetry(err) {
			t.Fatalf("non-retry error %v", err)
		}
		if ok {
			t.Fatalf("edits %q on %q refused (%v); want %q", edits, text, err, want)
		}
		return
	}
	if !ok {
		t.Fatalf("edits %q on %q accepted as %q; want a refusal", edits, text, got.text)
	}
	if got.text != want {
		t.Fatalf("edits %q on %q: got %q, want %q", edits, text, got.text, want)
	}
}
