package security

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/mcpserver"
	"github.com/fencefs/fencefs/tenant/tenanttest"
)

// The tests of this file attack what the MCP server holds and shows for a
// client beyond the tools (issue 20, classes 4, 7 and 8), through the
// built command.

// TestMCPSubscriptionsBounded (class 4): a session's resource
// subscriptions are judged by the policy as resources/read is (a denied
// path, even one that does not exist, is refused), each URI is bounded in
// length, their count per session is bounded, and a session subscribing
// over and over is rate limited; so one client cannot make the server
// hold memory without bound.
func TestMCPSubscriptionsBounded(t *testing.T) {
	t.Parallel()
	root := cmdRoot(t)
	srv := startHTTPCmd(t, root, "--stateful", "--deny", "secret/**")
	cs, err := connectTenant(t, srv.url, "", "2025-11-25", nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := cs.InitializeResult().Capabilities.Resources; r == nil || !r.Subscribe {
		t.Fatalf("stateful HTTP declares resources %+v, want subscriptions", r)
	}
	sub := func(uri string) error {
		// A server that logs what it is sent (a 1 MB URI) may stall;
		// every call is bounded.
		ctx, cancel := context.WithTimeout(t.Context(), cmdDeadline)
		defer cancel()
		return cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
	}
	refused := func(what string, err error, want string) {
		t.Helper()
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || !strings.Contains(werr.Message, want) {
			t.Errorf("%s: %v, want a refusal with %q", what, err, want)
		}
	}
	if err := sub(mcpserver.FileURI("a.txt")); err != nil {
		t.Fatalf("subscribe to a readable file: %v", err)
	}
	refused("a denied path", sub(mcpserver.FileURI("secret/none.txt")), "secret/none.txt")
	refused("a 1 MB URI", sub(mcpserver.FileURI(strings.Repeat("x", 1<<20))), fmt.Sprint(mcpserver.MaxSubscriptionURIBytes))
	// a.txt holds one; fill the rest with files that may appear.
	for i := 1; i < mcpserver.DefaultMaxSubscriptions; i++ {
		if err := sub(mcpserver.FileURI(fmt.Sprintf("n%03d.txt", i))); err != nil {
			t.Fatalf("subscription %d: %v", i+1, err)
		}
	}
	refused("one subscription over the limit", sub(mcpserver.FileURI("over.txt")), fmt.Sprintf("%d subscriptions", mcpserver.DefaultMaxSubscriptions))
	// The burst is spent; the bucket refills at SubscribeRate a second,
	// so of ten times the burst some are refused however slow this runs.
	err = nil
	for i := 0; i < 10*mcpserver.SubscribeBurst && err == nil; i++ {
		err = sub(mcpserver.FileURI("a.txt"))
	}
	refused("subscribing over and over", err, "Too many subscribe requests")
}

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
