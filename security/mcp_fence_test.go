package security

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/mcpserver"
	"github.com/fencefs/fencefs/tenant/tenanttest"
	"github.com/fencefs/fencefs/tools"
)

// The tests of this file attack what the MCP server holds and shows for a
// client beyond the tools (issue 20, classes 4, 7 and 8): through the
// built command, and, where the command has no flag for what is attacked
// (an approval's lifetime), through the mcpserver a platform builds.

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

// approvingServer serves every tool over the directory root with
// --approve changes (and ttl, when set) to an SDK client at version
// whose user answers with look, then accept.
func approvingServer(t *testing.T, root string, ttl time.Duration, version string, look func(message string)) *mcp.ClientSession {
	t.Helper()
	b, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	set, err := tools.New(b, tools.Options{Tools: tools.AllTools()})
	if err != nil {
		t.Fatal(err)
	}
	server := mcpserver.New(set, mcpserver.Options{Approve: mcpserver.ApproveChanges, ApprovalTTL: ttl})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			look(req.Params.Message)
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	cs, err := c.Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// TestMCPApprovalBindsWhatIsShown (class 7): an approval holds for what
// the user was shown and for a while only. The delete of a directory
// names the count and the entries it takes along, and an entry that
// appeared while the user looked makes the answer void (it was deleted
// with the rest before); an answer that comes after the approval expired
// changes nothing (approvals never expired before); a name or content
// with bidirectional, zero-width or control characters is shown escaped,
// so the name shown is the name written (a right-to-left override showed
// "evil\u202Etxt.exe" as "evilexe.txt").
func TestMCPApprovalBindsWhatIsShown(t *testing.T) {
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version+"/directory delete", func(t *testing.T) {
			root := cmdRoot(t)
			for _, f := range []string{"d/a.txt", "d/sub/b.txt"} {
				putFile(t, filepath.Join(root, f), "x\n")
			}
			var shown string
			cs := approvingServer(t, root, 0, version, func(m string) {
				shown = m
				putFile(t, filepath.Join(root, "d", "new.txt"), "arrived while the user looked\n")
			})
			text, _ := callTenantTool(t, cs, "delete_file", map[string]any{"path": "d", "recursive": true})
			if !strings.Contains(shown, "the 3 entries") || !strings.Contains(shown, "d/a.txt") || !strings.Contains(shown, "d/sub/b.txt") {
				t.Errorf("the user was shown %q, want the count and the entries", shown)
			}
			if !strings.Contains(text, "not") {
				t.Errorf("delete_file after an entry appeared: %q, want nothing deleted", text)
			}
			for _, f := range []string{"d/a.txt", "d/sub/b.txt", "d/new.txt"} {
				if _, err := os.Stat(filepath.Join(root, f)); err != nil {
					t.Errorf("%s: %v", f, err)
				}
			}

			// Asked again with nothing appearing, the same delete goes.
			cs = approvingServer(t, root, 0, version, func(m string) { shown = m })
			if text, isError := callTenantTool(t, cs, "delete_file", map[string]any{"path": "d", "recursive": true}); isError || !strings.HasPrefix(text, "Deleted directory") {
				t.Errorf("delete_file approved as shown: %q", text)
			}
			if !strings.Contains(shown, "the 4 entries") {
				t.Errorf("the user was shown %q, want 4 entries", shown)
			}
		})
		t.Run(version+"/expired", func(t *testing.T) {
			root := cmdRoot(t)
			cs := approvingServer(t, root, time.Millisecond, version, func(string) {
				time.Sleep(20 * time.Millisecond) // longer than the approval lives
			})
			before := dirState(t, root)
			text, _ := callTenantTool(t, cs, "write_file", map[string]any{"path": "a.txt", "content": "late\n"})
			if !strings.Contains(text, "approval expired") {
				t.Errorf("an answer after the approval expired: %q", text)
			}
			wantDirState(t, root, before)
		})
		t.Run(version+"/escaped", func(t *testing.T) {
			root := cmdRoot(t)
			var shown string
			cs := approvingServer(t, root, 0, version, func(m string) { shown = m })
			name := "evil\u202Etxt.exe"
			if text, isError := callTenantTool(t, cs, "write_file", map[string]any{"path": name, "content": "zero\u200Bwidth\n"}); isError {
				t.Fatalf("write_file: %s", text)
			}
			for _, raw := range []string{"\u202E", "\u200B"} {
				if strings.Contains(shown, raw) {
					t.Errorf("the user was shown a raw %U: %q", []rune(raw)[0], shown)
				}
			}
			if !strings.Contains(shown, `"evil\u{202E}txt.exe"`) || !strings.Contains(shown, `zero\u{200B}width`) {
				t.Errorf("the user was shown %q, want the name and content escaped", shown)
			}
		})
	}
}

func putFile(t *testing.T, name, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
