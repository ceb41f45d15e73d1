package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/tools/internal/textsearch"
)

// splitView is a local backend whose host path, where ripgrep searches,
// is another directory than the one it reads: it stands for a swap that
// sends ripgrep somewhere else between fencefs's check and ripgrep's
// open, deterministically.
type splitView struct {
	backend.Backend
	host    string
	openErr map[string]error
}

func (v *splitView) LocalPath(name string) (string, bool) {
	return filepath.Join(v.host, filepath.FromSlash(name)), true
}

func (v *splitView) OpenRead(ctx context.Context, name string) (backend.FileReader, error) {
	if err := v.openErr[name]; err != nil {
		return nil, err
	}
	return v.Backend.OpenRead(ctx, name)
}

// rgOnly matches "match" for ripgrep but does not compile in Go, which
// caps repeat counts at 1000: a file shown with it was shown from ripgrep's lines, not searched
// again by the built-in engine.
const rgOnly = "matchy{0,1001}"

func TestGrepVerifiesRipgrepLines(t *testing.T) {
	needRG(t)
	long := "match " + strings.Repeat("x", 600)
	longShown := "f.txt:1:" + textsearch.Display([]byte(long), 0)
	tests := []struct {
		name         string
		inside, host string
		kv           []any
		openErr      error
		want         string
	}{
		{"same", "a match\n", "a match\n", []any{"pattern", rgOnly}, nil, "f.txt:1:a match"},
		{"same single file", "a match\n", "a match\n", []any{"pattern", rgOnly, "path", "f.txt"}, nil, "f.txt:1:a match"},
		{"other line searched again", "inside match\n", "secret match\n", []any{"pattern", "match"}, nil, "f.txt:1:inside match"},
		{"other line single file", "inside match\n", "secret match\n", []any{"pattern", "match", "path", "f.txt"}, nil, "f.txt:1:inside match"},
		{"other line, pattern only ripgrep knows", "inside match\n", "secret match\n", []any{"pattern", rgOnly}, nil, "No matches found."},
		{"no match inside", "x\ny\n", "x\nsecret match\n", []any{"pattern", "match"}, nil, "No matches found."},
		{"inside is shorter", "a\n", "a\nb\nmatch\n", []any{"pattern", "match"}, nil, "No matches found."},
		{"context line differs", "c1\nmatch\nc3\n", "c1\nmatch\nSECRET\n", []any{"pattern", "match", "context", 1},
			nil, "f.txt-1-c1\nf.txt:2:match\nf.txt-3-c3"},
		// Context lines are read through the backend, never taken from
		// ripgrep: the match agrees, so the file is shown with its own.
		{"context line differs, pattern only ripgrep knows", "c1\nmatch\nc3\n", "SECRET\nmatch\nc3\n", []any{"pattern", rgOnly, "context", 1},
			nil, "f.txt-1-c1\nf.txt:2:match\nf.txt-3-c3"},
		{"long line", long + "\n", long + "\n", []any{"pattern", rgOnly}, nil, longShown},
		{"long line differing past the cut", long + "inside\n", long + "SECRET\n", []any{"pattern", rgOnly}, nil, longShown},
		{"invalid UTF-8", "\xff match\n", "\xff match\n", []any{"pattern", rgOnly}, nil, "f.txt:1:\uFFFD match"},
		{"invalid UTF-8 differs", "\xfe match\n", "\xff match\n", []any{"pattern", "match"}, nil, "f.txt:1:\uFFFD match"},
		{"CRLF, no final newline", "one\r\nmatch\r\nlast match", "one\r\nmatch\r\nlast match", []any{"pattern", rgOnly},
			nil, "f.txt:2:match\r\nf.txt:3:last match"},
		{"UTF-8 byte order mark", "\xef\xbb\xbfa match\n", "\xef\xbb\xbfa match\n", []any{"pattern", rgOnly}, nil, "f.txt:1:a match"},
		{"unreadable now", "a match\n", "a match\n", []any{"pattern", "match"}, backend.ErrSymlink, "No matches found."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := localFixture(t)
			fx.put(t, "f.txt", tt.inside)
			host := t.TempDir()
			if err := os.WriteFile(filepath.Join(host, "f.txt"), []byte(tt.host), 0o644); err != nil {
				t.Fatal(err)
			}
			v := &splitView{Backend: fx.b, host: host, openErr: map[string]error{}}
			if tt.openErr != nil {
				v.openErr["f.txt"] = tt.openErr
			}
			s := newSet(t, v, Options{Tools: AllTools()})
			wantEqual(t, ok(t, s, nameGrep, tt.kv...), tt.want)
		})
	}
}

