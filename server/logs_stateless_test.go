package server_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/server"
	"github.com/fencefs/fencefs/tenant"
)

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// asTenant sends the header the test's authenticator trusts.
type asTenant string

func (h asTenant) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Tenant", string(h))
	return http.DefaultTransport.RoundTrip(r)
}

// TestStatelessLogLines serves tenants over stateless HTTP with the log
// at its default level: calls that go well write no line at all (the
// SDK's connecting, connected and disconnected lines included), and a
// tenant whose storage cannot be opened writes lines that each name the
// tenant and the request id.
func TestStatelessLogLines(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "t1"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "t1", "a.txt"), []byte("a\n"), 0o644)
	ws, err := tenant.ParseTemplate("local:" + filepath.Join(dir, tenant.Placeholder))
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	srv, err := server.New(ctx, server.Config{
		TenantMounts: []server.TenantMount{{Name: "ws", Template: ws}},
		Stateless:    true,
		Logger:       slog.New(server.LogHandler{Handler: slog.NewTextHandler(&logs, nil)}),
		Identity: server.AuthenticatorFunc(func(r *http.Request) (*tenant.Identity, error) {
			id, err := tenant.ParseID(r.Header.Get("X-Tenant"))
			if err != nil {
				return nil, fmt.Errorf("%w: %v", server.ErrUnauthenticated, err)
			}
			return &tenant.Identity{Subject: "agent", Tenant: id, Scopes: []string{tenant.ScopeRead, tenant.ScopeWrite}}, nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv.MCPHandler())
	defer hs.Close()
	session := func(id string) (*mcp.ClientSession, error) {
		tr := &mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: &http.Client{Transport: asTenant(id)}, DisableStandaloneSSE: true, MaxRetries: -1}
		return mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, tr, nil)
	}
	cs, err := session("t1")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "/ws/a.txt"}})
		if err != nil || res.IsError {
			t.Fatalf("read_file: %v, %+v", err, res)
		}
	}
	cs.Close()
	if got := logs.String(); got != "" {
		t.Fatalf("calls that went well wrote log lines at the default level:\n%s", got)
	}
	if cs, err := session("ghost"); err == nil {
		cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "/ws/a.txt"}})
		cs.Close()
	}
	got := strings.TrimSpace(logs.String())
	if got == "" {
		t.Fatal("a tenant whose storage could not be opened wrote no log line")
	}
	for _, line := range strings.Split(got, "\n") {
		if !strings.Contains(line, "tenant=ghost") || !strings.Contains(line, "request_id=") {
			t.Errorf("a line without its tenant and request id: %s", line)
		}
	}
}
