package tenant

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

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
// names (those of KnownTools) or the groups of ExpandTools ("read",
// "write", "all"). An unknown tool name is an error naming it, so a typing
// mistake in a config does not silently grant nothing. A scope may not be
// empty or hold white space, which separates scopes in a token.
func NewGrants(byScope map[string][]string) (*Grants, error) {
	g := &Grants{byScope: make(map[string][]string, len(byScope))}
	for _, scope := range slices.Sorted(maps.Keys(byScope)) {
		if scope == "" || strings.ContainsFunc(scope, unicode.IsSpace) {
			return nil, fmt.Errorf("tenant: grants: scope %q: a scope is one word without spaces", scope)
		}
		names, err := ExpandTools(byScope[scope])
		if err != nil {
			return nil, fmt.Errorf("tenant: grants: scope %q: %w", scope, err)
		}
		g.byScope[scope] = names
	}
	return g, nil
}

// Tools a server offers beside the file tools of package tools when its
// operator asks (package checkpoint/checkpointmcp). Grants and policies
// name them as any tool, and the groups hold them by what they do:
// ToolListCheckpoints reads (GroupRead), ToolRestoreCheckpoint changes
// storage (GroupWrite).
const (
	ToolListCheckpoints   = "list_checkpoints"
	ToolRestoreCheckpoint = "restore_checkpoint"
)

// KnownTools returns every tool name grants and policies know:
// tools.AllTools, then ToolListCheckpoints and ToolRestoreCheckpoint.
func KnownTools() []string {
	return append(tools.AllTools(), ToolListCheckpoints, ToolRestoreCheckpoint)
}

// readOnlyTools returns the tools of KnownTools that never change
// storage.
func readOnlyTools() []string {
	return append(tools.ReadOnlyTools(), ToolListCheckpoints)
}

// Tool groups that ExpandTools accepts beside tool names.
const (
	// GroupRead is every tool of tools.ReadOnlyTools, and
	// ToolListCheckpoints.
	GroupRead = "read"
	// GroupWrite is every tool that can change storage.
	GroupWrite = "write"
	// GroupAll is every tool of KnownTools.
	GroupAll = "all"
)

// ExpandTools returns the tools that names list, each a tool name of
// KnownTools or a group (GroupRead, GroupWrite, GroupAll), without
// repeats and in KnownTools's order. Every name it does not know is
// named in the error. An empty list expands to none (not nil).
func ExpandTools(names []string) ([]string, error) {
	all, ro := KnownTools(), readOnlyTools()
	want := map[string]bool{}
	var unknown []string
	for _, n := range names {
		switch n = strings.TrimSpace(n); {
		case n == GroupAll:
			for _, t := range all {
				want[t] = true
			}
		case n == GroupRead || n == GroupWrite:
			for _, t := range all {
				if slices.Contains(ro, t) == (n == GroupRead) {
					want[t] = true
				}
			}
		case slices.Contains(all, n):
			want[n] = true
		default:
			unknown = append(unknown, fmt.Sprintf("%q", n))
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("unknown tool %s (tools: %s; groups: %s, %s, %s)", strings.Join(unknown, ", "),
			strings.Join(all, ", "), GroupRead, GroupWrite, GroupAll)
	}
	out := []string{}
	for _, t := range all {
		if want[t] {
			out = append(out, t)
		}
	}
	return out, nil
}

// DefaultGrants gives ScopeRead the tools of tools.ReadOnlyTools and
// list_checkpoints (the group GroupRead) and ScopeWrite every other tool
// (GroupWrite), restore_checkpoint included. A token
// usually carries both; one with only files:write can write and edit but
// not read or list.
func DefaultGrants() *Grants {
	g, err := NewGrants(DefaultScopes())
	if err != nil {
		panic(err) // the groups are known
	}
	return g
}

// DefaultScopes returns the scope map of DefaultGrants, a fresh copy a
// configuration may start from.
func DefaultScopes() map[string][]string {
	return map[string][]string{ScopeRead: {GroupRead}, ScopeWrite: {GroupWrite}}
}

// Scopes returns the scopes g knows, sorted.
func (g *Grants) Scopes() []string {
	return slices.Sorted(maps.Keys(g.byScope))
}

// Tools returns the tools that scopes grant, limited to offered (the tool
// set the server is configured with; nil means every tool), in offered's
// order (KnownTools's order for nil). Scopes g does not know grant
// nothing. The result is nil when nothing is granted; pass it to
// tools.Options.Tools only when it is not nil, since a nil Tools there
// means the default set.
func (g *Grants) Tools(scopes, offered []string) []string {
	if offered == nil {
		offered = KnownTools()
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

// Allows reports whether scopes grant the tool name: whether Tools(scopes,
// []string{name}) would hold it, without building a list (a server asks
// it on every call).
func (g *Grants) Allows(scopes []string, name string) bool {
	for _, s := range scopes {
		if slices.Contains(g.byScope[s], name) {
			return true
		}
	}
	return false
}

// AllowsAny reports whether scopes grant any tool at all: whether
// Tools(scopes, nil) would be non-empty, without building it.
func (g *Grants) AllowsAny(scopes []string) bool {
	for _, s := range scopes {
		// NewGrants keeps only tools of KnownTools.
		if len(g.byScope[s]) > 0 {
			return true
		}
	}
	return false
}
