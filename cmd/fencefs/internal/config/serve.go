//go:build !fencefs_oneshot

package config

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/fencefs/fencefs/mcpserver"
	"github.com/fencefs/fencefs/mountspec/spec"
	"github.com/fencefs/fencefs/quota"
	"github.com/fencefs/fencefs/tenant"
)

// The settings of serve alone, whose checks link the tenant layer and
// the MCP server; the one-shot build (oneshot.go) has no serve.

// tenantPolicy is what tenant_policy maps a tenant to.
type tenantPolicy = tenant.Policy

// defaultSkillsRefresh is --skills-refresh's default.
const defaultSkillsRefresh = mcpserver.DefaultSkillsInterval

// applyQuotaTenants applies the "quota_tenants" map of tenant to limits
// (max_bytes, max_files, calls_per_second, burst, max_concurrent).
func (p *parser) applyQuotaTenants(file string, v *yaml.Node) error {
	if p.cmd != "serve" {
		return nil
	}
	m, err := decodeKey[map[string]quota.Limits](file, v, "quota_tenants", "a mapping of tenant to limits (max_bytes, max_files, calls_per_second, burst, max_concurrent)")
	if err != nil {
		return err
	}
	for t := range m {
		if _, err := tenant.ParseID(t); err != nil {
			return &Error{Where: at(file, v), Setting: "quota_tenants", Err: err}
		}
	}
	p.s.QuotaTenants = m
	return nil
}

// applyScopes applies the "scopes" map of scope to the tools (names or
// groups) it grants.
func (p *parser) applyScopes(file string, v *yaml.Node) error {
	if p.cmd != "serve" {
		return nil
	}
	m, err := decodeKey[map[string][]string](file, v, "scopes", "a mapping of scope to a list of tools or groups (read, write, all)")
	if err != nil {
		return err
	}
	if _, err := tenant.NewGrants(m); err != nil {
		return &Error{Where: at(file, v), Setting: "scopes", Err: errors.New(strings.TrimPrefix(err.Error(), "tenant: grants: "))}
	}
	p.s.Scopes = m
	return nil
}

// applyTenantPolicy applies the "tenant_policy" map of tenant to its
// narrowing (deny, protect, tools).
func (p *parser) applyTenantPolicy(file string, v *yaml.Node) error {
	if p.cmd != "serve" {
		return nil
	}
	m, err := decodeKey[map[string]tenant.Policy](file, v, "tenant_policy", "a mapping of tenant to deny, protect and tools lists")
	if err != nil {
		return err
	}
	if _, err := tenant.NewPolicies(m); err != nil {
		return &Error{Where: at(file, v), Setting: "tenant_policy", Err: errors.New(strings.TrimPrefix(err.Error(), "tenant: "))}
	}
	p.s.TenantPolicies = m
	return nil
}

// checkTenantMount checks a --tenant-mount NAME=SPEC: the name as a
// mount's, the template's placeholders, and the spec as it expands for a
// tenant, so a mistake is refused at start-up rather than at a tenant's
// first request.
func checkTenantMount(schemes spec.Schemes, s string) error {
	name, spec, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("%q is not NAME=SPEC", s)
	}
	if !validMountName(name) {
		return fmt.Errorf("mount %q: the name must be 1 to %d ASCII letters, digits, '-', '_' and '.', and not . or ..", name, maxMountName)
	}
	t, err := tenant.ParseTemplate(spec)
	if err != nil {
		return fmt.Errorf("mount %q: %w", name, err)
	}
	expanded, err := t.ExpandSession("t", "s")
	if err == nil {
		_, err = schemes.Parse(expanded)
	}
	if err != nil {
		return fmt.Errorf("mount %q: %w", name, err)
	}
	return nil
}

// SplitTenantMount splits a checked --tenant-mount into its name and
// template.
func SplitTenantMount(s string) (string, tenant.Template, error) {
	name, spec, _ := strings.Cut(s, "=")
	t, err := tenant.ParseTemplate(spec)
	return name, t, err
}

// checkAddr checks serve's --http, a TCP listen address.
func checkAddr(s string) error {
	if _, port, err := net.SplitHostPort(s); err != nil || port == "" {
		return fmt.Errorf("%q is not HOST:PORT (such as 127.0.0.1:8080)", s)
	}
	return nil
}
