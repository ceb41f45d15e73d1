//go:build !fencefs_oneshot

package main

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tenant/tenanttest"
)

// bearer adds a bearer token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.token == "" {
		return http.DefaultTransport.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func connectAs(t testing.TB, url, token, version string) (*mcp.ClientSession, error) {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1, HTTPClient: &http.Client{Transport: bearer{token}}}
	return newClient().Connect(t.Context(), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
}

// startTenantServe starts serve --http with JWT auth from iss and one
// tenant mount per tenant under base/tenants/{tenant}.
func startTenantServe(t *testing.T, iss *tenanttest.Issuer, base string, args ...string) *httpServe {
	t.Helper()
	for _, tn := range []string{"t1", "t2", "t10"} {
		dir := filepath.Join(base, "tenants", tn)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "secret.txt"), "secret of "+tn+"\n")
	}
	return startServe(t, append([]string{"serve", "--http", "127.0.0.1:0", "--tools", allTools(),
		"--auth", "jwt", "--oidc-issuer", iss.URL, "--oidc-audience", iss.Audience,
		"--tenant-mount", "ws=local:" + filepath.Join(base, "tenants", "{tenant}")}, args...)...)
}

// TestServeHTTPAuth drives serve --http --auth jwt with the SDK client at
// both transport protocol versions: the metadata names the issuer, each
// tenant works in its own directory, a files:read token gets no writing
// tool, and the run's audit log verifies. The refused tokens and the
// attacks on isolation are security.TestTenantTokenRefusals and
// security.TestTenantIsolation.
func TestServeHTTPAuth(t *testing.T) {
	t.Parallel()
	iss := tenanttest.NewIssuer(t)
	base := t.TempDir()
	auditFile := filepath.Join(base, "audit.jsonl")
	h := startTenantServe(t, iss, base, "--audit", auditFile)
	good := iss.Sign(t, tenanttest.Claims{Subject: "t1"})
	// The metadata names the issuer.
	resp, err := http.Get(strings.TrimSuffix(h.url, "/mcp") + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if !slices.Equal(meta.AuthorizationServers, []string{iss.URL}) || meta.Resource != h.url {
		t.Errorf("protected-resource metadata: %+v", meta)
	}

	for _, version := range []string{"2026-07-28", "2025-06-18"} {
		t.Run(version, func(t *testing.T) {
			ctx := t.Context()
			t1, err := connectAs(t, h.url, good, version)
			if err != nil {
				t.Fatalf("connect: %v\n%s", err, h.stderr.String())
			}
			defer t1.Close()
			if got := t1.InitializeResult().ProtocolVersion; got != version {
				t.Errorf("protocol %s, want %s", got, version)
			}
			if text := callOK(t, ctx, t1, "read_file", map[string]any{"path": "/ws/secret.txt"}); !strings.Contains(text, "secret of t1") {
				t.Errorf("t1 reads %q", text)
			}
			callOK(t, ctx, t1, "write_file", map[string]any{"path": "/ws/" + version + ".txt", "content": "x"})
			if _, err := os.Stat(filepath.Join(base, "tenants", "t1", version+".txt")); err != nil {
				t.Errorf("t1's write is not in t1's directory: %v", err)
			}

			reader, err := connectAs(t, h.url, iss.Sign(t, tenanttest.Claims{Subject: "t2", Scope: "files:read"}), version)
			if err != nil {
				t.Fatal(err)
			}
			defer reader.Close()
			list, err := reader.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range list.Tools {
				if tool.Name == "write_file" {
					t.Errorf("files:read offers write_file")
				}
			}
			if text := callOK(t, ctx, reader, "read_file", map[string]any{"path": "/ws/secret.txt"}); !strings.Contains(text, "secret of t2") {
				t.Errorf("t2 reads %q", text)
			}
		})
	}
	checkAudit(t, auditFile)
	for _, p := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(strings.TrimSuffix(h.url, "/mcp") + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %s", p, resp.Status)
		}
	}
}

// checkAudit verifies the audit log of a run with fencefs audit verify,
// looks for a line of tenant t1's write, and checks that an edited copy
// fails.
func checkAudit(t *testing.T, file string) {
	t.Helper()
	checkAuditFile(t, file)
}

// checkAuditFile verifies file with fencefs audit verify, and checks
// that a copy with one line edited fails.
func checkAuditFile(t *testing.T, file string) {
	t.Helper()
	out, err := exec.Command(binary, "audit", "verify", file).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ok: ") {
		t.Fatalf("audit verify: %v\n%s", err, out)
	}
	data := readFile(t, file)
	if !strings.Contains(data, `"tenant":"t1"`) || !strings.Contains(data, `"tool":"write_file"`) {
		t.Errorf("the audit log has no write of t1:\n%s", data)
	}
	tampered := filepath.Join(t.TempDir(), "tampered.jsonl")
	writeFile(t, tampered, strings.Replace(data, `"tenant":"t1"`, `"tenant":"t2"`, 1))
	out, err = exec.Command(binary, "audit", "verify", tampered).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "line ") {
		t.Errorf("audit verify of an edited log: %v\n%s", err, out)
	}
}
