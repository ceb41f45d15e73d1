package mcpserver

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tools"
)

type tenantKey struct{}

// sharedTenants serves two workspaces, "a" and "b", each holding f.txt
// naming its tenant, through one NewShared server that finds the target
// from the connection's context; a context without a tenant finds none.
func sharedTenants(t *testing.T) (*mcp.Server, map[string]*workspace) {
	t.Helper()
	ws := map[string]*workspace{}
	targets := map[string]*Target{}
	for _, id := range []string{"a", "b"} {
		ws[id] = newWorkspace(t, tools.Options{}, map[string]string{"f.txt": "tenant " + id + "\n"})
		targets[id] = &Target{Set: ws[id].set}
	}
	server := NewShared(ws["a"].set, Options{Resources: true}, func(ctx context.Context) (*Target, error) {
		id, _ := ctx.Value(tenantKey{}).(string)
		if tg := targets[id]; tg != nil {
			return tg, nil
		}
		return nil, errors.New("no tenant")
	})
	return server, ws
}

// connectAs connects a client of protocol 2025-11-25 to server as tenant
// id.
func connectAs(t *testing.T, server *mcp.Server, id string, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(context.WithValue(ctx, tenantKey{}, id), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, copts).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// callTool calls name and returns its text and whether it failed.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, text := call(t, cs, name, args)
	return text, res.IsError
}

// TestSharedTargets: each session of a shared server reads and writes
// its own target's files, by tools and by resources/read; a request
// whose target cannot be found fails and touches nothing.
func TestSharedTargets(t *testing.T) {
	server, ws := sharedTenants(t)
	ctx := context.Background()
	for _, id := range []string{"a", "b"} {
		cs := connectAs(t, server, id, nil)
		text, isErr := callTool(t, cs, "read_file", map[string]any{"path": "f.txt"})
		if isErr || !strings.Contains(text, "tenant "+id) {
			t.Errorf("%s read_file: %q", id, text)
		}
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: FileURI("f.txt")})
		if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != "tenant "+id+"\n" {
			t.Errorf("%s resources/read: %v, %+v", id, err, res)
		}
		if _, isErr := callTool(t, cs, "write_file", map[string]any{"path": "g.txt", "content": id + "\n"}); isErr {
			t.Errorf("%s write_file failed", id)
		}
	}
	for _, id := range []string{"a", "b"} {
		if got := ws[id].read(t, "g.txt"); got != id+"\n" {
			t.Errorf("%s/g.txt = %q", id, got)
		}
	}
	nobody := connectAs(t, server, "", nil)
	if _, err := nobody.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "h.txt", "content": "x"}}); err == nil {
		t.Error("a call without a target succeeded")
	}
	if _, err := nobody.ReadResource(ctx, &mcp.ReadResourceParams{URI: FileURI("f.txt")}); err == nil {
		t.Error("a resources/read without a target succeeded")
	}
}

// TestSharedUpdatesStayWithTheirTarget: sessions of two targets
// subscribe to the same URI on one shared server; a change in one target
// reaches its own subscriber only, though the SDK sends a server's
// update to every session subscribed to the URI.
func TestSharedUpdatesStayWithTheirTarget(t *testing.T) {
	server, _ := sharedTenants(t)
	ctx := context.Background()
	var mu sync.Mutex
	heard := map[string]int{}
	got := map[string]chan struct{}{"a": make(chan struct{}, 4), "b": make(chan struct{}, 4)}
	sessions := map[string]*mcp.ClientSession{}
	for _, id := range []string{"a", "b"} {
		sessions[id] = connectAs(t, server, id, &mcp.ClientOptions{ResourceUpdatedHandler: func(context.Context, *mcp.ResourceUpdatedNotificationRequest) {
			mu.Lock()
			heard[id]++
			mu.Unlock()
			got[id] <- struct{}{}
		}})
		if err := sessions[id].Subscribe(ctx, &mcp.SubscribeParams{URI: FileURI("f.txt")}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"a", "b"} {
		if text, isErr := callTool(t, sessions[id], "write_file", map[string]any{"path": "f.txt", "content": "changed\n"}); isErr {
			t.Fatalf("%s write_file: %s", id, text)
		}
		// One stream per session, in order: when b hears of its own
		// change, an update of a's would have come before it.
		<-got[id]
	}
	mu.Lock()
	defer mu.Unlock()
	if heard["a"] != 1 || heard["b"] != 1 {
		t.Errorf("updates heard: %v, want one each (its own)", heard)
	}
}
