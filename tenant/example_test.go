package tenant_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/fencefs/fencefs/tenant"
	"github.com/fencefs/fencefs/tools"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

func ExampleParseID() {
	for _, s := range []string{"t1", "../t2", "t1/x", ""} {
		_, err := tenant.ParseID(s)
		fmt.Printf("%q: %v\n", s, err)
	}
	// Output:
	// "t1": <nil>
	// "../t2": not a safe tenant id: "../t2" starts with '.'
	// "t1/x": not a safe tenant id: "t1/x" has a path separator '/' at byte 2 (allowed: letters, digits, '.', '_', '-')
	// "": not a safe tenant id: empty
}

func ExampleParseTemplate() {
	ws, err := tenant.ParseTemplate("ws=s3://bucket/tenants/{tenant}/ws?region=eu-west-1")
	if err != nil {
		log.Fatal(err)
	}
	shared, err := tenant.ParseTemplate("shared=local:/srv/shared:ro")
	if err != nil {
		log.Fatal(err)
	}
	id, err := tenant.ParseID("t1")
	if err != nil {
		log.Fatal(err)
	}
	spec, _ := ws.Expand(id)
	prefix, _ := ws.Prefix(id)
	fmt.Println(spec)
	fmt.Println(prefix)
	fmt.Println(ws.Shared(), shared.Shared())

	_, err = tenant.ParseTemplate("ws=s3://bucket/tenants/t-{tenant}/ws")
	fmt.Println(err)
	// Output:
	// ws=s3://bucket/tenants/t1/ws?region=eu-west-1
	// ws=s3://bucket/tenants/t1/
	// false true
	// tenant: template "ws=s3://bucket/tenants/t-{tenant}/ws": {tenant} at byte 25 does not follow '/' or ':'
}

func ExampleNewStatic() {
	dir, err := os.MkdirTemp("", "tokens")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "tokens.yaml")
	file := fmt.Sprintf("tokens:\n  - name: ci-bot\n    sha256: %s\n    tenant: t1\n    scopes: [files:read]\n",
		tenant.HashToken("s3cr3t-0123456789abcdef0123456789abcdef"))
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		log.Fatal(err)
	}

	// The server calls v.Reload() on SIGHUP.
	v, err := tenant.NewStatic(path)
	if err != nil {
		log.Fatal(err)
	}
	id, err := v.Verify(context.Background(), "s3cr3t-0123456789abcdef0123456789abcdef")
	fmt.Println(id.Tenant, id.Subject, id.Scopes, err)
	_, err = v.Verify(context.Background(), "guess")
	fmt.Println(tenant.StatusCode(err), err)
	// Output:
	// t1 ci-bot [files:read] <nil>
	// 401 invalid token: unknown token
}

// ExampleNewJWT configures verification of an OAuth issuer's access tokens,
// the tenant taken from its "org_id" claim. It needs the issuer, so it is
// not run.
func ExampleNewJWT() {
	v, err := tenant.NewJWT(context.Background(), tenant.JWTConfig{
		Issuer:      "https://login.example.com",
		Audience:    "https://files.example.com/mcp",
		TenantClaim: "org_id",
		Algorithms:  []string{"RS256", "ES256"},
		HTTPClient:  &http.Client{Timeout: 10 * time.Second},
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = v
}

// ExampleMiddleware puts a Verifier in front of an HTTP handler, with the
// RFC 9728 metadata that points MCP clients to the authorization server.
func ExampleMiddleware() {
	dir, err := os.MkdirTemp("", "tokens")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "tokens.yaml")
	file := fmt.Sprintf("tokens:\n  - {name: bot, sha256: %s, tenant: t1, scopes: [files:read]}\n", tenant.HashToken("tok-1"))
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		log.Fatal(err)
	}
	v, err := tenant.NewStatic(path)
	if err != nil {
		log.Fatal(err)
	}

	mux := http.NewServeMux()
	mux.Handle("/.well-known/oauth-protected-resource", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:             "https://files.example.com/mcp",
		AuthorizationServers: []string{"https://login.example.com"},
		ScopesSupported:      tenant.DefaultGrants().Scopes(),
	}))
	protect := tenant.Middleware(v, &tenant.MiddlewareOptions{
		ResourceMetadataURL: "https://files.example.com/.well-known/oauth-protected-resource",
		Grants:              tenant.DefaultGrants(),
	})
	mux.Handle("/mcp", protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := tenant.FromContext(r.Context())
		if err != nil {
			http.Error(w, err.Error(), tenant.StatusCode(err))
			return
		}
		fmt.Fprintf(w, "tenant %s may use %v", id.Tenant, tenant.DefaultGrants().Tools(id.Scopes, tools.DefaultTools()))
	})))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	for _, token := range []string{"", "tok-1"} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/mcp", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		resp.Body.Close()
		fmt.Println(resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	// Output:
	// 401 Bearer resource_metadata="https://files.example.com/.well-known/oauth-protected-resource"
	// 200
}

