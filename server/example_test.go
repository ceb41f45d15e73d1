package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/audit"
	"github.com/fencefs/fencefs/quota"
	"github.com/fencefs/fencefs/server"
	"github.com/fencefs/fencefs/tenant"
)

// tenantHeader adds the header the example's authenticator trusts.
type tenantHeader string

func (h tenantHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Tenant", string(h))
	return http.DefaultTransport.RoundTrip(r)
}

// Example serves two tenants, each in a directory of its own, behind the
// platform's own authentication (here a header a gateway in front has
// verified), with a quota and an audit log, on the platform's own mux.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "fencefs-example-")
	defer os.RemoveAll(dir)
	for _, t := range []string{"acme", "globex"} {
		os.MkdirAll(filepath.Join(dir, t), 0o755)
	}
	ws, _ := tenant.ParseTemplate("local:" + filepath.Join(dir, tenant.Placeholder))
	auditLog, _ := audit.OpenFile(filepath.Join(dir, "audit.jsonl"), nil)
	defer auditLog.Close()

	srv, err := server.New(ctx, server.Config{
		TenantMounts: []server.TenantMount{{Name: "ws", Template: ws}},
		Identity: server.AuthenticatorFunc(func(r *http.Request) (*tenant.Identity, error) {
			t, err := tenant.ParseID(r.Header.Get("X-Tenant"))
			if err != nil {
				return nil, fmt.Errorf("%w: %v", server.ErrUnauthenticated, err)
			}
			return &tenant.Identity{Subject: "agent", Tenant: t, Scopes: []string{tenant.ScopeRead, tenant.ScopeWrite}}, nil
		}),
		Audit: server.Audit{Log: auditLog},
		Quota: quota.Limits{MaxFiles: 1},
	})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.MCPHandler())
	hs := httptest.NewServer(mux)
	defer hs.Close()

	call := func(t, tool string, args map[string]any) {
		tr := &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp", HTTPClient: &http.Client{Transport: tenantHeader(t)}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil).Connect(ctx, tr, nil)
		if err != nil {
			panic(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s %s: error=%v\n", t, tool, res.IsError)
	}
	call("acme", "write_file", map[string]any{"path": "/ws/a.txt", "content": "a\n"})
	call("acme", "write_file", map[string]any{"path": "/ws/b.txt", "content": "b\n"}) // over the quota
	call("globex", "read_file", map[string]any{"path": "/ws/a.txt"})                  // acme's file
	_, err = os.Stat(filepath.Join(dir, "acme", "a.txt"))
	fmt.Println("acme/a.txt stored:", err == nil)
	// Output:
	// acme write_file: error=false
	// acme write_file: error=true
	// globex read_file: error=true
	// acme/a.txt stored: true
}
