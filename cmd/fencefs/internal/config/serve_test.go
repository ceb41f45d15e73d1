//go:build !fencefs_oneshot

package config

import (
	"slices"
	"testing"
)

// TestParseTenantKeys reads the scope map and the tenants' policies of a
// config file as given; the command builds grants and policies from them.
func TestParseTenantKeys(t *testing.T) {
	file := writeConfig(t, "http: 127.0.0.1:0\nauth: tokens\ntoken_file: t.yaml\ntenant_mount:\n  - ws=local:/t/{tenant}\n"+
		"scopes:\n  files:read: [read]\n  files:admin: [all]\n"+
		"tenant_policy:\n  t1:\n    deny: [/ws/private/]\n    protect: ['*.lock']\n    tools: [read, write_file]\n  t2: {tools: []}\n")
	s, _, err := Parse("serve", []string{"--config", file})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Scopes["files:read"], []string{"read"}) || !slices.Equal(s.Scopes["files:admin"], []string{"all"}) || len(s.Scopes) != 2 {
		t.Errorf("Scopes %v", s.Scopes)
	}
	p := s.TenantPolicies["t1"]
	if !slices.Equal(p.Deny, []string{"/ws/private/"}) || !slices.Equal(p.Protect, []string{"*.lock"}) || !slices.Equal(p.Tools, []string{"read", "write_file"}) {
		t.Errorf("t1's policy %+v", p)
	}
	if p := s.TenantPolicies["t2"]; p.Tools == nil || len(p.Tools) != 0 {
		t.Errorf("t2's empty tool list became %#v", p.Tools)
	}
}