func ExampleNewCache() {
	sets, err := tenant.NewCache(tenant.CacheOptions[tenant.ID, string]{
		Size: 1000,
		Build: func(ctx context.Context, t tenant.ID) (string, error) {
			fmt.Println("building", t)
			return "tool set of " + string(t), nil
		},
		OnEvict: func(t tenant.ID, set string) { fmt.Println("closing", set) },
	})
	if err != nil {
		log.Fatal(err)
	}
	for range 2 {
		set, release, err := sets.Get(context.Background(), "t1")
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(set)
		release()
	}
	sets.Close()
	// Output:
	// building t1
	// tool set of t1
	// tool set of t1
	// closing tool set of t1
}

func ExampleGrants_Tools() {
	g := tenant.DefaultGrants()
	fmt.Println(g.Tools([]string{"files:read"}, tools.DefaultTools()))
	fmt.Println(g.Tools([]string{"files:read", "files:write"}, tools.DefaultTools()))
	// Output:
	// [read_file list_directory search_files find_files file_info]
	// [read_file write_file edit_file list_directory search_files find_files create_directory file_info]
}

func ExampleIdentity_LogValue() {
	logger := slog.New(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // a fixed output for the example
			}
			return a
		},
	}))
	id := &tenant.Identity{Issuer: "https://login.example.com", Subject: "alice", Tenant: "t1", Scopes: []string{"files:read"}}
	logger.Info("call", "caller", id, "tool", "read_file")
	// Output:
	// {"level":"INFO","msg":"call","caller":{"tenant":"t1","subject":"alice","issuer":"https://login.example.com","scopes":"files:read"},"tool":"read_file"}
}

func ExampleNewGrants() {
	g, err := tenant.NewGrants(map[string][]string{
		"files:read":  {"read"},
		"files:edit":  {"read", "edit_file"},
		"files:admin": {"all"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(g.Tools([]string{"files:edit"}, tools.DefaultTools()))
	_, err = tenant.NewGrants(map[string][]string{"files:read": {"read_fiel"}})
	fmt.Println(err != nil)
	// Output:
	// [read_file edit_file list_directory search_files find_files file_info]
	// true
}

func ExamplePolicy_Narrow() {
	ps, err := tenant.NewPolicies(map[string]tenant.Policy{
		"t1": {Deny: []string{"/ws/private/"}, Tools: []string{"read", "write_file"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	server := tools.Options{Denied: []string{"**/.ssh"}, Tools: []string{"read_file", "write_file", "edit_file", "grep"}}
	opts := ps.For("t1").Narrow(server)
	fmt.Println(opts.Denied, opts.Tools)
	opts = ps.For("t2").Narrow(server)
	fmt.Println(opts.Denied, opts.Tools)
	// Output:
	// [**/.ssh ws/private] [read_file write_file grep]
	// [**/.ssh] [read_file write_file edit_file grep]
}
