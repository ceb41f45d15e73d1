package mcpserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tools"
)

// TestOverHTTP serves a server per session, as the command does, over a
// real streamable HTTP server on 127.0.0.1: a change is approved by the
// user of the session that asked for it, and a session subscribed to the
// file hears of the change made in the other session.
func TestOverHTTP(t *testing.T) {
	w := newWorkspace(t, tools.Options{}, map[string]string{"f.txt": "old\n"})
	changes := NewChanges()
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		return New(w.set, Options{Approve: ApproveChanges, Resources: true, Changes: changes})
	}, nil)
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	ctx := context.Background()
	dial := func(opts *mcp.ClientOptions) *mcp.ClientSession {
		t.Helper()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "host"}, opts).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	updated := make(chan string, 10)
	watcher := dial(&mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		updated <- req.Params.URI
	}})
	if err := watcher.Subscribe(ctx, &mcp.SubscribeParams{URI: FileURI("f.txt")}); err != nil {
		t.Fatal(err)
	}
	var shown string
	writer := dial(&mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		shown = req.Params.Message
		return &mcp.ElicitResult{Action: "accept"}, nil
	}})
	res, text := call(t, writer, "write_file", map[string]any{"path": "f.txt", "content": "new\n"})
	if res.IsError || !strings.HasPrefix(text, "Wrote 4 chars (1 line) to f.txt.") || !strings.Contains(shown, "+new") {
		t.Fatalf("write_file: %q (isError %v) after showing %q", text, res.IsError, shown)
	}
	if w.read(t, "f.txt") != "new\n" {
		t.Error("the approved write did not happen")
	}
	// The watcher cannot elicit: its changes are refused.
	if res, text := call(t, watcher, "write_file", map[string]any{"path": "f.txt", "content": "mine\n"}); !res.IsError || text != noElicitation {
		t.Errorf("a change from a session without elicitation: %q (isError %v)", text, res.IsError)
	}
	select {
	case u := <-updated:
		if u != FileURI("f.txt") {
			t.Errorf("heard of %s", u)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the subscribed session heard nothing within 10s")
	}
}
