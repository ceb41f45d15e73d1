package tenant

import (
	"slices"
	"testing"

	"github.com/fencefs/fencefs/tools"
)

func TestDefaultGrants(t *testing.T) {
	g := DefaultGrants()
	ro := tools.ReadOnlyTools()
	var writing, defaultRO []string // derived, so a new tool needs no edit here
	for _, n := range KnownTools() {
		if !slices.Contains(ro, n) && n != ToolListCheckpoints {
			writing = append(writing, n)
		}
	}
	for _, n := range tools.DefaultTools() {
		if slices.Contains(ro, n) {
			defaultRO = append(defaultRO, n)
		}
	}
	if len(writing) == 0 || len(defaultRO) == 0 || !slices.Contains(writing, "write_file") || !slices.Contains(writing, ToolRestoreCheckpoint) || !slices.Contains(defaultRO, "read_file") {
		t.Fatalf("tools' lists: writing %q, default read-only %q", writing, defaultRO)
	}
	cases := []struct {
		name    string
		scopes  []string
		offered []string
		want    []string
	}{
		{"read", []string{ScopeRead}, ro, ro},
		{"read, with the checkpoint tools", []string{ScopeRead}, KnownTools(), append(slices.Clone(ro), ToolListCheckpoints)},
		{"read of the defaults", []string{ScopeRead}, tools.DefaultTools(), defaultRO},
		{"write only", []string{ScopeWrite}, nil, writing},
		{"both", []string{"openid", ScopeRead, ScopeWrite}, tools.DefaultTools(), tools.DefaultTools()},
		{"none", []string{"openid", "profile"}, nil, nil},
		{"no scopes", nil, nil, nil},
	}
	for _, tc := range cases {
		if got := g.Tools(tc.scopes, tc.offered); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if !slices.Equal(g.Scopes(), []string{ScopeRead, ScopeWrite}) {
		t.Errorf("Scopes %q", g.Scopes())
	}
}

func TestNewGrants(t *testing.T) {
	g, err := NewGrants(map[string][]string{"files:edit": {"edit_file", "read_file"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Tools([]string{"files:edit", ScopeWrite}, nil); !slices.Equal(got, []string{"read_file", "edit_file"}) {
		t.Fatalf("Tools %q", got)
	}
	if _, err := NewGrants(map[string][]string{"files:read": {"read_fiel"}}); err == nil {
		t.Fatal("unknown tool accepted")
	}
	if _, err := NewGrants(map[string][]string{"": {"read_file"}}); err == nil {
		t.Fatal("empty scope accepted")
	}
}
