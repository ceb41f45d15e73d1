package tenant

import (
	"slices"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/tools"
)

func TestExpandTools(t *testing.T) {
	ro := append(tools.ReadOnlyTools(), ToolListCheckpoints)
	var writing []string
	for _, n := range KnownTools() {
		if !slices.Contains(ro, n) {
			writing = append(writing, n)
		}
	}
	cases := []struct {
		in   []string
		want []string
	}{
		{[]string{GroupRead}, ro},
		{[]string{GroupWrite}, writing},
		{[]string{GroupAll}, KnownTools()},
		{[]string{GroupRead, GroupWrite}, KnownTools()},
		{[]string{ToolRestoreCheckpoint}, []string{ToolRestoreCheckpoint}},
		{[]string{"write_file", "read_file", "read_file"}, []string{"read_file", "write_file"}},
		{[]string{GroupRead, "edit_file"}, append([]string{"read_file", "edit_file"}, ro[1:]...)},
		{[]string{" grep "}, []string{"grep"}},
		{[]string{}, []string{}},
		{nil, []string{}},
	}
	for _, tc := range cases {
		got, err := ExpandTools(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		want := slices.Clone(tc.want)
		slices.SortFunc(want, func(a, b string) int { return slices.Index(KnownTools(), a) - slices.Index(KnownTools(), b) })
		if !slices.Equal(got, want) || got == nil {
			t.Errorf("%q: %q, want %q", tc.in, got, want)
		}
	}
	_, err := ExpandTools([]string{"read_file", "read_fiel", "Read", "", "write_file"})
	if err == nil {
		t.Fatal("unknown tools accepted")
	}
	for _, name := range []string{`"read_fiel"`, `"Read"`, `""`} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %s", err, name)
		}
	}
}

