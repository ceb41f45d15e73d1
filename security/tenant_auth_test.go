package security

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fencefs/fencefs/tenant/tenanttest"
)

// initializeBody is a raw MCP initialize request.
const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// postMCP sends initializeBody to url with token and the extra headers,
// and returns the status and the WWW-Authenticate challenge.
func postMCP(t *testing.T, url, token string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(initializeBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
}

// TestTenantTokenRefusals: a token that does not verify gets 401, a
// verified token whose tenant claim is not one safe path component (or
// whose scopes grant no tool) gets 403; each refusal names the
// protected-resource metadata; and the tenant never comes from a header
// or a query parameter.
func TestTenantTokenRefusals(t *testing.T) {
	t.Parallel()
	iss := tenanttest.NewIssuer(t)
	srv := startJWTServe(t, iss, t.TempDir())
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	good := iss.Sign(t, tenanttest.Claims{Subject: "t1"})
	parts := strings.Split(good, ".")
	cases := []struct {
		name, token string
		want        int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"garbage", "not-a-jwt", http.StatusUnauthorized},
		{"forged", iss.Sign(t, tenanttest.Claims{Subject: "t1", Key: other}), http.StatusUnauthorized},
		{"expired", iss.Sign(t, tenanttest.Claims{Subject: "t1", Expiry: time.Now().Add(-time.Hour)}), http.StatusUnauthorized},
		{"wrong audience", iss.Sign(t, tenanttest.Claims{Subject: "t1", Audience: "https://other.example/mcp"}), http.StatusUnauthorized},
		{"alg none", iss.Unsigned("t1", ""), http.StatusUnauthorized},
		{"alg none with a signature", iss.Unsigned("t1", parts[2]), http.StatusUnauthorized},
		{"unsigned", parts[0] + "." + parts[1] + ".", http.StatusUnauthorized},
		{"signature of another token", parts[0] + "." + strings.Split(iss.Sign(t, tenanttest.Claims{Subject: "t2"}), ".")[1] + "." + parts[2], http.StatusUnauthorized},
		{"tenant ../t2", iss.Sign(t, tenanttest.Claims{Subject: "../t2"}), http.StatusForbidden},
		{"tenant t1/x", iss.Sign(t, tenanttest.Claims{Subject: "t1/x"}), http.StatusForbidden},
		{"tenant ..", iss.Sign(t, tenanttest.Claims{Subject: ".."}), http.StatusForbidden},
		{"tenant with a NUL", iss.Sign(t, tenanttest.Claims{Subject: "t1\x00"}), http.StatusForbidden},
		{"tenant with a newline", iss.Sign(t, tenanttest.Claims{Subject: "t1\n"}), http.StatusForbidden},
		{"tenant with a backslash", iss.Sign(t, tenanttest.Claims{Subject: `..\t2`}), http.StatusForbidden},
		{"tenant with an authority", iss.Sign(t, tenanttest.Claims{Subject: "t1@evil"}), http.StatusForbidden},
		{"tenant of 65 bytes", iss.Sign(t, tenanttest.Claims{Subject: strings.Repeat("t", 65)}), http.StatusForbidden},
		{"no granted scope", iss.Sign(t, tenanttest.Claims{Subject: "t1", Scope: "email"}), http.StatusForbidden},
	}
	for _, tc := range cases {
		code, challenge := postMCP(t, srv.url, tc.token, nil)
		if code != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, code, tc.want)
		}
		if !strings.Contains(challenge, `resource_metadata="`) {
			t.Errorf("%s: WWW-Authenticate %q names no resource metadata", tc.name, challenge)
		}
	}
	// A header or a query parameter naming a tenant is no identity.
	for _, h := range []map[string]string{{"X-Tenant": "t1"}, {"X-Forwarded-User": "t1"}, {"Mcp-Session-Id": "t1"}} {
		if code, _ := postMCP(t, srv.url, "", h); code != http.StatusUnauthorized {
			t.Errorf("no token, header %v: status %d, want 401", h, code)
		}
	}
	if code, _ := postMCP(t, srv.url+"?tenant=t1", "", nil); code != http.StatusUnauthorized {
		t.Errorf("no token, ?tenant=t1: status %d, want 401", code)
	}
}

