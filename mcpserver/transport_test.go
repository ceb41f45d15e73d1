package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tools"
)

// serveHTTP serves New(set, opts) over streamable HTTP on 127.0.0.1,
// stateless or not.
func serveHTTP(t *testing.T, set *tools.Set, opts Options, stateless bool) string {
	t.Helper()
	server := New(set, opts)
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: stateless})
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return srv.URL
}

func dialHTTP(t *testing.T, url, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, opts).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestStatelessHTTP: over stateless HTTP a 2025-11-25 client, which no
// update and no elicitation can reach outside the answer to its request,
// is offered no subscriptions (and one asked for is refused saying why)
// and has a change that needs approval refused saying that the transport,
// not the client, cannot carry it, although it declares elicitation. A
// 2026-07-28 client over the same server gets its change approved.
func TestStatelessHTTP(t *testing.T) {
	w := newWorkspace(t, tools.Options{}, map[string]string{"f.txt": "old\n"})
	url := serveHTTP(t, w.set, Options{Resources: true, Approve: ApproveChanges, Stateless: true}, true)
	asked := 0
	elicit := &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked++
		return &mcp.ElicitResult{Action: "accept"}, nil
	}}

	old := dialHTTP(t, url, "2025-11-25", elicit)
	caps := old.InitializeResult().Capabilities
	if caps.Resources == nil || caps.Resources.Subscribe {
		t.Errorf("2025-11-25 over stateless HTTP: resources capability %+v, want resources without subscribe", caps.Resources)
	}
	// The SDK's client does not send what is not declared; a client
	// that does is refused.
	if msg := post(t, url, "2025-11-25", "resources/subscribe", `{"uri":"fencefs:///f.txt"}`); msg.Error == nil || !strings.Contains(msg.Error.Message, "stateless HTTP") {
		t.Errorf("subscribe over stateless HTTP at 2025-11-25: %+v, want a refusal naming the transport", msg)
	}
	res, text := call(t, old, "write_file", map[string]any{"path": "f.txt", "content": "new\n"})
	if !res.IsError || text != noStatelessElicitation || asked != 0 {
		t.Errorf("a change at 2025-11-25 over stateless HTTP: %q (isError %v, asked %d), want %q", text, res.IsError, asked, noStatelessElicitation)
	}
	if got := w.read(t, "f.txt"); got != "old\n" {
		t.Fatalf("f.txt holds %q after a refused change", got)
	}

	cur := dialHTTP(t, url, "", elicit)
	if v := cur.InitializeResult().ProtocolVersion; v < newProtocol {
		t.Fatalf("the latest client negotiated %s", v)
	}
	res, text = call(t, cur, "write_file", map[string]any{"path": "f.txt", "content": "new\n"})
	if res.IsError || asked != 1 || w.read(t, "f.txt") != "new\n" {
		t.Errorf("a change at %s over stateless HTTP: %q (isError %v, asked %d)", cur.InitializeResult().ProtocolVersion, text, res.IsError, asked)
	}
}

// TestStatefulHTTPSubscribe: stateful HTTP and stdio-like transports
// carry updates, so they declare subscriptions at 2025-11-25.
func TestStatefulHTTPSubscribe(t *testing.T) {
	w := newWorkspace(t, tools.Options{}, map[string]string{"f.txt": "old\n"})
	url := serveHTTP(t, w.set, Options{Resources: true}, false)
	cs := dialHTTP(t, url, "2025-11-25", nil)
	if r := cs.InitializeResult().Capabilities.Resources; r == nil || !r.Subscribe {
		t.Errorf("stateful HTTP: resources capability %+v, want subscribe", r)
	}
	if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: FileURI("f.txt")}); err != nil {
		t.Errorf("subscribe over stateful HTTP: %v", err)
	}
}

// TestStatefulDiscover: a stateful HTTP server cannot serve 2026-07-28,
// so it answers server/discover as a server that does not speak it
// (an unsupported-version error listing the versions it does), not with
// a discovery result whose versions a 2026-07-28 client cannot use; the
// SDK's client then initializes at 2025-11-25.
func TestStatefulDiscover(t *testing.T) {
	w := newWorkspace(t, tools.Options{}, nil)
	url := serveHTTP(t, w.set, Options{}, false)
	msg := post(t, url, "2026-07-28", "server/discover", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
		`"io.modelcontextprotocol/clientInfo":{"name":"probe","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}`)
	if msg.Error == nil || msg.Error.Code != mcp.CodeUnsupportedProtocolVersion || len(msg.Error.Data.Supported) == 0 {
		t.Errorf("server/discover on stateful HTTP: %s, want error %d with the supported versions", msg.raw, mcp.CodeUnsupportedProtocolVersion)
	} else {
		for _, v := range msg.Error.Data.Supported {
			if v >= newProtocol {
				t.Errorf("stateful HTTP lists %s", v)
			}
		}
	}
	cs := dialHTTP(t, url, "", nil)
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Errorf("the SDK's latest client negotiated %q with a stateful server, want 2025-11-25", v)
	}
}

