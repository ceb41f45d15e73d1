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

// TestScopeJudgesVia: a request that reached the scope through a path
// outside it (written there, or a link of the chain) is refused; the
// ancestors of a root, which every resolution walks down, are not.
func TestScopeJudgesVia(t *testing.T) {
	s, err := NewScope("/tenant/t1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		via  []string
		want bool
	}{
		{nil, true},
		{[]string{"/tenant/t1/l", "/tenant", "/tenant/t1", "/tenant/t1/d"}, true},
		{[]string{"/", "/tenant/t1/l"}, true},
		{[]string{"/tenant/t2/l"}, false},
		{[]string{"/tenant/t1/l", "/tenant/t2", "/tenant/t2/back"}, false},
		{[]string{"/tenant/t10/l"}, false},
		{[]string{"tenant/t2/l"}, false},
		{[]string{"tenant/t1/l", "tenant"}, true},
	} {
		err := s.Check(context.Background(), Request{Tool: "read_file", Operation: OpRead, Path: "/tenant/t1/x", Via: tt.via})
		if got := err == nil; got != tt.want {
			t.Errorf("Via %q: allowed %v (%v), want %v", tt.via, got, err, tt.want)
		}
		if err != nil && err.Error() != "Path '/tenant/t1/x' is outside the allowed scope." {
			t.Errorf("Via %q: message %q", tt.via, err)
		}
	}
}
