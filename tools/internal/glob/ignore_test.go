package glob

import "testing"

func TestIgnoreRules(t *testing.T) {
	rules := ParseIgnore("# comment\n*.log\n!keep.log\nbuild/\n/top.txt\ndocs/*.md\n**/gen/**\ntrailing   \n\\#hash\n\\!bang\r\n")
	tests := []struct {
		rel   string
		isDir bool
		want  Decision
	}{
		{"a.log", false, Ignore},
		{"x/y/a.log", false, Ignore},
		{"keep.log", false, Allow},
		{"x/keep.log", false, Allow},
		{"build", true, Ignore},
		{"build", false, None},
		{"x/build", true, Ignore},
		{"top.txt", false, Ignore},
		{"x/top.txt", false, None},
		{"docs/a.md", false, Ignore},
		{"x/docs/a.md", false, None},
		{"docs/x/a.md", false, None},
		{"gen/a", false, Ignore},
		{"x/gen/y/z", false, Ignore},
		{"trailing", false, Ignore},
		{"#hash", false, Ignore},
		{"!bang", false, Ignore},
		{"comment", false, None},
		{"main.go", false, None},
	}
	for _, tt := range tests {
		if got := rules.Match(tt.rel, tt.isDir); got != tt.want {
			t.Errorf("Match(%q, %v) = %v, want %v", tt.rel, tt.isDir, got, tt.want)
		}
	}
}

func TestOverrides(t *testing.T) {
	o, bad, ok := ParseOverrides([]string{"*.go", "!*_test.go", "sub/*.txt"})
	if !ok {
		t.Fatalf("invalid glob %q", bad)
	}
	tests := []struct {
		rel   string
		isDir bool
		want  Decision
	}{
		{"a.go", false, Allow},
		{"x/a.go", false, Allow},
		{"a_test.go", false, Ignore},
		{"sub/a.txt", false, Allow},
		{"x/sub/a.txt", false, Ignore},
		{"a.txt", false, Ignore},
		{"dir", true, None},
	}
	for _, tt := range tests {
		if got := o.MatchOverride(tt.rel, tt.isDir); got != tt.want {
			t.Errorf("MatchOverride(%q, %v) = %v, want %v", tt.rel, tt.isDir, got, tt.want)
		}
	}
	if _, bad, ok := ParseOverrides([]string{"ok", "a{"}); ok || bad != "a{" {
		t.Fatalf("ParseOverrides accepted %q", bad)
	}
	only, _, _ := ParseOverrides([]string{"!*.md"})
	if only.MatchOverride("a.go", false) != None || only.MatchOverride("a.md", false) != Ignore {
		t.Fatal("exclude-only overrides")
	}
}

// FuzzIgnore checks that any ignore file parses and matches without panic.
func FuzzIgnore(f *testing.F) {
	f.Add("*.log\n!a.log\nbuild/\n", "x/a.log")
	f.Add("{a,b\n[\n\\", "a")
	f.Fuzz(func(t *testing.T, data, rel string) {
		r := ParseIgnore(data)
		r.Match(rel, false)
		r.Match(rel, true)
	})
}
