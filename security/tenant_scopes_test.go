package security

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tenant/tenanttest"
)

// toolNames lists the tools the session is offered, sorted.
func toolNames(t *testing.T, srv *tenantServe, token string) []string {
	t.Helper()
	cs, err := connectTenant(t, srv.url, token, "", nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, srv.log())
	}
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// TestTenantScopesNeverWiden: a token's scopes only ever narrow the
// server's tools. A files:read token on a server that offers only
// writing tools gets no tool at all (it once got every offered tool,
// since "nothing granted" read as "no narrowing"); a deployment's scope
// map grants exactly its tools.
func TestTenantScopesNeverWiden(t *testing.T) {
	t.Parallel()
	iss := tenanttest.NewIssuer(t)
	base := t.TempDir()
	srv := startTenantServe(t, "serve", "--http", "127.0.0.1:0", "--tools", "write_file,edit_file,delete_file",
		"--auth", "jwt", "--oidc-issuer", iss.URL, "--oidc-audience", iss.Audience, "--tenant-mount", tenantDirs(t, base))
	reader := iss.Sign(t, tenanttest.Claims{Subject: "t1", Scope: "files:read"})
	if got := toolNames(t, srv, reader); len(got) != 0 {
		t.Errorf("a files:read token is offered %q by a server of writing tools", got)
	}
	if got := toolNames(t, srv, iss.Sign(t, tenanttest.Claims{Subject: "t1", Scope: "files:write"})); !slices.Equal(got, []string{"delete_file", "edit_file", "write_file"}) {
		t.Errorf("files:write is offered %q", got)
	}

	cfg := filepath.Join(base, "fencefs.yaml")
	if err := os.WriteFile(cfg, []byte("scopes:\n  files:edit: [read, edit_file]\n  files:read: [read_file]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mapped := startTenantServe(t, "serve", "--config", cfg, "--http", "127.0.0.1:0", "--tools", "all",
		"--auth", "jwt", "--oidc-issuer", iss.URL, "--oidc-audience", iss.Audience, "--tenant-mount", tenantDirs(t, t.TempDir()))
	got := toolNames(t, mapped, iss.Sign(t, tenanttest.Claims{Subject: "t1", Scope: "files:edit"}))
	if !slices.Contains(got, "edit_file") || !slices.Contains(got, "grep") || slices.Contains(got, "write_file") || slices.Contains(got, "delete_file") {
		t.Errorf("files:edit of the scope map is offered %q", got)
	}
	if got := toolNames(t, mapped, iss.Sign(t, tenanttest.Claims{Subject: "t1", Scope: "files:read"})); !slices.Equal(got, []string{"read_file"}) {
		t.Errorf("files:read of the scope map is offered %q", got)
	}
	if code, _ := postMCP(t, mapped.url, iss.Sign(t, tenanttest.Claims{Subject: "t1", Scope: "files:write"}), nil); code != 403 {
		t.Errorf("files:write, which the scope map does not know: status %d, want 403", code)
	}
}

// TestTenantPolicyNarrows: a tenant's policy (tenant_policy) adds denied
// and protected patterns and removes tools for that tenant only; its
// token's scopes cannot give the removed tools back.
func TestTenantPolicyNarrows(t *testing.T) {
	t.Parallel()
	iss := tenanttest.NewIssuer(t)
	base := t.TempDir()
	cfg := filepath.Join(base, "fencefs.yaml")
	policy := "tenant_policy:\n  t1:\n    deny: [/ws/sub/]\n    protect: [ws/secret.txt]\n    tools: [read, write_file]\n  t10:\n    tools: []\n"
	if err := os.WriteFile(cfg, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startTenantServe(t, "serve", "--config", cfg, "--http", "127.0.0.1:0", "--tools", "all",
		"--auth", "jwt", "--oidc-issuer", iss.URL, "--oidc-audience", iss.Audience, "--tenant-mount", tenantDirs(t, base))
	full := "files:read files:write"
	t1 := iss.Sign(t, tenanttest.Claims{Subject: "t1", Scope: full})
	got := toolNames(t, srv, t1)
	if slices.Contains(got, "edit_file") || slices.Contains(got, "delete_file") || !slices.Contains(got, "write_file") || !slices.Contains(got, "read_file") {
		t.Errorf("t1 is offered %q", got)
	}
	cs, err := connectTenant(t, srv.url, t1, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if text, isErr := callTenantTool(t, cs, "read_file", map[string]any{"path": "/ws/sub/deep.txt"}); !isErr || strings.Contains(text, "secret of") {
		t.Errorf("t1 reads a path its policy denies: %q", text)
	}
	if text, isErr := callTenantTool(t, cs, "grep", map[string]any{"path": "/ws", "pattern": "secret of"}); isErr || strings.Contains(text, "deep.txt") {
		t.Errorf("t1's grep shows a denied file: %q", text)
	}
	if text, isErr := callTenantTool(t, cs, "write_file", map[string]any{"path": "/ws/secret.txt", "content": "x"}); !isErr {
		t.Errorf("t1 writes a file its policy protects: %q", text)
	}
	if data, _ := os.ReadFile(filepath.Join(base, "tenants", "t1", "secret.txt")); string(data) != "secret of t1\n" {
		t.Errorf("t1's protected file holds %q", data)
	}
	if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "edit_file", Arguments: map[string]any{"path": "/ws/only-t1.txt", "old_text": "t1", "new_text": "x"}}); err == nil && !res.IsError {
		t.Errorf("t1 calls a tool its policy removed: %+v", res)
	}
	if data, _ := os.ReadFile(filepath.Join(base, "tenants", "t1", "only-t1.txt")); string(data) != "secret of t1\n" {
		t.Errorf("only-t1.txt holds %q", data)
	}

	// A policy that leaves no tools leaves none: "no tools" once read as
	// "no narrowing" on the way to the server and offered every tool.
	t10 := iss.Sign(t, tenanttest.Claims{Subject: "t10", Scope: full})
	if got := toolNames(t, srv, t10); len(got) != 0 {
		t.Errorf("t10, whose policy keeps no tool, is offered %q", got)
	}
	cs10, err := connectTenant(t, srv.url, t10, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := cs10.CallTool(t.Context(), &mcp.CallToolParams{Name: "delete_file", Arguments: map[string]any{"path": "/ws/only-t10.txt"}}); err == nil && !res.IsError {
		t.Errorf("t10 calls delete_file: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(base, "tenants", "t10", "only-t10.txt")); err != nil {
		t.Errorf("t10's file: %v", err)
	}

	t2 := iss.Sign(t, tenanttest.Claims{Subject: "t2", Scope: full})
	if got := toolNames(t, srv, t2); !slices.Contains(got, "edit_file") || !slices.Contains(got, "delete_file") {
		t.Errorf("t2, without a policy, is offered %q", got)
	}
	cs2, err := connectTenant(t, srv.url, t2, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if text, isErr := callTenantTool(t, cs2, "read_file", map[string]any{"path": "/ws/sub/deep.txt"}); isErr || !strings.Contains(text, "secret of t2") {
		t.Errorf("t2 reads its own sub/deep.txt: %q", text)
	}
}