// TestTenantIsolation: tenant t1 reads, lists, searches, finds, stats and
// writes only below its own prefix, by every path spelling, at both
// transport protocol versions; t2's data and that of the prefix
// neighbour t10 stay out of reach, and a header naming another tenant
// changes nothing.
func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	iss := tenanttest.NewIssuer(t)
	base := t.TempDir()
	srv := startJWTServe(t, iss, base)
	tenants := filepath.Join(base, "tenants")
	spellings := []string{
		"/ws/../t2/secret.txt", "../t10/secret.txt", "/ws/../../tenants/t2/secret.txt", "/../t10/secret.txt",
		"/ws/./../t10/secret.txt", "/ws/%2e%2e/t2/secret.txt", "ws/..\\t2\\secret.txt", "/t10/secret.txt",
		filepath.Join(tenants, "t2", "secret.txt"), filepath.Join(tenants, "t10", "secret.txt"),
	}
	for _, version := range []string{"2026-07-28", "2025-06-18"} {
		t.Run(version, func(t *testing.T) {
			// A header naming t2 rides along with t1's token.
			cs, err := connectTenant(t, srv.url, iss.Sign(t, tenanttest.Claims{Subject: "t1"}), version, headerTransport{"X-Tenant", "t2"})
			if err != nil {
				t.Fatalf("connect: %v\n%s", err, srv.log())
			}
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Errorf("protocol %s, want %s", got, version)
			}
			if text, isErr := callTenantTool(t, cs, "read_file", map[string]any{"path": "/ws/secret.txt"}); isErr || !strings.Contains(text, "secret of t1") {
				t.Errorf("t1 reads its own file: %q", text)
			}
			for _, p := range spellings {
				for _, call := range []struct {
					tool string
					args map[string]any
				}{
					{"read_file", map[string]any{"path": p}},
					{"file_info", map[string]any{"path": p}},
					{"list_directory", map[string]any{"path": filepath.Dir(p)}},
					{"copy_file", map[string]any{"source": p, "destination": "/ws/stolen.txt"}},
				} {
					if text, _ := callTenantTool(t, cs, call.tool, call.args); leaksOthers(text) {
						t.Errorf("%s %v reached another tenant: %q", call.tool, call.args, text)
					}
				}
				callTenantTool(t, cs, "write_file", map[string]any{"path": p, "content": "written by t1\n"})
			}
			for _, call := range []struct {
				tool string
				args map[string]any
			}{
				{"search_files", map[string]any{"path": "/", "pattern": "secret"}},
				{"grep", map[string]any{"path": "/", "pattern": "secret of"}},
				{"find_files", map[string]any{"path": "/", "pattern": "**"}},
				{"list_files", map[string]any{"path": "/"}},
				{"list_directory", map[string]any{"path": "/"}},
			} {
				text, isErr := callTenantTool(t, cs, call.tool, call.args)
				if leaksOthers(text) {
					t.Errorf("%s %v names another tenant's file: %q", call.tool, call.args, text)
				}
				if isErr || !strings.Contains(text, "only-t1.txt") && !strings.Contains(text, "secret of t1") && !strings.Contains(text, "ws") {
					t.Errorf("%s %v does not find t1's own files: %q", call.tool, call.args, text)
				}
			}
		})
	}
	// Nothing t1 wrote landed outside t1's directory.
	for _, tn := range []string{"t2", "t10"} {
		filepath.WalkDir(filepath.Join(tenants, tn), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if data, _ := os.ReadFile(p); string(data) != "secret of "+tn+"\n" {
					t.Errorf("%s holds %q", p, data)
				}
			}
			return nil
		})
	}
	entries, _ := os.ReadDir(tenants)
	if len(entries) != 3 {
		t.Errorf("the tenants' directory holds %d entries, want t1, t2, t10", len(entries))
	}
}

// leaksOthers reports whether a result shows a file or the content of
// tenant t2 or t10.
func leaksOthers(text string) bool {
	for _, s := range []string{"secret of t2", "secret of t10", "only-t2", "only-t10"} {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

// headerTransport adds one header to every request.
type headerTransport struct{ key, value string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.key, h.value)
	return http.DefaultTransport.RoundTrip(r)
}

// TestTenantSessionBinding: with --stateful, a session id used with the
// token of another tenant (here the prefix neighbour t10) is refused.
func TestTenantSessionBinding(t *testing.T) {
	t.Parallel()
	iss := tenanttest.NewIssuer(t)
	srv := startJWTServe(t, iss, t.TempDir(), "--stateful")
	cs, err := connectTenant(t, srv.url, iss.Sign(t, tenanttest.Claims{Subject: "t1"}), "2025-06-18", nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, srv.log())
	}
	id := cs.ID()
	if id == "" {
		t.Fatal("no session id in stateful mode")
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`
	for _, tc := range []struct {
		name, token string
		want        int
	}{
		{"t10's token", iss.Sign(t, tenanttest.Claims{Subject: "t10"}), http.StatusForbidden},
		{"t2's token", iss.Sign(t, tenanttest.Claims{Subject: "t2"}), http.StatusForbidden},
		{"no token", "", http.StatusUnauthorized},
	} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.url, strings.NewReader(list))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want || strings.Contains(string(body), "read_file") {
			t.Errorf("%s on t1's session: %d %q, want %d", tc.name, resp.StatusCode, body, tc.want)
		}
	}
	if text, isErr := callTenantTool(t, cs, "read_file", map[string]any{"path": "/ws/secret.txt"}); isErr || !strings.Contains(text, "secret of t1") {
		t.Errorf("t1's own session after the attempts: %q", text)
	}
}

// TestTenantTokenType: with --oidc-token-type at+jwt, an ID token the
// same issuer made for the same audience (typ JWT) is refused with 401,
// an access token (typ at+jwt) is served.
func TestTenantTokenType(t *testing.T) {
	t.Parallel()
	iss := tenanttest.NewIssuer(t)
	srv := startJWTServe(t, iss, t.TempDir(), "--oidc-token-type", "at+jwt")
	if code, _ := postMCP(t, srv.url, iss.Sign(t, tenanttest.Claims{Subject: "t1"}), nil); code != http.StatusUnauthorized {
		t.Errorf("a token of typ JWT: status %d, want 401", code)
	}
	if code, _ := postMCP(t, srv.url, iss.Sign(t, tenanttest.Claims{Subject: "t1", Type: "at+jwt"}), nil); code != http.StatusOK {
		t.Errorf("a token of typ at+jwt: status %d, want 200", code)
	}
}
