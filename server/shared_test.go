package server_test

import (
	"context"
	"fmt"
	"io"
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

// sharedFixture serves tenants t1..tN over stateless HTTP, each a
// directory holding a.txt that names its tenant; a tenant whose id starts
// with "ro" gets the read scope only.
type sharedFixture struct {
	dir string
	srv *server.Server
	hs  *httptest.Server
}

func newSharedFixture(t *testing.T, tenants ...string) *sharedFixture {
	t.Helper()
	dir := t.TempDir()
	for _, id := range tenants {
		if err := os.MkdirAll(filepath.Join(dir, id), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, id, "a.txt"), []byte("I am "+id+"\n"), 0o644)
	}
	ws, err := tenant.ParseTemplate("local:" + filepath.Join(dir, tenant.Placeholder))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(context.Background(), server.Config{
		TenantMounts: []server.TenantMount{{Name: "ws", Template: ws}},
		Stateless:    true,
		Identity: server.AuthenticatorFunc(func(r *http.Request) (*tenant.Identity, error) {
			id, err := tenant.ParseID(r.Header.Get("X-Tenant"))
			if err != nil {
				return nil, fmt.Errorf("%w: %v", server.ErrUnauthenticated, err)
			}
			scopes := []string{tenant.ScopeRead, tenant.ScopeWrite}
			if strings.HasPrefix(string(id), "ro") {
				scopes = scopes[:1]
			}
			return &tenant.Identity{Subject: "agent", Tenant: id, Scopes: scopes}, nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	f := &sharedFixture{dir: dir, srv: srv, hs: httptest.NewServer(srv.Handler())}
	t.Cleanup(f.hs.Close)
	return f
}

// session connects as tenant id with protocol version (the latest when
// empty) and client options opts.
func (f *sharedFixture) session(t *testing.T, id, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: f.hs.URL + "/mcp", HTTPClient: &http.Client{Transport: asTenant(id)}, DisableStandaloneSSE: true, MaxRetries: -1}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// sharedServers reads the gauge of the MCP servers the tenants share.
func (f *sharedFixture) sharedServers(t *testing.T) string {
	t.Helper()
	res, err := http.Get(f.hs.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "fencefs_shared_mcp_servers "); ok {
			return v
		}
	}
	t.Fatalf("no fencefs_shared_mcp_servers in /metrics:\n%s", body)
	return ""
}

func callText(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// TestTenantsShareMCPServers: tenants of one tool list share one MCP
// server, yet each call reaches only its own tenant's files, and a tenant
// whose scopes grant other tools gets the server of its list, whose calls
// it cannot pass beyond.
func TestTenantsShareMCPServers(t *testing.T) {
	f := newSharedFixture(t, "t1", "t2", "t3", "ro1")
	for _, id := range []string{"t1", "t2", "t3"} {
		cs := f.session(t, id, "", nil)
		text, isErr := callText(t, cs, "read_file", map[string]any{"path": "/ws/a.txt"})
		if isErr || !strings.Contains(text, "I am "+id) {
			t.Fatalf("%s read /ws/a.txt: %q (error %v), want its own file", id, text, isErr)
		}
		if _, isErr := callText(t, cs, "write_file", map[string]any{"path": "/ws/b.txt", "content": "by " + id + "\n"}); isErr {
			t.Fatalf("%s could not write", id)
		}
	}
	for _, id := range []string{"t1", "t2", "t3"} {
		data, err := os.ReadFile(filepath.Join(f.dir, id, "b.txt"))
		if err != nil || string(data) != "by "+id+"\n" {
			t.Errorf("%s/b.txt = %q, %v: a write reached another tenant", id, data, err)
		}
	}
	if got := f.sharedServers(t); got != "1" {
		t.Errorf("three tenants of one tool list: %s shared MCP servers, want 1", got)
	}
	ro := f.session(t, "ro1", "", nil)
	text, isErr := callText(t, ro, "read_file", map[string]any{"path": "/ws/a.txt"})
	if isErr || !strings.Contains(text, "I am ro1") {
		t.Fatalf("ro1 read /ws/a.txt: %q (error %v)", text, isErr)
	}
	tools, err := ro.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name == "write_file" {
			t.Error("a read-only tenant is offered write_file")
		}
	}
	res, err := ro.CallTool(context.Background(), &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "/ws/b.txt", "content": "x"}})
	if err == nil && !res.IsError {
		t.Error("a read-only tenant wrote")
	}
	if _, err := os.Stat(filepath.Join(f.dir, "ro1", "b.txt")); err == nil {
		t.Error("a read-only tenant's write reached storage")
	}
	if got := f.sharedServers(t); got != "2" {
		t.Errorf("two tool lists: %s shared MCP servers, want 2", got)
	}
}

// TestSharedServerSubscriptions: two tenants subscribe to the same URI
// (each its own /ws/a.txt) through one shared server, over stateless
// HTTP with protocol 2026-07-28; a write by one notifies its own
// subscriber only. The SDK sends a server's update to every session
// subscribed to the URI on that server, so without the audience the
// other tenant would hear of it.
func TestSharedServerSubscriptions(t *testing.T) {
	f := newSharedFixture(t, "t1", "t2")
	var mu sync.Mutex
	got := map[string][]string{}
	heard := map[string]chan struct{}{"t1": make(chan struct{}, 8), "t2": make(chan struct{}, 8)}
	listen := func(id string) *mcp.ClientSession {
		cs := f.session(t, id, "2026-07-28", &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			mu.Lock()
			got[id] = append(got[id], req.Params.URI)
			mu.Unlock()
			heard[id] <- struct{}{}
		}})
		if err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "fencefs:///ws/a.txt"}); err != nil {
			t.Fatalf("%s subscribe: %v", id, err)
		}
		return cs
	}
	listen("t1")
	listen("t2")
	w1 := f.session(t, "t1", "2026-07-28", nil)
	if text, isErr := callText(t, w1, "write_file", map[string]any{"path": "/ws/a.txt", "content": "changed\n"}); isErr {
		t.Fatalf("t1 could not write: %s", text)
	}
	<-heard["t1"]
	// t2's own change comes after anything t1's could have sent it, on
	// the same stream: when it arrives, a leaked update would be there.
	w2 := f.session(t, "t2", "2026-07-28", nil)
	if _, isErr := callText(t, w2, "write_file", map[string]any{"path": "/ws/a.txt", "content": "changed\n"}); isErr {
		t.Fatal("t2 could not write")
	}
	<-heard["t2"]
	mu.Lock()
	defer mu.Unlock()
	for _, id := range []string{"t1", "t2"} {
		if len(got[id]) != 1 || got[id][0] != "fencefs:///ws/a.txt" {
			t.Errorf("%s heard %q, want its own change only", id, got[id])
		}
	}
	if got := f.sharedServers(t); got != "1" {
		t.Errorf("%s shared MCP servers, want 1", got)
	}
}

