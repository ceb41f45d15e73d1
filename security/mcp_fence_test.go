package security

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/mcpserver"
	"github.com/fencefs/fencefs/tenant/tenanttest"
)

// The tests of this file attack what the MCP server holds and shows for a
// client beyond the tools (issue 20, classes 4, 7 and 8), through the
// built command.

// TestMCPFileResourcesPrivate (class 8): a tenant's file, read as a
// resource, is answered with cacheScope private, never public, so no
// cache between the client and the server may hand it to another tenant;
// the tool list, which a tenant's scopes shape, is private too.
func TestMCPFileResourcesPrivate(t *testing.T) {
	t.Parallel()
	iss := tenanttest.NewIssuer(t)
	srv := startJWTServe(t, iss, t.TempDir())
	cs, err := connectTenant(t, srv.url, iss.Sign(t, tenanttest.Claims{Subject: "t1", Scope: "files:read"}), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := cs.InitializeResult().ProtocolVersion; v < "2026-07-28" {
		t.Fatalf("negotiated %s; cacheScope is a field of 2026-07-28", v)
	}
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: mcpserver.FileURI("/ws/secret.txt")})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, "secret of t1") {
		t.Fatalf("read %+v", res.Contents)
	}
	if res.CacheScope != "private" {
		t.Errorf("a tenant's file resource: cacheScope %q, want private", res.CacheScope)
	}
	tl, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if tl.CacheScope != "private" {
		t.Errorf("a tenant's tools/list: cacheScope %q, want private", tl.CacheScope)
	}
}
