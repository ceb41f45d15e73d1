package policy

import (
	"errors"
	"strings"
	"testing"
)

func TestNormalizePattern(t *testing.T) {
	tests := []struct {
		kind    PatternKind
		in      string
		want    string
		wantErr string
	}{
		{DeniedPattern, "private", "private", ""},
		{DeniedPattern, "/ws/private", "ws/private", ""},
		{DeniedPattern, "///ws//private", "ws/private", ""},
		{DeniedPattern, "./private", "private", ""},
		{DeniedPattern, "private/", "private", ""},
		{ProtectedPattern, "/ws/notes.md", "ws/notes.md", ""},
		{AllowedPattern, "/ws/**", "ws/**", ""},
		{AllowedPattern, "src/", "src/**", ""},
		{AllowedPattern, "*.go", "*.go", ""},
		{DeniedPattern, "**/.env", "**/.env", ""},
		{DeniedPattern, ".*", ".*", ""},
		{DeniedPattern, "/", "", "names the namespace root"},
		{DeniedPattern, "./", "", "names the namespace root"},
		{DeniedPattern, ".", "", "names the namespace root"},
		{DeniedPattern, "a/../b", "", "a '..' component can match nothing"},
		{DeniedPattern, "a/./b", "", "a '.' component can match nothing"},
		{DeniedPattern, "../x", "", "a '..' component can match nothing"},
		{DeniedPattern, "", "", "empty pattern"},
		{DeniedPattern, "a\x00", "", "NUL byte"},
	}
	for _, tt := range tests {
		got, err := NormalizePattern(tt.kind, tt.in)
		if tt.wantErr != "" {
			var pe *PatternError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("NormalizePattern(%s, %q) = %q, %v; want an error saying %q", tt.kind, tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("NormalizePattern(%s, %q) = %q, %v; want %q", tt.kind, tt.in, got, err, tt.want)
		}
	}
}

// A normalized pattern works where its canonical spelling does: the
// spellings of the operators deny what they name.
func TestNewRulesNormalizes(t *testing.T) {
	r, err := NewRules([]string{"/ws/**"}, []string{"/ws/private", "./ref/private", "tmp/"}, []string{"/ws/notes.md"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"ws/private/x", "ref/private", "tmp/a/b"} {
		if r.CheckRead(p, p) == nil {
			t.Errorf("CheckRead(%q) allowed; want it denied", p)
		}
	}
	if err := r.CheckWrite("ws/notes.md", "ws/notes.md"); err == nil {
		t.Errorf("CheckWrite(ws/notes.md) allowed; want it protected")
	}
	if err := r.CheckRead("ws/a.txt", "ws/a.txt"); err != nil {
		t.Errorf("CheckRead(ws/a.txt) = %v; want it allowed", err)
	}
	if _, err := NewRules(nil, []string{"a/../b"}, nil); err == nil {
		t.Errorf("NewRules accepted a pattern with '..'")
	}
}

// FuzzNormalizePattern checks that a normalized pattern is canonical, and
// that normalizing it again changes nothing.
func FuzzNormalizePattern(f *testing.F) {
	for _, s := range []string{"/ws/private", "./a/", "a//b", "src/", "..", "a/./b", "**/x/", "/", "[a/]b"} {
		f.Add(uint8(0), s)
		f.Add(uint8(1), s)
	}
	f.Fuzz(func(t *testing.T, k uint8, p string) {
		kind := PatternKind(k % 3)
		got, err := NormalizePattern(kind, p)
		if err != nil {
			return
		}
		if ValidatePattern(got) != nil || strings.HasPrefix(got, "/") || strings.HasSuffix(got, "/") || strings.Contains(got, "//") {
			t.Fatalf("NormalizePattern(%s, %q) = %q, not canonical", kind, p, got)
		}
		for _, c := range strings.Split(got, "/") {
			if c == "." || c == ".." {
				t.Fatalf("NormalizePattern(%s, %q) = %q, with a %q component", kind, p, got, c)
			}
		}
		again, err := NormalizePattern(kind, got)
		if err != nil || again != got {
			t.Fatalf("NormalizePattern(%s, %q) = %q, %v; want it unchanged", kind, got, again, err)
		}
	})
}
