package glob

import (
	"errors"
	"testing"
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
