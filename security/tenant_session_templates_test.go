package security

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/tenant"
)

// TestTenantSessionTemplates ({session} in a tenant template): each
// stateful session of a tenant gets its own upper layer under an id the
// server issued, and no one reaches a session's storage by naming it: a
// session id presented by another tenant, or by another token of the same
// tenant, is refused; an id the server never issued, shaped as a path,
// opens and makes nothing; a stateless server (the default) refuses such
// a template at start-up.
func TestTenantSessionTemplates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base, up := filepath.Join(dir, "base"), filepath.Join(dir, "up")
	for _, d := range []string{base, up} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(base, "a.txt"), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "tokens.yaml")
	var tokens strings.Builder
	tokens.WriteString("tokens:\n")
	for _, c := range [][2]string{{"alice", "t1"}, {"bob", "t1"}, {"eve", "t2"}} {
		fmt.Fprintf(&tokens, "  - name: %s\n    sha256: %s\n    tenant: %s\n    scopes: [files:read, files:write]\n", c[0], tenant.HashToken("token-of-"+c[0]), c[1])
	}
	if err := os.WriteFile(file, []byte(tokens.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	mount := "ws=overlay:local:" + base + ":ro+local:" + filepath.Join(up, "{tenant}", "{session}")
	args := []string{"serve", "--http", "127.0.0.1:0", "--tools", "all", "--auth", "tokens", "--token-file", file, "--tenant-mount", mount}

	serveBinary.get(t) // built before serveOrExit's deadline starts
	log, served := serveOrExit(t, args...)
	if served || !strings.Contains(log, "needs stateful HTTP sessions") {
		t.Fatalf("a stateless server with {session}: served %v, log:\n%s", served, log)
	}

	srv := startTenantServe(t, append(args, "--stateful")...)
	alice, err := connectTenant(t, srv.url, "token-of-alice", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if text, isErr := callTenantTool(t, alice, "write_file", map[string]any{"path": "/ws/a.txt", "content": "alice's\n"}); isErr {
		t.Fatalf("alice writing: %s", text)
	}
	bob, err := connectTenant(t, srv.url, "token-of-bob", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := callTenantTool(t, bob, "read_file", map[string]any{"path": "/ws/a.txt"}); strings.Contains(text, "alice's") || !strings.Contains(text, "base") {
		t.Errorf("bob's session read %q, want the base", text)
	}

	post := func(token, sid string) (int, string) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"/ws/a.txt"}}}`
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<16))
		return res.StatusCode, string(b)
	}
	for _, c := range []struct{ who, token, sid string }{
		{"bob (same tenant) with alice's session", "token-of-bob", alice.ID()},
		{"eve (other tenant) with alice's session", "token-of-eve", alice.ID()},
		{"alice with a path for an id", "token-of-alice", "../t1/" + alice.ID()},
		{"alice with an id never issued", "token-of-alice", "forged"},
	} {
		if code, body := post(c.token, c.sid); code < 400 || strings.Contains(body, "alice's") {
			t.Errorf("%s: %d %q", c.who, code, body)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(up, "t1"))
	if len(entries) != 2 {
		t.Errorf("t1's upper layers: %v, want alice's and bob's sessions' only", entries)
	}
	if _, err := os.Stat(filepath.Join(up, "t1", alice.ID(), "a.txt")); err != nil {
		t.Errorf("alice's change is not in her session's upper layer: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(base, "a.txt")); string(b) != "base\n" {
		t.Errorf("the base changed: %q", b)
	}
}