// TestSharedServerConcurrentTenants: tenants calling at once through one
// shared server, each first call building its target while others run,
// each reach only their own files (run with -race).
func TestSharedServerConcurrentTenants(t *testing.T) {
	ids := []string{"t1", "t2", "t3", "t4"}
	f := newSharedFixture(t, ids...)
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for _, id := range ids {
		for w := range 4 {
			cs := f.session(t, id, "", nil)
			wg.Go(func() {
				for i := range 5 {
					name := fmt.Sprintf("/ws/w%d-%d.txt", w, i)
					if text, isErr := callTextNoFatal(cs, "write_file", map[string]any{"path": name, "content": id + "\n"}); isErr {
						errs <- id + " write: " + text
						return
					}
					if text, isErr := callTextNoFatal(cs, "read_file", map[string]any{"path": "/ws/a.txt"}); isErr || !strings.Contains(text, "I am "+id) {
						errs <- id + " read another's file: " + text
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	for _, id := range ids {
		for w := range 4 {
			data, err := os.ReadFile(filepath.Join(f.dir, id, fmt.Sprintf("w%d-4.txt", w)))
			if err != nil || string(data) != id+"\n" {
				t.Errorf("%s/w%d-4.txt = %q, %v", id, w, data, err)
			}
		}
	}
	if got := f.sharedServers(t); got != "1" {
		t.Errorf("%s shared MCP servers, want 1", got)
	}
}

// callTextNoFatal is callText for other goroutines: an error of the call
// is returned as a failed result's text.
func callTextNoFatal(cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return err.Error(), true
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}
