package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
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

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// asTenant sends the header the test's authenticator trusts.
type asTenant string

func (h asTenant) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Tenant", string(h))
	return http.DefaultTransport.RoundTrip(r)
}

// TestStatelessLogLines serves tenants over stateless HTTP with the log
// at its default level: calls that go well write no line at all (the
// SDK's connecting, connected and disconnected lines included), and a
// tenant whose storage cannot be opened writes lines that each name the
// tenant and the request id.
func TestStatelessLogLines(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "t1"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "t1", "a.txt"), []byte("a\n"), 0o644)
	ws, err := tenant.ParseTemplate("local:" + filepath.Join(dir, tenant.Placeholder))
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	srv, err := server.New(ctx, server.Config{
		TenantMounts: []server.TenantMount{{Name: "ws", Template: ws}},
		Stateless:    true,
		Logger:       slog.New(server.LogHandler{Handler: slog.NewTextHandler(&logs, nil)}),
		Identity:     readWriteByHeader,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv.MCPHandler())
	defer hs.Close()
	session := func(id string) (*mcp.ClientSession, error) {
		tr := &mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: &http.Client{Transport: asTenant(id)}, DisableStandaloneSSE: true, MaxRetries: -1}
		return mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, tr, nil)
	}
	cs, err := session("t1")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "/ws/a.txt"}})
		if err != nil || res.IsError {
			t.Fatalf("read_file: %v, %+v", err, res)
		}
	}
	cs.Close()
	if got := logs.String(); got != "" {
		t.Fatalf("calls that went well wrote log lines at the default level:\n%s", got)
	}
	if cs, err := session("ghost"); err == nil {
		cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "/ws/a.txt"}})
		cs.Close()
	}
	got := strings.TrimSpace(logs.String())
	if got == "" {
		t.Fatal("a tenant whose storage could not be opened wrote no log line")
	}
	for _, line := range strings.Split(got, "\n") {
		if !strings.Contains(line, "tenant=ghost") || !strings.Contains(line, "request_id=") {
			t.Errorf("a line without its tenant and request id: %s", line)
		}
	}
}

// statelessServer serves tenants t1 and t2 (each with a.txt) over
// stateless HTTP, logging to logs at level.
func statelessServer(t *testing.T, logs io.Writer, level slog.Level) *httptest.Server {
	return logServer(t, logs, level, true)
}

