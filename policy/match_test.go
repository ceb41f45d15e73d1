package policy

import (
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"*.py", "src/main.py", true}, // "*" spans "/"
		{"*.py", "main.py", true},
		{"*.py", "main.pyc", false},
		{"src/*", "src/a/b", true},
		{"?", "a", true},
		{"?", "é", true}, // one character, not one byte
		{"?", "ab", false},
		{"?", "", false},
		{"a?c", "a/c", true},
		{"[abc]", "b", true},
		{"[abc]", "d", false},
		{"[!abc]", "d", true},
		{"[!abc]", "a", false},
		{"[^abc]", "d", true}, // "^" negates like "!"
		{"[^abc]", "^", true},
		{"[^abc]", "a", false},
		{"[a-c]", "b", true},
		{"[a-c]", "-", false},
		{"[a-]", "-", true}, // trailing "-" is a member
		{"[-a]", "-", true}, // leading "-" is a member
		{"[z-a]", "z", false},
		{"[z-a]", "a", false},
		{"[!z-a]", "q", true}, // negated empty range matches anything
		{"[]]", "]", true},
		{"[!]]", "]", false},
		{"[!]]", "a", true},
		{"[", "[", true}, // unmatched "[" is a literal
		{"[a", "[a", true},
		{"a[]b", "a[]b", true},
		{"[]", "[]", true},
		{`\`, `\`, true}, // backslash is literal
		{`a\*b`, `a\xyzb`, true},
		{`a\*b`, `a*b`, false},
		{"[*]", "*", true},
		{"[*]", "a", false},
		{"[é-ü]", "ö", true},
		{"[é-ü]", "e", false},
		{"ABC", "abc", false}, // case-sensitive
		{"**/.git", ".git", true},
		{"**/.git", "sub/.git", true},
		{"**/.git", ".gitignore", false},
		{"**/.git", "sub/.git/config", false}, // ancestors are the caller's job
		{"**/secrets*", "secrets.txt", true},
		{"**/secrets*", "conf/secrets/x", true},
		{"**/secrets*", "mysecrets", false},
		{"**/.env.*", ".env.local", true},
		{"**/.env.*", "environment.md", false},
		{"*", "", true},
		{"", "", true},
		{"", "a", false},
		{"a*b*c", "aXbYbZc", true},
		{"a*b*c", "aXbYbZ", false},
		{"*\xff", "a\xff", true}, // invalid bytes are characters of their own
		{"?", "\xff", true},
		{"\xfe", "\xff", false},
		{"[a-z]", "\xff", false},
	}
	for _, tt := range tests {
		if got := Match(tt.pattern, tt.name); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

// TestMatchPythonGolden compares Match with Python's fnmatch on the cases
// testdata/gen.py recorded.
func TestMatchPythonGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/fnmatch.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases [][3]any
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 1000 {
		t.Fatalf("only %d golden cases", len(cases))
	}
	for _, c := range cases {
		pattern, name, want := c[0].(string), c[1].(string), c[2].(bool)
		if got := Match(pattern, name); got != want {
			t.Errorf("Match(%q, %q) = %v, Python says %v", pattern, name, got, want)
		}
	}
}

func TestValidatePattern(t *testing.T) {
	tests := []struct {
		pattern string
		valid   bool
	}{
		{"*.py", true},
		{"[", true},
		{"**/", true},
		{"", false},
		{"a\x00b", false},
	}
	for _, tt := range tests {
		err := ValidatePattern(tt.pattern)
		if (err == nil) != tt.valid {
			t.Errorf("ValidatePattern(%q) = %v, want valid=%v", tt.pattern, err, tt.valid)
		}
		var pe *PatternError
		if err != nil && (!errors.As(err, &pe) || pe.Pattern != tt.pattern) {
			t.Errorf("ValidatePattern(%q) error %v is not a *PatternError naming it", tt.pattern, err)
		}
	}
}

// reference translates a pattern without "[" into an anchored regexp, the
// way Python's fnmatch.translate does.
func reference(t *testing.T, pattern string) *regexp.Regexp {
	t.Helper()
	var b strings.Builder
	b.WriteString(`^(?s:`)
	for _, c := range pattern {
		switch c {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`)$`)
	return regexp.MustCompile(b.String())
}

func FuzzMatch(f *testing.F) {
	for _, s := range [][2]string{
		{"*.py", "src/main.py"}, {"**/.git", "a/.git"}, {"[!a-c]?*", "dx"},
		{"[]-]", "]"}, {"a*b*c*d", "aabbccdd"}, {"[", "["}, {"?é*", "xé"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		got := Match(pattern, name)
		if strings.Contains(pattern, "[") || !utf8.ValidString(pattern) || !utf8.ValidString(name) {
			return
		}
		want := reference(t, pattern).MatchString(name)
		if rest, ok := strings.CutPrefix(pattern, "**/"); ok && !want {
			want = reference(t, rest).MatchString(name)
		}
		if got != want {
			t.Fatalf("Match(%q, %q) = %v, regexp says %v", pattern, name, got, want)
		}
	})
}

func BenchmarkMatch(b *testing.B) {
	name := "services/payments/internal/handlers/refunds/refund_test.go"
	for _, pat := range []string{"**/secrets*", "*.py", "[!a-z]*/*_test.go"} {
		b.Run(pat, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Match(pat, name)
			}
		})
	}
}
