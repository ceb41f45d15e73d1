package tenant

import (
	"fmt"
	"maps"
	"slices"

	"github.com/fencefs/fencefs/policy"
	"github.com/fencefs/fencefs/tools"
)

// Policy is one tenant's override of the server's settings. It can only
// narrow what the server and the token allow: Deny and Protect add to the
// server's lists, Tools keeps a subset of the server's tools (which the
// token's scopes narrow again). Nothing in it can lift a server-wide deny,
// a protection or a read-only mount, or grant a tool the scopes do not.
type Policy struct {
	// Deny are denied patterns (policy.Rules.Denied) added to the server's.
	Deny []string `yaml:"deny"`
	// Protect are protected patterns added to the server's.
	Protect []string `yaml:"protect"`
	// Tools, when not nil, are the most the tenant may use: tool names or
	// the groups of ExpandTools. An empty list leaves the tenant no tool.
	Tools []string `yaml:"tools"`
}

// Policies are the overrides of the tenants that have one.
type Policies struct {
	byTenant map[ID]Policy
}

// NewPolicies checks byTenant (tenant id to its override) and returns it
// ready for For: every key must be a tenant id (ParseID), every pattern
// valid, every tool known. Patterns are normalized as the server's own
// are (policy.NormalizePattern) and tool groups expanded. Errors name the
// tenant and the entry at fault.
func NewPolicies(byTenant map[string]Policy) (*Policies, error) {
	ps := &Policies{byTenant: make(map[ID]Policy, len(byTenant))}
	for _, name := range slices.Sorted(maps.Keys(byTenant)) {
		id, err := ParseID(name)
		if err != nil {
			return nil, fmt.Errorf("tenant: policy of %q: %w", name, err)
		}
		p, err := byTenant[name].normalize()
		if err != nil {
			return nil, fmt.Errorf("tenant: policy of %q: %w", name, err)
		}
		ps.byTenant[id] = p
	}
	return ps, nil
}

// normalize returns p with its patterns normalized and its tool groups
// expanded, or the error of the first bad entry.
func (p Policy) normalize() (Policy, error) {
	var out Policy
	for _, l := range []struct {
		key  string
		kind policy.PatternKind
		in   []string
		out  *[]string
	}{
		{"deny", policy.DeniedPattern, p.Deny, &out.Deny},
		{"protect", policy.ProtectedPattern, p.Protect, &out.Protect},
	} {
		for _, pat := range l.in {
			n, err := policy.NormalizePattern(l.kind, pat)
			if err != nil {
				return Policy{}, fmt.Errorf("%s: %w", l.key, err)
			}
			*l.out = append(*l.out, n)
		}
	}
	if p.Tools != nil {
		names, err := ExpandTools(p.Tools)
		if err != nil {
			return Policy{}, fmt.Errorf("tools: %w", err)
		}
		out.Tools = names
	}
	return out, nil
}

// For returns the override of id; the zero Policy (which narrows nothing)
// for a tenant without one or a nil ps.
func (ps *Policies) For(id ID) Policy {
	if ps == nil {
		return Policy{}
	}
	return ps.byTenant[id]
}

// Tenants returns the tenants that have an override, sorted.
func (ps *Policies) Tenants() []ID {
	if ps == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(ps.byTenant))
}

// Narrow returns the server's tool options opts narrowed by p: p's denied
// and protected patterns appended to opts's, and opts.Tools (nil meaning
// tools.DefaultTools) limited to p.Tools, in opts's order. opts is not
// modified. The result never offers a tool opts does not, and never drops
// a pattern opts has.
func (p Policy) Narrow(opts tools.Options) tools.Options {
	out := opts
	out.Denied = append(slices.Clip(opts.Denied), p.Deny...)
	out.Protected = append(slices.Clip(opts.Protected), p.Protect...)
	if p.Tools != nil {
		offered := opts.Tools
		if offered == nil {
			offered = tools.DefaultTools()
		}
		out.Tools = []string{}
		for _, n := range offered {
			if slices.Contains(p.Tools, n) {
				out.Tools = append(out.Tools, n)
			}
		}
	}
	return out
}
