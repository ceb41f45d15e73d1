package security

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tenant"
	"github.com/fencefs/fencefs/tenant/tenanttest"
)

// swappableBearer sends the token set last, so that one MCP session's
// later requests carry another token.
type swappableBearer struct {
	mu    sync.Mutex
	token string
}

func (b *swappableBearer) set(token string) {
	b.mu.Lock()
	b.token = token
	b.mu.Unlock()
}

func (b *swappableBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	b.mu.Lock()
	token := b.token
	b.mu.Unlock()
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestTenantScopesPerRequest (class 3): scopes are judged on every
// request from the request's own token, not kept from the one a stateful
// session was opened with. A read-only token of the same subject cannot
// write through a session a read-write token opened, and neither can the
// session once the token file is reloaded to read-only; nothing is
// written, and reading still works.
func TestTenantScopesPerRequest(t *testing.T) {
	t.Parallel()
	t.Run("same subject, read-only token", func(t *testing.T) {
		t.Parallel()
		iss := tenanttest.NewIssuer(t)
		base := t.TempDir()
		srv := startJWTServe(t, iss, base, "--stateful")
		rw := iss.Sign(t, tenanttest.Claims{Subject: "t1", Scope: tenant.ScopeRead + " " + tenant.ScopeWrite})
		ro := iss.Sign(t, tenanttest.Claims{Subject: "t1", Scope: tenant.ScopeRead})
		tr := &swappableBearer{token: rw}
		cs, err := connectTenant(t, srv.url, "", "", tr)
		if err != nil {
			t.Fatal(err)
		}
		if text, isErr := callTenantTool(t, cs, "write_file", map[string]any{"path": "/ws/rw.txt", "content": "rw\n"}); isErr {
			t.Fatalf("write_file with the read-write token: %q", text)
		}
		tr.set(ro)
		assertNoWrite(t, cs, filepath.Join(base, "tenants", "t1"))
	})
	t.Run("token file reloaded to read-only", func(t *testing.T) {
		t.Parallel()
		base := t.TempDir()
		file := filepath.Join(base, "tokens.yaml")
		tokens := func(scopes string) []byte {
			return []byte("tokens:\n  - name: agent\n    sha256: " + tenant.HashToken("agent-secret-token") + "\n    tenant: t1\n    scopes: [" + scopes + "]\n")
		}
		if err := os.WriteFile(file, tokens("files:read, files:write"), 0o600); err != nil {
			t.Fatal(err)
		}
		srv := startTenantServe(t, "serve", "--http", "127.0.0.1:0", "--stateful", "--tools", "all", "--auth", "tokens", "--token-file", file, "--tenant-mount", tenantDirs(t, base))
		cs, err := connectTenant(t, srv.url, "agent-secret-token", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if text, isErr := callTenantTool(t, cs, "write_file", map[string]any{"path": "/ws/rw.txt", "content": "rw\n"}); isErr {
			t.Fatalf("write_file before the reload: %q", text)
		}
		if err := os.WriteFile(file, tokens("files:read"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := srv.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		srv.waitLog(t, "reloaded the token file")
		assertNoWrite(t, cs, filepath.Join(base, "tenants", "t1"))
	})
}

// assertNoWrite checks that every changing tool is refused in cs and
// leaves dir as it was, while read_file still answers.
func assertNoWrite(t *testing.T, cs *mcp.ClientSession, dir string) {
	t.Helper()
	before := dirState(t, dir)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"write_file", map[string]any{"path": "/ws/ro.txt", "content": "ro\n"}},
		{"write_file", map[string]any{"path": "/ws/secret.txt", "content": "overwritten\n"}},
		{"edit_file", map[string]any{"path": "/ws/secret.txt", "old_text": "secret", "new_text": "public"}},
		{"delete_file", map[string]any{"path": "/ws/rw.txt"}},
		{"move_file", map[string]any{"source": "/ws/rw.txt", "destination": "/ws/moved.txt"}},
		{"create_directory", map[string]any{"path": "/ws/newdir"}},
		{"apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Add File: /ws/patched.txt\n+x\n*** End Patch\n"}},
	} {
		if text, isErr := callTenantTool(t, cs, tc.tool, tc.args); !isErr {
			t.Errorf("%s through the session with read-only scopes: %q", tc.tool, text)
		}
	}
	wantDirState(t, dir, before)
	if text, isErr := callTenantTool(t, cs, "read_file", map[string]any{"path": "/ws/secret.txt"}); isErr || !strings.Contains(text, "secret of t1") {
		t.Errorf("read_file with read-only scopes: %q", text)
	}
}