func TestGrepVerifiesEachFile(t *testing.T) {
	needRG(t)
	fx := localFixture(t)
	host := t.TempDir()
	for name, data := range map[string][2]string{
		"d/a.txt": {"match a\n", "match a\n"},
		"d/b.txt": {"match b\n", "match SECRET\n"},
		"d/c.txt": {"match c\n", "match c\n"},
	} {
		fx.put(t, name, data[0])
		if err := os.MkdirAll(filepath.Join(host, "d"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(host, filepath.FromSlash(name)), []byte(data[1]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := newSet(t, &splitView{Backend: fx.b, host: host}, Options{Tools: AllTools()})
	wantEqual(t, ok(t, s, nameGrep, "pattern", "match", "path", "d"), "d/a.txt:1:match a\nd/b.txt:1:match b\nd/c.txt:1:match c")
	wantEqual(t, ok(t, s, nameGrep, "pattern", rgOnly, "path", "d"), "d/a.txt:1:match a\nd/c.txt:1:match c")
}

func TestLineVerifier(t *testing.T) {
	line := func(n int, text string) textsearch.Line { return textsearch.Line{Number: n, Text: text} }
	long := strings.Repeat("é", 700)
	tests := []struct {
		name  string
		data  string
		lines []textsearch.Line
		want  bool
	}{
		{"none", "", nil, true},
		{"first", "a\nb\n", []textsearch.Line{line(1, "a")}, true},
		{"last without newline", "a\nb", []textsearch.Line{line(2, "b")}, true},
		{"empty line", "a\n\nb\n", []textsearch.Line{line(2, "")}, true},
		{"several", "a\nb\nc\nd\n", []textsearch.Line{line(1, "a"), line(3, "c"), line(4, "d")}, true},
		{"differs", "a\nb\n", []textsearch.Line{line(1, "a"), line(2, "x")}, false},
		{"past the end", "a\n", []textsearch.Line{line(2, "")}, false},
		{"out of order", "a\nb\n", []textsearch.Line{line(2, "b"), line(1, "a")}, false},
		{"repeated", "a\nb\n", []textsearch.Line{line(1, "a"), line(1, "a")}, false},
		{"carriage return kept", "a\r\n", []textsearch.Line{line(1, "a\r")}, true},
		{"long line cut", long + "\nz\n", []textsearch.Line{line(1, textsearch.Display([]byte(long), 0)), line(2, "z")}, true},
		{"long line shown whole", long, []textsearch.Line{line(1, long)}, false},
		{"line over the buffer", strings.Repeat("x", 3*verifyBuffer) + "\nz\n", []textsearch.Line{line(2, "z")}, true},
		{"byte order mark", "\xef\xbb\xbfa\n", []textsearch.Line{line(1, "a")}, true},
		{"byte order mark past line 1", "a\n\xef\xbb\xbfb\n", []textsearch.Line{line(2, "b")}, false},
		{"invalid UTF-8", "\xff\n", []textsearch.Line{line(1, "\uFFFD")}, true},
		{"NUL in the first 8192 bytes", "a\n" + strings.Repeat("x", 8000) + "\x00", []textsearch.Line{line(1, "a")}, false},
		{"NUL past 8192 bytes", "a\n" + strings.Repeat("x", 8200) + "\x00", []textsearch.Line{line(1, "a")}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newMemFS()
			if err := backend.WriteFile(t.Context(), fs, "f", []byte(tt.data), backend.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			v := newLineVerifier(fs)
			for range 2 { // the second run reuses the buffer
				got, same, err := v.show(t.Context(), "f", tt.lines, 0)
				if err != nil || same != tt.want {
					t.Fatalf("show = %v, %v; want %v", same, err, tt.want)
				}
				if !same {
					continue
				}
				if len(got) != len(tt.lines) {
					t.Fatalf("show = %+v, want %+v", got, tt.lines)
				}
				for i, l := range got {
					if l.Number != tt.lines[i].Number || l.Text != tt.lines[i].Text || !l.Match {
						t.Fatalf("show = %+v, want %+v", got, tt.lines)
					}
				}
			}
		})
	}
}

func TestLineVerifierErrors(t *testing.T) {
	v := newLineVerifier(newMemFS())
	if _, _, err := v.show(t.Context(), "missing", []textsearch.Line{{Number: 1}}, 0); err == nil {
		t.Fatal("show of a missing file: no error")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	fs := newMemFS()
	if err := backend.WriteFile(t.Context(), fs, "f", []byte("a\n"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := newLineVerifier(fs).show(ctx, "f", []textsearch.Line{{Number: 1, Text: "a"}}, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("show after cancel: %v, want context.Canceled", err)
	}
}

// TestLineVerifierContext reads the context lines around ripgrep's
// matches from the file.
func TestLineVerifierContext(t *testing.T) {
	fs := newMemFS()
	data := "\xef\xbb\xbf1\n2\n3\n4\n5\n6\n7\n8\n9"
	if err := backend.WriteFile(t.Context(), fs, "f", []byte(data), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	m := func(ns ...int) []textsearch.Line {
		var ls []textsearch.Line
		for _, n := range ns {
			ls = append(ls, textsearch.Line{Number: n, Text: strconv.Itoa(n), Match: true})
		}
		return ls
	}
	for _, tt := range []struct {
		matches []int
		context int
		want    string
	}{
		{[]int{3, 4, 8}, 1, "2- 3: 4: 5- 7- 8: 9-"},
		{[]int{2}, 3, "1- 2: 3- 4- 5-"},
		{[]int{9}, 2, "7- 8- 9:"},
		{[]int{1, 9}, 0, "1: 9:"},
		{[]int{5}, 10, "1- 2- 3- 4- 5: 6- 7- 8- 9-"},
	} {
		got, same, err := newLineVerifier(fs).show(t.Context(), "f", m(tt.matches...), tt.context)
		var parts []string
		for _, l := range got {
			sep := "-"
			if l.Match {
				sep = ":"
			}
			parts = append(parts, l.Text+sep)
		}
		if err != nil || !same || strings.Join(parts, " ") != tt.want {
			t.Errorf("matches %v context %d: %q, %v, %v; want %q", tt.matches, tt.context, strings.Join(parts, " "), same, err, tt.want)
		}
	}
}

// TestGrepFallsBackWhenRipgrepRunsOutOfMemory bounds rg's memory below
// what a 100 MB line needs: grep answers through the built-in engine,
// for a directory and for the file alone, with every file's lines.
func TestGrepFallsBackWhenRipgrepRunsOutOfMemory(t *testing.T) {
	needRG(t)
	if runtime.GOOS != "linux" {
		t.Skip("rg's memory is bounded on Linux only")
	}
	fx := localFixture(t)
	long := strings.Repeat("a", 100<<20)
	fx.put(t, "d/a.txt", "match a\n")
	fx.put(t, "d/long.txt", long+"\nmatch after\n")
	fx.put(t, "d/z.txt", "match z\n")
	s := newSet(t, fx.b, Options{Tools: AllTools(), RipgrepMaxMemory: 64 << 20})
	cut := textsearch.Display([]byte(long), 0)
	wantEqual(t, ok(t, s, nameGrep, "pattern", "a", "path", "d"),
		"d/a.txt:1:match a\nd/long.txt:1:"+cut+"\nd/long.txt:2:match after\nd/z.txt:1:match z")
	wantEqual(t, ok(t, s, nameGrep, "pattern", "after", "path", "d/long.txt", "context", 1),
		"d/long.txt-1-"+cut+"\nd/long.txt:2:match after")
}