// logServer is statelessServer, stateful unless stateless.
func logServer(t *testing.T, logs io.Writer, level slog.Level, stateless bool) *httptest.Server {
	t.Helper()
	dir := t.TempDir()
	for _, id := range []string{"t1", "t2"} {
		if err := os.MkdirAll(filepath.Join(dir, id), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, id, "a.txt"), []byte("a\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := tenant.ParseTemplate("local:" + filepath.Join(dir, tenant.Placeholder))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(context.Background(), server.Config{
		TenantMounts: []server.TenantMount{{Name: "ws", Template: ws}},
		Stateless:    stateless,
		Logger:       slog.New(server.LogHandler{Handler: slog.NewTextHandler(logs, &slog.HandlerOptions{Level: level})}),
		Identity:     readWriteByHeader,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	hs := httptest.NewServer(srv.MCPHandler())
	t.Cleanup(hs.Close)
	return hs
}

// postRaw posts body to the MCP endpoint as tenant id and returns the
// answer's status and the request id the server gave it.
func postRaw(t *testing.T, url, id, body string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-Tenant", id)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	rid := resp.Header.Get(server.RequestIDHeader)
	if rid == "" {
		t.Fatalf("an answer without %s", server.RequestIDHeader)
	}
	return resp.StatusCode, rid
}

// sdkBadRequests are requests over which the MCP SDK writes lines of its
// own (a duplicate initialize is an error line of the SDK's server, its
// JSON-RPC handler goroutine), or answers an error without a line.
var sdkBadRequests = map[string]struct {
	body   string
	header map[string]string
}{
	"duplicate initialize": {body: `[` + initialize(1) + `,` + initialize(2) + `]`},
	"malformed body":       {body: `{"jsonrpc":"2.0","id":1,"method":`},
	"unknown tool":         {body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":{}}}`},
	"bad session id":       {body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, header: map[string]string{"Mcp-Session-Id": "nosuch"}},
	"new protocol ping": {
		body:   `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		header: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "ping"},
	},
	"read_file": {body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"/ws/a.txt"}}}`},
}

func initialize(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, id)
}

// TestSDKLogLinesCarryCall drives requests that make the MCP SDK write
// lines of its own (it logs without the request's context, with a logger
// every tenant shares) over real HTTP, from two tenants at once, with
// the log at debug so that every SDK line shows: each line names the
// tenant and the request id of the request it belongs to, and the SDK's
// error line for a duplicate initialize shows at the default level too.
func TestSDKLogLinesCarryCall(t *testing.T) {
	var logs syncBuffer
	hs := statelessServer(t, &logs, slog.LevelDebug)
	var mu sync.Mutex
	tenantOf := map[string]string{} // request id -> tenant
	errorIDs := map[string]bool{}   // request ids of the duplicate initializes
	var wg sync.WaitGroup
	for _, id := range []string{"t1", "t2"} {
		for name, br := range sdkBadRequests {
			wg.Go(func() {
				for range 5 {
					_, rid := postRaw(t, hs.URL, id, br.body, br.header)
					mu.Lock()
					tenantOf[rid] = id
					if name == "duplicate initialize" {
						errorIDs[rid] = true
					}
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	sdkLines, errorLines := 0, map[string]bool{}
	for _, line := range lines {
		tenantAttr, rid := attr(line, "tenant"), attr(line, "request_id")
		if want, ok := tenantOf[rid]; !ok || tenantAttr != want {
			t.Errorf("a line not of its request (tenant %q, request id %q, the request's tenant %q):\n%s", tenantAttr, rid, want, line)
		}
		if strings.Contains(line, "msg=\"server connecting\"") {
			sdkLines++
		}
		if strings.Contains(line, "level=ERROR") && strings.Contains(line, "duplicate initialize request") {
			errorLines[rid] = true
		}
	}
	if sdkLines != len(tenantOf) {
		t.Errorf("%d SDK connecting lines for %d requests", sdkLines, len(tenantOf))
	}
	for rid := range errorIDs {
		if !errorLines[rid] {
			t.Errorf("no SDK error line names the duplicate initialize of request %s", rid)
		}
	}
	if len(errorLines) != len(errorIDs) {
		t.Errorf("%d SDK error lines for %d duplicate initializes", len(errorLines), len(errorIDs))
	}

	// At the default level the SDK's error line shows, with its ids,
	// and nothing else does.
	var info syncBuffer
	hs = statelessServer(t, &info, slog.LevelInfo)
	_, rid := postRaw(t, hs.URL, "t2", sdkBadRequests["duplicate initialize"].body, nil)
	got := strings.TrimSpace(info.String())
	if strings.Count(got, "\n") != 0 || !strings.Contains(got, "duplicate initialize request") ||
		attr(got, "tenant") != "t2" || attr(got, "request_id") != rid {
		t.Errorf("a duplicate initialize at the default level logged:\n%s\nwant one SDK error line with tenant=t2 request_id=%s", got, rid)
	}
}

// attr returns the value of key in a text handler's line ("" if none).
func attr(line, key string) string {
	i := strings.Index(line, " "+key+"=")
	if i < 0 {
		return ""
	}
	v := line[i+len(key)+2:]
	if j := strings.IndexByte(v, ' '); j >= 0 {
		v = v[:j]
	}
	return v
}

// TestSDKLogLinesCarryCallStateful: under stateful sessions the SDK's
// lines written while it serves a request (here a call before
// initialize, which opens a session and is refused, and a request of
// the 2026-07-28 protocol, which a stateful server rejects) carry the
// request's tenant and id too.
func TestSDKLogLinesCarryCallStateful(t *testing.T) {
	var logs syncBuffer
	hs := logServer(t, &logs, slog.LevelInfo, false)
	_, early := postRaw(t, hs.URL, "t1", sdkBadRequests["unknown tool"].body, nil)
	newPing := sdkBadRequests["new protocol ping"]
	_, rejected := postRaw(t, hs.URL, "t2", newPing.body, newPing.header)
	got := strings.TrimSpace(logs.String())
	want := map[string]string{"method invalid during initialization": early, "rejecting request with protocol version": rejected}
	tenants := map[string]string{early: "t1", rejected: "t2"}
	for _, line := range strings.Split(got, "\n") {
		rid := attr(line, "request_id")
		if tenants[rid] == "" || attr(line, "tenant") != tenants[rid] {
			t.Errorf("a line not of its request:\n%s", line)
		}
		for msg, id := range want {
			if strings.Contains(line, msg) && rid == id {
				delete(want, msg)
			}
		}
	}
	for msg, id := range want {
		t.Errorf("no line %q with request id %s in:\n%s", msg, id, got)
	}
}

// TestSDKLogLinesOfLaterSessionRequests: a stateful session's later
// requests are served by goroutines its first request started, bound to
// no request by then; the SDK's lines of them (here its error line for
// an initialize sent again in the session) name the session's tenant.
func TestSDKLogLinesOfLaterSessionRequests(t *testing.T) {
	var logs syncBuffer
	hs := logServer(t, &logs, slog.LevelInfo, false)
	sid := map[string]string{}
	for _, id := range []string{"t1", "t2"} {
		req, err := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(initialize(1)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("X-Tenant", id)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if sid[id] = resp.Header.Get("Mcp-Session-Id"); sid[id] == "" {
			t.Fatalf("tenant %s: initialize answered %s without a session", id, resp.Status)
		}
	}
	for _, id := range []string{"t2", "t1"} {
		postRaw(t, hs.URL, id, initialize(2), map[string]string{"Mcp-Session-Id": sid[id]})
	}
	got := strings.TrimSpace(logs.String())
	seen := map[string]int{}
	for _, line := range strings.Split(got, "\n") {
		if strings.Contains(line, "duplicate initialize request") {
			seen[attr(line, "tenant")]++
		}
	}
	if seen["t1"] != 1 || seen["t2"] != 1 || len(seen) != 2 {
		t.Errorf("the SDK's lines of later session requests by tenant: %v, want one each for t1 and t2, in:\n%s", seen, got)
	}
}
