package tenant

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// mcpServer is the server side of TestMiddlewareMCP: the SDK's streamable
// handler behind Middleware, with one MCP server per tenant from a Cache.
type mcpServer struct {
	url    string
	builds atomic.Int32
}

func newMCPServer(t *testing.T, v Verifier, stateless bool) *mcpServer {
	t.Helper()
	s := &mcpServer{}
	servers, err := NewCache(CacheOptions[ID, *mcp.Server]{Size: 8, Build: func(_ context.Context, tenant ID) (*mcp.Server, error) {
		s.builds.Add(1)
		srv := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
		mcp.AddTool(srv, &mcp.Tool{Name: "whoami"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			id, err := FromTokenInfo(req.Extra.TokenInfo)
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s %s served by %s", id.Tenant, id.Subject, tenant)}}}, nil, nil
		})
		return srv, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	handler := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		srv, _ := ValueFrom[*mcp.Server](r.Context())
		return srv // nil (refused by the SDK) only without WithValue
	}, &mcp.StreamableHTTPOptions{Stateless: stateless})
	mux := http.NewServeMux()
	mux.Handle("/mcp", Middleware(v, &MiddlewareOptions{ResourceMetadataURL: "https://files.example.test/.well-known/oauth-protected-resource", Grants: DefaultGrants()})(WithValue(servers, handler)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.url = srv.URL + "/mcp"
	return s
}

func connect(t *testing.T, url, token string) (*mcp.ClientSession, error) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"}, nil)
	return client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}, MaxRetries: -1, DisableStandaloneSSE: true,
	}, nil)
}

func whoami(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("whoami: %+v", res.Content)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

// post sends one JSON-RPC request by hand and returns the status and the
// WWW-Authenticate header.
func post(t *testing.T, url, token, session string) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
}

// TestMiddlewareMCP drives the SDK's streamable handler behind Middleware
// with the SDK's client and with raw requests.
func TestMiddlewareMCP(t *testing.T) {
	f := newJWTFixture(t, JWTConfig{TenantClaim: "tenant"})
	token := func(tenant any, scope string) string {
		return sign(t, f.rsa, "r1", f.claims(tenant, func(c map[string]any) { c["scope"] = scope }))
	}
	t1 := token("t1", "files:read")
	t10 := token("t10", "files:read files:write")

	for _, stateless := range []bool{true, false} {
		t.Run(fmt.Sprintf("stateless=%v", stateless), func(t *testing.T) {
			s := newMCPServer(t, f.verifier, stateless)
			refusals := []struct {
				name, token string
				status      int
				challenge   string
			}{
				{"no token", "", 401, `Bearer resource_metadata="https://files.example.test/.well-known/oauth-protected-resource"`},
				{"forged", sign(t, newKey(t, jose.RS256), "r1", f.claims("t1", nil)), 401, "resource_metadata="},
				{"tenant ../t2", token("../t2", "files:read"), 403, `error="insufficient_scope"`},
				{"tenant t1/x", token("t1/x", "files:read"), 403, `error="insufficient_scope"`},
				{"no granting scope", token("t1", "profile"), 403, `error="insufficient_scope"`},
			}
			for _, r := range refusals {
				status, challenge := post(t, s.url, r.token, "")
				if status != r.status || !strings.Contains(challenge, r.challenge) {
					t.Errorf("%s: %d %q, want %d %q", r.name, status, challenge, r.status, r.challenge)
				}
			}
			if n := s.builds.Load(); n != 0 {
				t.Fatalf("refused requests built %d tenant servers", n)
			}

			cs1, err := connect(t, s.url, t1)
			if err != nil {
				t.Fatal(err)
			}
			defer cs1.Close()
			cs10, err := connect(t, s.url, t10)
			if err != nil {
				t.Fatal(err)
			}
			defer cs10.Close()
			for range 3 {
				if got := whoami(t, cs1); got != "t1 alice served by t1" {
					t.Fatalf("t1 got %q", got)
				}
				if got := whoami(t, cs10); got != "t10 alice served by t10" {
					t.Fatalf("t10 got %q", got)
				}
			}
			if n := s.builds.Load(); n != 2 {
				t.Fatalf("%d tenant servers built for two tenants", n)
			}
			if stateless {
				return
			}
			// A session is bound to its tenant and subject: t10's token
			// cannot ride t1's session, though both subjects are "alice".
			if status, _ := post(t, s.url, t10, cs1.ID()); status != http.StatusForbidden {
				t.Fatalf("t1's session with t10's token: %d, want 403", status)
			}
			if status, _ := post(t, s.url, t1, cs1.ID()); status != http.StatusOK {
				t.Fatalf("t1's session with t1's token: %d, want 200", status)
			}
		})
	}
}

// TestWithValue: the tenant's value is built once, held for the request
// and released after it; a failed build is 503, its cause logged and
// not sent; no Identity is 401.
func TestWithValue(t *testing.T) {
	path := t.TempDir() + "/tokens.yaml"
	writeTokenFile(t, path, "tokens:\n  - {name: a, sha256: "+HashToken("tok-t1")+", tenant: t1, scopes: [files:read]}\n"+
		"  - {name: b, sha256: "+HashToken("tok-bad")+", tenant: broken, scopes: [files:read]}\n")
	v, err := NewStatic(path)
	if err != nil {
		t.Fatal(err)
	}
	cl := &closer{}
	var logged bytes.Buffer
	values, err := NewCache(CacheOptions[ID, string]{Size: 4, OnEvict: cl.close, Logger: slog.New(slog.NewTextHandler(&logged, nil)), Build: func(_ context.Context, id ID) (string, error) {
		if id == "broken" {
			return "", fmt.Errorf("storage of %s unreachable", id)
		}
		return "value of " + string(id), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		val, ok := ValueFrom[string](r.Context())
		if !ok {
			t.Error("no value in the request")
		}
		values.Remove("t1") // evicted while the request holds it
		if got := cl.list(); len(got) != 0 {
			t.Errorf("closed %q while a request held it", got)
		}
		fmt.Fprint(w, val)
	})
	srv := httptest.NewServer(Middleware(v, nil)(WithValue(values, inner)))
	defer srv.Close()
	bare := httptest.NewServer(WithValue(values, inner))
	defer bare.Close()

	get := func(url, token string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var sb strings.Builder
		_, _ = io.Copy(&sb, resp.Body)
		return resp.StatusCode, sb.String()
	}
	if code, body := get(srv.URL, "tok-t1"); code != 200 || body != "value of t1" {
		t.Fatalf("t1: %d %q", code, body)
	}
	if got := cl.list(); len(got) != 1 || got[0] != "value of t1" {
		t.Fatalf("after the request: closed %q", got)
	}
	// The build's error goes to the log, never to the client.
	if code, body := get(srv.URL, "tok-bad"); code != http.StatusServiceUnavailable || strings.Contains(body, "unreachable") || !strings.Contains(body, "broken") {
		t.Fatalf("failed build: %d %q, want 503 naming the tenant only", code, body)
	}
	if !strings.Contains(logged.String(), "storage of broken unreachable") {
		t.Errorf("the build's error is not in the log: %q", logged.String())
	}
	if code, _ := get(bare.URL, "tok-t1"); code != http.StatusUnauthorized {
		t.Fatalf("without Middleware: %d, want 401", code)
	}
}
