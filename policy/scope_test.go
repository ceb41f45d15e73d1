package policy

import (
	"context"
	"slices"
	"testing"
)

func TestScopeAllows(t *testing.T) {
	tests := []struct {
		roots []string
		path  string
		want  bool
	}{
		{[]string{"/tenant1"}, "/tenant1", true},
		{[]string{"/tenant1"}, "/tenant1/notes.md", true},
		{[]string{"/tenant1"}, "/tenant10", false},
		{[]string{"/tenant1"}, "/tenant10/x", false},
		{[]string{"/tenant1"}, "/", false},
		{[]string{"/tenant1"}, "/tenant1/../tenant2", false},
		{[]string{"/tenant1"}, "/tenant1/a/../b", true},
		{[]string{"/tenant1"}, "tenant1/x", true}, // storage path of a plain namespace
		{[]string{"/tenant1"}, ".", false},
		{[]string{"/tenant1"}, "", false},
		{[]string{"/tenant1"}, "/tenant1/a\x00", false},
		{[]string{"/tenant1"}, "/tenant1/../..", false},
		{[]string{"/tenant/sessions/s1"}, "/tenant/sessions/s1/scratch", true},
		{[]string{"/tenant/sessions/s1"}, "/tenant/sessions/s2", false},
		{[]string{"/tenant/sessions/s1"}, "/tenant/sessions", false},
		{[]string{"/tenant/sessions/s1"}, "/tenant/sessions/s1x", false},
		{[]string{"/a", "/b/c"}, "/b/c/d", true},
		{[]string{"/a", "/b/c"}, "/b", false},
		{[]string{"/"}, "/anything/at/all", true},
		{[]string{"/t//x/"}, "/t/x/y", true}, // roots are normalized
	}
	for _, tt := range tests {
		s, err := NewScope(tt.roots...)
		if err != nil {
			t.Fatalf("NewScope(%q): %v", tt.roots, err)
		}
		if got := s.Allows(tt.path); got != tt.want {
			t.Errorf("Scope%q.Allows(%q) = %v, want %v", tt.roots, tt.path, got, tt.want)
		}
	}
}

func TestNewScopeErrors(t *testing.T) {
	tests := [][]string{
		nil,
		{"tenant"},
		{"/ok", "relative"},
		{"/a/../.."},
		{`/a\b`},
		{"/a\x00"},
		{"/~user"},
		{""},
	}
	for _, roots := range tests {
		if s, err := NewScope(roots...); err == nil {
			t.Errorf("NewScope(%q) = %v, want an error", roots, s.Roots())
		}
	}
}

func TestScopeCheck(t *testing.T) {
	s, err := NewScope("/tenant/sessions/s1")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Roots(); !slices.Equal(got, []string{"/tenant/sessions/s1"}) {
		t.Errorf("Roots() = %q", got)
	}
	ctx := context.Background()
	assertDenied(t, s.Check(ctx, Request{Tool: "read_file", Operation: OpRead, Path: "/tenant/sessions/s1/a"}), "")
	assertDenied(t, s.Check(ctx, Request{Tool: "read_file", Operation: OpRead, Path: "/tenant/sessions/s2/a"}),
		"Path '/tenant/sessions/s2/a' is outside the allowed scope.")
	var c Checker = s // a Scope is a Checker
	assertDenied(t, c.Check(ctx, Request{Operation: OpModify, Path: "/tenant1"}),
		"Path '/tenant1' is outside the allowed scope.")
}
