package glob

import (
	"errors"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		pattern string
		want    error
	}{
		{"", ErrInvalid},
		{"/etc/*", ErrAbsolute},
		{"C:/x", ErrAbsolute},
		{"../*.go", ErrInvalid},
		{"a/../b", ErrInvalid},
		{"{../x,y}", ErrInvalid},
		{"{/x,y}", ErrAbsolute},
		{"[abc", ErrInvalid},
		{"a[]b", ErrInvalid},
		{"a}b", ErrInvalid},
		{"{a,b", ErrInvalid},
		{".", ErrInvalid},
		{"./", ErrInvalid},
		{"x\\", ErrInvalid},
		{"{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}", ErrInvalid},
		{"a\x00b", ErrInvalid},
	}
	for _, tt := range tests {
		_, err := Compile(tt.pattern)
		if !errors.Is(err, tt.want) {
			t.Errorf("Compile(%q) error = %v, want %v", tt.pattern, err, tt.want)
		}
	}
}

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"*.go", "main.go", true},
		{"*.go", "sub/main.go", false},
		{"**/*.go", "main.go", true},
		{"**/*.go", "a/b/c/main.go", true},
		{"**/*.go", "a/b/c/main.goo", false},
		{"src/**/*.go", "src/x.go", true},
		{"src/**/*.go", "src/a/b/x.go", true},
		{"src/**/*.go", "lib/a/x.go", false},
		{"src/**", "src", true},
		{"src/**", "src/a/b", true},
		{"**", "a/b/c", true},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/**/b", "a/x/b", true},
		{"?.txt", "a.txt", true},
		{"?.txt", "ab.txt", false},
		{"?", "/", false},
		{"*", "a/b", false},
		{"a*b", "a/b", false},
		{"**.go", "a/b.go", false}, // "**" inside a component is a plain "*"
		{"**.go", "b.go", true},
		{"[abc].go", "b.go", true},
		{"[!abc].go", "b.go", false},
		{"[!abc].go", "d.go", true},
		{"[^abc].go", "b.go", false},
		{"[^abc].go", "d.go", true},
		{"[a-c]x", "bx", true},
		{"[a-c]x", "dx", false},
		{"*.{ts,tsx}", "a.tsx", true},
		{"*.{ts,tsx}", "a.ts", true},
		{"*.{ts,tsx}", "a.js", false},
		{"{src/*.go,lib/**/*.c}", "lib/x/y.c", true},
		{"{src/*.go,lib/**/*.c}", "src/y.go", true},
		{"{src/*.go,lib/**/*.c}", "src/x/y.go", false},
		{"a\\*b", "a*b", true},
		{"a\\*b", "axb", false},
		{"./src/*.go", "src/a.go", true},
		{"src//*.go", "src/a.go", true},
		{"src/", "src", true},
		{"Main.go", "main.go", false},
		{"*", ".hidden", true},
		{"héllo/*", "héllo/x", true},
		{"[é]", "é", true},
	}
	for _, tt := range tests {
		p, err := Compile(tt.pattern)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tt.pattern, err)
		}
		if got := p.Match(tt.name); got != tt.want {
			t.Errorf("Compile(%q).Match(%q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestDirOnly(t *testing.T) {
	for pattern, want := range map[string]bool{"src/": true, "src/*/": true, "src": false, "**": false} {
		p, err := Compile(pattern)
		if err != nil {
			t.Fatal(err)
		}
		if p.DirOnly() != want {
			t.Errorf("Compile(%q).DirOnly() = %v, want %v", pattern, p.DirOnly(), want)
		}
	}
}

func TestCanDescend(t *testing.T) {
	tests := []struct {
		pattern, dir string
		want         bool
	}{
		{"*.go", "src", false},
		{"**/*.go", "src", true},
		{"**/*.go", "a/b/c", true},
		{"src/*.go", "src", true},
		{"src/*.go", "lib", false},
		{"src/*.go", "src/a", false},
		{"src/**", "src/a/b", true},
		{"src/**", "lib", false},
		{"{src,lib}/*.go", "lib", true},
		{"{src,lib}/*.go", "doc", false},
		{"*/x", "anything", true},
		{"a/**/b", "a/q/r", true},
	}
	for _, tt := range tests {
		p, err := Compile(tt.pattern)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tt.pattern, err)
		}
		if got := p.CanDescend(tt.dir); got != tt.want {
			t.Errorf("Compile(%q).CanDescend(%q) = %v, want %v", tt.pattern, tt.dir, got, tt.want)
		}
	}
}