// TestUndeclaredMethods: a server declares neither prompts (no skills)
// nor logging (logs go to its Logger), and answers neither's methods;
// nor the resources methods without resources or skills.
func TestUndeclaredMethods(t *testing.T) {
	w := newWorkspace(t, tools.Options{}, map[string]string{"f.txt": "x\n"})
	cs := connectVersion(t, New(w.set, Options{}), nil, "2025-11-25")
	caps := cs.InitializeResult().Capabilities
	if caps.Prompts != nil || caps.Logging != nil || caps.Resources != nil {
		t.Fatalf("capabilities %+v declare prompts, logging or resources", caps)
	}
	ctx := t.Context()
	notFound := func(what string, err error) {
		t.Helper()
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeMethodNotFound {
			t.Errorf("%s: %v, want method not found", what, err)
		}
	}
	_, err := cs.ListPrompts(ctx, nil)
	notFound("prompts/list", err)
	_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "x"})
	notFound("prompts/get", err)
	notFound("logging/setLevel", cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}))
	_, err = cs.ListResources(ctx, nil)
	notFound("resources/list", err)
	_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: FileURI("f.txt")})
	notFound("resources/read", err)
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Errorf("tools/list: %v", err)
	}
}

// rpcAnswer is a JSON-RPC answer as a client reads it.
type rpcAnswer struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
		Data    struct {
			Supported []string `json:"supported"`
		} `json:"data"`
	} `json:"error"`
	raw []byte
}

// post sends one JSON-RPC request as a client of version would, with no
// session, and returns the answer.
func post(t *testing.T, url, version, method, params string) rpcAnswer {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
	req, err := http.NewRequestWithContext(t.Context(), "POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", version)
	req.Header.Set("Mcp-Method", method)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// The answer is JSON or one SSE event.
	if i := bytes.Index(raw, []byte("data: ")); i >= 0 {
		raw = bytes.TrimSpace(raw[i+len("data: "):])
	}
	msg := rpcAnswer{raw: raw}
	if err := json.Unmarshal(raw, &msg); err != nil {
		t.Fatalf("%s: %s: %v", method, raw, err)
	}
	return msg
}

// TestPrivateCache: every cacheable answer (a file, the lists, the
// discovery) is private to the caller's client: a server serves the
// namespace and tools of the callers it was built for, so no
// intermediary may serve one caller's answer to another.
func TestPrivateCache(t *testing.T) {
	w := newWorkspace(t, tools.Options{}, map[string]string{"f.txt": "mine\n"})
	cs := connect(t, New(w.set, Options{Resources: true}), nil)
	ctx := t.Context()
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: FileURI("f.txt")})
	if err != nil {
		t.Fatal(err)
	}
	tl, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, scope := range map[string]string{"resources/read": read.CacheScope, "tools/list": tl.CacheScope, "resources/templates/list": rt.CacheScope} {
		if scope != "private" {
			t.Errorf("%s: cacheScope %q, want private", name, scope)
		}
	}
}

// TestStatelessHTTPFallback: with a fallback that cancels, a change
// asked over stateless HTTP at 2025-11-25 is cancelled with a reason that
// names the transport, whatever reason the fallback gave.
func TestStatelessHTTPFallback(t *testing.T) {
	w := newWorkspace(t, tools.Options{}, map[string]string{"f.txt": "old\n"})
	url := serveHTTP(t, w.set, Options{Approve: ApproveChanges, Stateless: true, ApprovalFallback: func(_ context.Context, r *tools.ChangeRequest) error {
		r.Cancel("this client cannot ask the user")
		return nil
	}}, true)
	cs := dialHTTP(t, url, "2025-11-25", nil)
	res, text := call(t, cs, "write_file", map[string]any{"path": "f.txt", "content": "new\n"})
	if res.IsError || text != "['f.txt' was not written: "+reasonStateless+"]" {
		t.Errorf("write_file: %q (isError %v)", text, res.IsError)
	}
	if got := w.read(t, "f.txt"); got != "old\n" {
		t.Errorf("f.txt holds %q", got)
	}
}

// TestStatelessHTTPSubscribeLatest: over stateless HTTP a 2026-07-28
// client subscribes through subscriptions/listen, whose stream carries
// the update of a change made by another client.
func TestStatelessHTTPSubscribeLatest(t *testing.T) {
	w := newWorkspace(t, tools.Options{}, map[string]string{"f.txt": "old\n"})
	url := serveHTTP(t, w.set, Options{Resources: true, Stateless: true}, true)
	updated := make(chan string, 10)
	watcher := dialHTTP(t, url, "", &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		updated <- req.Params.URI
	}})
	if r := watcher.InitializeResult().Capabilities.Resources; r == nil || !r.Subscribe {
		t.Fatalf("2026-07-28 over stateless HTTP: resources %+v, want subscribe", r)
	}
	if err := watcher.Subscribe(t.Context(), &mcp.SubscribeParams{URI: FileURI("f.txt")}); err != nil {
		t.Fatal(err)
	}
	writer := dialHTTP(t, url, "", nil)
	if res, text := call(t, writer, "write_file", map[string]any{"path": "f.txt", "content": "new\n"}); res.IsError {
		t.Fatal(text)
	}
	select {
	case u := <-updated:
		if u != FileURI("f.txt") {
			t.Errorf("heard of %s", u)
		}
	case <-time.After(10 * time.Second): // a bound against a hang
		t.Fatal("the subscribed client heard nothing within 10s")
	}
}
