// Command platform is a platform's own HTTP server with fencefs inside:
// its own mux and its own API keys choose the tenant, and each of two
// tenants gets a workspace of its own under -dir, with quotas and an
// audit log.
//
//	go run ./examples/platform -dir /tmp/platform
//	# MCP endpoint: http://127.0.0.1:8080/agents/mcp, header X-Api-Key: key-alice
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/fencefs/fencefs/audit"
	"github.com/fencefs/fencefs/quota"
	"github.com/fencefs/fencefs/server"
	"github.com/fencefs/fencefs/tenant"
)

// users are the platform's API keys: who holds each, in which tenant,
// allowed what.
var users = map[string]tenant.Identity{
	"key-alice": {Subject: "alice", Tenant: "acme", Scopes: []string{tenant.ScopeRead, tenant.ScopeWrite}},
	"key-bob":   {Subject: "bob", Tenant: "globex", Scopes: []string{tenant.ScopeRead}},
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	dir := flag.String("dir", "", "where the tenants' workspaces and the audit log live")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *addr, *dir); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, addr, dir string) error {
	dir, _ = filepath.Abs(dir)
	for _, id := range users { // the platform provisions each workspace
		if err := os.MkdirAll(filepath.Join(dir, "tenants", string(id.Tenant)), 0o755); err != nil {
			return err
		}
	}
	ws, err := tenant.ParseTemplate("local:" + filepath.Join(dir, "tenants", tenant.Placeholder))
	if err != nil {
		return err
	}
	auditLog, err := audit.OpenFile(filepath.Join(dir, "audit.jsonl"), nil)
	if err != nil {
		return err
	}
	defer auditLog.Close()
	fs, err := server.New(ctx, server.Config{
		TenantMounts: []server.TenantMount{{Name: "ws", Template: ws}},
		Identity: server.AuthenticatorFunc(func(r *http.Request) (*tenant.Identity, error) {
			if id, ok := users[r.Header.Get("X-Api-Key")]; ok { // the platform's own authentication
				return &id, nil
			}
			return nil, fmt.Errorf("%w: unknown API key", server.ErrUnauthenticated)
		}),
		Audit: server.Audit{Log: auditLog},
		Quota: quota.Limits{MaxFiles: 1000, MaxBytes: 10 << 20, MaxConcurrent: 4},
	})
	if err != nil {
		return err
	}
	defer fs.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "the platform's own pages") })
	mux.Handle("/agents/mcp", fs.MCPHandler())
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Printf("MCP endpoint: http://%s/agents/mcp\n", ln.Addr())
	return server.Serve(ctx, ln, mux, server.ServeOptions{})
}