func TestGrantsGroups(t *testing.T) {
	g, err := NewGrants(map[string][]string{"files:admin": {GroupAll}, "files:edit": {"edit_file", GroupRead}})
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Tools([]string{"files:admin"}, nil); !slices.Equal(got, KnownTools()) {
		t.Errorf("files:admin %q", got)
	}
	if got := g.Tools([]string{"files:edit"}, []string{"write_file", "edit_file", "grep"}); !slices.Equal(got, []string{"edit_file", "grep"}) {
		t.Errorf("files:edit %q", got)
	}
	def, err := NewGrants(DefaultScopes())
	if err != nil {
		t.Fatal(err)
	}
	for _, scopes := range [][]string{{ScopeRead}, {ScopeWrite}, {ScopeRead, ScopeWrite}} {
		if a, b := def.Tools(scopes, nil), DefaultGrants().Tools(scopes, nil); !slices.Equal(a, b) {
			t.Errorf("%q: DefaultScopes %q, DefaultGrants %q", scopes, a, b)
		}
	}
	for _, bad := range []map[string][]string{
		{"files:read": {"read_file", "lsit_directory", "greb"}},
		{"files read": {"read_file"}},
		{"files:read\n": {"read_file"}},
	} {
		if _, err := NewGrants(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	_, err = NewGrants(map[string][]string{"files:read": {"read_file", "lsit_directory", "greb"}})
	if !strings.Contains(err.Error(), `"lsit_directory"`) || !strings.Contains(err.Error(), `"greb"`) || !strings.Contains(err.Error(), `"files:read"`) {
		t.Errorf("error %q does not name the scope and both unknown tools", err)
	}
}

func TestNewPolicies(t *testing.T) {
	ps, err := NewPolicies(map[string]Policy{
		"t1": {Deny: []string{"/ws/private/", "./tmp"}, Protect: []string{"ws/config/**"}, Tools: []string{GroupRead, "write_file"}},
		"t2": {Tools: []string{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	p := ps.For("t1")
	if !slices.Equal(p.Deny, []string{"ws/private", "tmp"}) || !slices.Equal(p.Protect, []string{"ws/config/**"}) {
		t.Errorf("patterns not normalized: %+v", p)
	}
	if !slices.Contains(p.Tools, "grep") || !slices.Contains(p.Tools, "write_file") || slices.Contains(p.Tools, "edit_file") {
		t.Errorf("tools %q", p.Tools)
	}
	if p := ps.For("t2"); p.Tools == nil || len(p.Tools) != 0 {
		t.Errorf("t2's empty tool list became %#v", p.Tools)
	}
	if p := ps.For("t3"); p.Deny != nil || p.Protect != nil || p.Tools != nil {
		t.Errorf("a tenant without an override got %+v", p)
	}
	var none *Policies
	if p := none.For("t1"); p.Tools != nil || none.Tenants() != nil {
		t.Errorf("nil Policies: %+v", p)
	}
	if got := ps.Tenants(); !slices.Equal(got, []ID{"t1", "t2"}) {
		t.Errorf("Tenants %q", got)
	}

	bad := []struct {
		name string
		in   map[string]Policy
		want []string
	}{
		{"tenant id", map[string]Policy{"../t2": {}}, []string{`"../t2"`}},
		{"empty tenant", map[string]Policy{"": {}}, []string{`""`}},
		{"deny pattern", map[string]Policy{"t1": {Deny: []string{"a/../b"}}}, []string{`"t1"`, "deny"}},
		{"deny root", map[string]Policy{"t1": {Deny: []string{"/"}}}, []string{"deny"}},
		{"protect pattern", map[string]Policy{"t1": {Protect: []string{""}}}, []string{"protect"}},
		{"tool", map[string]Policy{"t1": {Tools: []string{"read_file", "rm"}}}, []string{`"t1"`, `"rm"`}},
	}
	for _, tc := range bad {
		_, err := NewPolicies(tc.in)
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not name %s", tc.name, err, w)
			}
		}
	}
}

func TestPolicyNarrow(t *testing.T) {
	server := tools.Options{Denied: []string{"secret"}, Protected: []string{"conf"}, Tools: []string{"read_file", "write_file", "grep"}}
	cases := []struct {
		name      string
		p         Policy
		server    tools.Options
		tools     []string
		deny, pro []string
	}{
		{"zero", Policy{}, server, server.Tools, []string{"secret"}, []string{"conf"}},
		{"adds patterns", Policy{Deny: []string{"a"}, Protect: []string{"b"}}, server, server.Tools, []string{"secret", "a"}, []string{"conf", "b"}},
		{"removes tools", Policy{Tools: []string{"read_file", "grep"}}, server, []string{"read_file", "grep"}, []string{"secret"}, []string{"conf"}},
		{"cannot add a tool", Policy{Tools: []string{"read_file", "delete_file"}}, server, []string{"read_file"}, []string{"secret"}, []string{"conf"}},
		{"no tools", Policy{Tools: []string{}}, server, []string{}, []string{"secret"}, []string{"conf"}},
		{"server default tools", Policy{Tools: tools.AllTools()}, tools.Options{}, tools.DefaultTools(), nil, nil},
	}
	for _, tc := range cases {
		before := tc.server
		before.Denied, before.Protected, before.Tools = slices.Clone(tc.server.Denied), slices.Clone(tc.server.Protected), slices.Clone(tc.server.Tools)
		got := tc.p.Narrow(tc.server)
		if !slices.Equal(got.Tools, tc.tools) || !slices.Equal(got.Denied, tc.deny) || !slices.Equal(got.Protected, tc.pro) {
			t.Errorf("%s: tools %q denied %q protected %q", tc.name, got.Tools, got.Denied, got.Protected)
		}
		if !slices.Equal(tc.server.Denied, before.Denied) || !slices.Equal(tc.server.Protected, before.Protected) || !slices.Equal(tc.server.Tools, before.Tools) {
			t.Errorf("%s: the server's options changed: %+v", tc.name, tc.server)
		}
	}
	// Appending to the result must not write into the server's arrays.
	backing := make([]string, 1, 8)
	backing[0] = "secret"
	srv := tools.Options{Denied: backing}
	a := Policy{Deny: []string{"a"}}.Narrow(srv)
	b := Policy{Deny: []string{"b"}}.Narrow(srv)
	if a.Denied[1] != "a" || b.Denied[1] != "b" {
		t.Errorf("two tenants' lists share an array: %q %q", a.Denied, b.Denied)
	}
}

// FuzzPolicyNarrow checks that no override that NewPolicies accepts widens
// the server's options: every tool offered after Narrow was offered
// before, and every server pattern is still there.
func FuzzPolicyNarrow(f *testing.F) {
	f.Add("ws/private/", "*.pem", "read,write_file", "read_file,grep")
	f.Add("", "", "all", "")
	f.Add("/", "..", "bogus", "write_file")
	f.Fuzz(func(t *testing.T, deny, protect, toolList, serverTools string) {
		split := func(s string) []string {
			if s == "" {
				return nil
			}
			return strings.Split(s, ",")
		}
		ps, err := NewPolicies(map[string]Policy{"t1": {Deny: split(deny), Protect: split(protect), Tools: split(toolList)}})
		if err != nil {
			return
		}
		srvTools, err := ExpandTools(split(serverTools))
		if err != nil {
			return
		}
		server := tools.Options{Denied: []string{"secret"}, Protected: []string{"conf"}, Tools: srvTools}
		got := ps.For("t1").Narrow(server)
		for _, n := range got.Tools {
			if !slices.Contains(srvTools, n) {
				t.Fatalf("tool %q offered, the server offers %q", n, srvTools)
			}
		}
		if got.Denied[0] != "secret" || got.Protected[0] != "conf" {
			t.Fatalf("server patterns lost: %q %q", got.Denied, got.Protected)
		}
		if _, err := tools.New(nil, got); err == nil {
			t.Fatal("tools.New accepted a nil backend")
		}
	})
}
