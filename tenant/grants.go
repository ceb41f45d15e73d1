package tenant

import (
	"fmt"
	"maps"
	"slices"

	"github.com/fencefs/fencefs/tools"
)

// Scopes of DefaultGrants.
const (
	ScopeRead  = "files:read"
	ScopeWrite = "files:write"
)

// Grants map a token's scopes to the tools its holder may call. A
// deployment configures its own with NewGrants; DefaultGrants gives
// files:read the read-only tools and files:write the writing ones.
type Grants struct {
	byScope map[string][]string
}

// NewGrants returns the grants of byScope, which maps a scope to tool
// names (those of tools.AllTools). An unknown tool name is an error, so a
// typing mistake in a config does not silently grant nothing.
func NewGrants(byScope map[string][]string) (*Grants, error) {
	all := tools.AllTools()
	g := &Grants{byScope: make(map[string][]string, len(byScope))}
	for scope, names := range byScope {
		if scope == "" {
			return nil, fmt.Errorf("tenant: grants: empty scope")
		}
		for _, n := range names {
			if !slices.Contains(all, n) {
				return nil, fmt.Errorf("tenant: grants: scope %q: unknown tool %q (known: %v)", scope, n, all)
			}
		}
		g.byScope[scope] = slices.Clone(names)
	}
	return g, nil
}

// DefaultGrants gives ScopeRead the tools of tools.ReadOnlyTools and
// ScopeWrite every other tool. A token usually carries both; one with only
// files:write can write and edit but not read or list.
func DefaultGrants() *Grants {
	ro := tools.ReadOnlyTools()
	var rw []string
	for _, n := range tools.AllTools() {
		if !slices.Contains(ro, n) {
			rw = append(rw, n)
		}
	}
	g, err := NewGrants(map[string][]string{ScopeRead: ro, ScopeWrite: rw})
	if err != nil {
		panic(err) // tools' own lists name only tools
	}
	return g
}

// Scopes returns the scopes g knows, sorted.
func (g *Grants) Scopes() []string {
	return slices.Sorted(maps.Keys(g.byScope))
}

// Tools returns the tools that scopes grant, limited to offered (the tool
// set the server is configured with; nil means every tool), in offered's
// order (tools.AllTools's order for nil). Scopes g does not know grant
// nothing. The result is nil when nothing is granted; pass it to
// tools.Options.Tools only when it is not nil, since a nil Tools there
// means the default set.
func (g *Grants) Tools(scopes, offered []string) []string {
	if offered == nil {
		offered = tools.AllTools()
	}
	var out []string
	for _, n := range offered {
		for _, s := range scopes {
			if slices.Contains(g.byScope[s], n) {
				out = append(out, n)
				break
			}
		}
	}
	return out
}