// FuzzCompile checks that compiling and matching never panic, and that
// CanDescend never prunes a directory holding a match.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{"**/*.go", "a/{b,c}/[!x]?", "[^a-z]", "{a,{b,c}}", "a\\", "src/**/", "[]]"} {
		f.Add(s, "a/b/c.go")
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		p, err := Compile(pattern)
		if err != nil {
			return
		}
		if name == "" {
			return
		}
		if p.Match(name) {
			for i := len(name) - 1; i > 0; i-- {
				if name[i] == '/' && !p.CanDescend(name[:i]) {
					t.Fatalf("Compile(%q): %q matches but CanDescend(%q) is false", pattern, name, name[:i])
				}
			}
		}
	})
}

// TestStateSteps checks that a State stepped one component at a time
// agrees with Match and CanDescend at every prefix of the path, including
// patterns with more positions than one word of the State holds.
func TestStateSteps(t *testing.T) {
	long := "a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/w/x/y/z/*.go"
	tests := []struct {
		pattern string
		path    string
	}{
		{"**/*.go", "src/a/b/main.go"},
		{"src/**/test_*.py", "src/x/y/test_a.py"},
		{"{a,b}/**/{c,d}*", "b/q/r/dd"},
		{"*.{go,md}", "x.md"},
		{"{" + long + "," + long + "," + long + "}", "a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/w/x/y/z/main.go"},
		{"a/**/**/b", "a/x/y/b"},
		{"*", "x"},
	}
	for _, tt := range tests {
		p, err := Compile(tt.pattern)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tt.pattern, err)
		}
		st := p.Start()
		parts := strings.Split(tt.path, "/")
		for i, part := range parts {
			st = st.Step(part)
			prefix := strings.Join(parts[:i+1], "/")
			if st.Matched() != p.Match(prefix) {
				t.Errorf("%q: State at %q Matched() = %v, Match = %v", tt.pattern, prefix, st.Matched(), p.Match(prefix))
			}
			if st.Alive() != p.CanDescend(prefix) {
				t.Errorf("%q: State at %q Alive() = %v, CanDescend = %v", tt.pattern, prefix, st.Alive(), p.CanDescend(prefix))
			}
		}
		if !st.Matched() {
			t.Errorf("%q: %q does not match", tt.pattern, tt.path)
		}
	}
	var zero State
	if zero.Step("x").Matched() || zero.Alive() {
		t.Error("the zero State matches")
	}
}

func TestComponentKinds(t *testing.T) {
	tests := []struct {
		c    string
		kind compKind
	}{
		{"**", compSpan},
		{"*", compAny},
		{"main.go", compLiteral},
		{"*.go", compSuffix},
		{"test_*", compPrefix},
		{"*_test.*", compGlob},
		{"a?c", compGlob},
		{"[ab].go", compGlob},
		{"\\*.go", compGlob},
		{"**.go", compGlob},
	}
	for _, tt := range tests {
		if got := compile(tt.c).kind; got != tt.kind {
			t.Errorf("compile(%q).kind = %d, want %d", tt.c, got, tt.kind)
		}
	}
}

// FuzzComponent checks that the fast component matchers agree with
// doublestar on every component and name.
func FuzzComponent(f *testing.F) {
	for _, s := range []string{"*.go", "test_*", "main.go", "*", "*é", "x\xff*", "*\ufffd", "\ufffd*", "a\ufffd", "*é.go"} {
		// Names not valid UTF-8: an invalid byte is U+FFFD to doublestar.
		for _, name := range []string{"main.go", "test_x", "\xff.go", "a\xff", "\xffx", "\xc3é.go", "\xe2\x82.go", "test_\xff"} {
			f.Add(s, name)
		}
	}
	f.Fuzz(func(t *testing.T, c, name string) {
		if c == "" || c == "**" || strings.Contains(c, "/") || strings.Contains(name, "/") || !doublestar.ValidatePattern(c) {
			return
		}
		want, _ := doublestar.Match(c, name)
		if got := compile(c).match(name); got != want {
			t.Fatalf("component %q on %q: %v, doublestar says %v", c, name, got, want)
		}
	})
}
