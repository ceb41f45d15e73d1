package mcpserver

import (
	"bytes"
	"context"
	"io"
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

// TestApprovalAcrossReplicas: two servers over one namespace behind one
// stateless URL, the answer to an approval reaching the server that did
// not ask. With one ApprovalKey the answer stands and the user is asked
// once; with keys of their own the second server cannot trust the state
// and asks again, and nothing is written unasked either way.
func TestApprovalAcrossReplicas(t *testing.T) {
	for _, tt := range []struct {
		name   string
		shared bool
		asks   int
	}{
		{"shared key", true, 1},
		{"keys of their own", false, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkspace(t, tools.Options{}, map[string]string{"f.txt": "old\n"})
			var key []byte
			if tt.shared {
				key = []byte("0123456789abcdef0123456789abcdef")
			}
			asker := New(w.set, Options{Approve: ApproveChanges, ApprovalKey: key})
			answerer := New(w.set, Options{Approve: ApproveChanges, ApprovalKey: key})
			handler := mcp.NewStreamableHTTPHandler(func(req *http.Request) *mcp.Server {
				body, err := io.ReadAll(req.Body)
				if err != nil {
					return nil
				}
				req.Body = io.NopCloser(bytes.NewReader(body))
				if bytes.Contains(body, []byte(`"inputResponses"`)) {
					return answerer
				}
				return asker
			}, &mcp.StreamableHTTPOptions{Stateless: true})
			srv := httptest.NewServer(handler)
			t.Cleanup(srv.Close)
			asks := 0
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "host"}, &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asks++
					return &mcp.ElicitResult{Action: "accept"}, nil
				},
			}).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			res, text := call(t, cs, "write_file", map[string]any{"path": "f.txt", "content": "new\n"})
			if res.IsError || !strings.HasPrefix(text, "Wrote 4 chars") || asks != tt.asks {
				t.Errorf("write_file: %q (isError %v) after %d asks, want %d", text, res.IsError, asks, tt.asks)
			}
			if got := w.read(t, "f.txt"); got != "new\n" {
				t.Errorf("f.txt holds %q", got)
			}
		})
	}
}
