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

// TestAllowsAgreesWithTools: Allows and AllowsAny answer what Tools
// would, for every known tool and scope mix, with grants that leave a
// scope empty too.
func TestAllowsAgreesWithTools(t *testing.T) {
	custom, err := NewGrants(map[string][]string{"files:edit": {"edit_file", "read_file"}, "files:none": {}, "files:all": {GroupAll}})
	if err != nil {
		t.Fatal(err)
	}
	scopeSets := [][]string{nil, {}, {"openid"}, {ScopeRead}, {ScopeWrite}, {"openid", ScopeRead, ScopeWrite},
		{"files:edit"}, {"files:none"}, {"files:none", "files:edit"}, {"files:all"}, {"files:none", "profile"}}
	for _, g := range []*Grants{DefaultGrants(), custom} {
		for _, scopes := range scopeSets {
			if got, want := g.AllowsAny(scopes), len(g.Tools(scopes, nil)) > 0; got != want {
				t.Errorf("AllowsAny(%q) = %v, Tools gives %q", scopes, got, g.Tools(scopes, nil))
			}
			for _, name := range append(KnownTools(), "no_such_tool", "") {
				if got, want := g.Allows(scopes, name), slices.Contains(g.Tools(scopes, []string{name}), name); got != want {
					t.Errorf("Allows(%q, %q) = %v, want %v", scopes, name, got, want)
				}
			}
		}
	}
	if !DefaultGrants().Allows([]string{ScopeRead}, "read_file") || DefaultGrants().Allows([]string{ScopeRead}, "write_file") {
		t.Fatal("files:read must grant read_file and not write_file")
	}
}
