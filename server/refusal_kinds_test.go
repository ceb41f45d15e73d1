package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/audit"
	"github.com/fencefs/fencefs/mcpserver"
	"github.com/fencefs/fencefs/quota"
	"github.com/fencefs/fencefs/server"
	"github.com/fencefs/fencefs/tenant"
	"github.com/fencefs/fencefs/tools"
)

// who is what the test's authenticator trusts of a request: the tenant
// and scopes a gateway in front verified, changed between calls.
type who struct {
	tenant atomic.Value // string
	scopes atomic.Value // string, space separated
}

func newWho(t, scopes string) *who {
	w := &who{}
	w.tenant.Store(t)
	w.scopes.Store(scopes)
	return w
}

func (w *who) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Tenant", w.tenant.Load().(string))
	r.Header.Set("X-Scopes", w.scopes.Load().(string))
	return http.DefaultTransport.RoundTrip(r)
}

// byHeaders is the platform's authenticator of the test: the identity
// its gateway headers name.
var byHeaders = server.AuthenticatorFunc(func(r *http.Request) (*tenant.Identity, error) {
	id, err := tenant.ParseID(r.Header.Get("X-Tenant"))
	if err != nil {
		return nil, errors.Join(server.ErrUnauthenticated, err)
	}
	return &tenant.Identity{Subject: "agent", Tenant: id, Scopes: strings.Fields(r.Header.Get("X-Scopes"))}, nil
})

// lastError is the outermost link of a platform's own chain: it keeps
// the Go error of each refused result, as a wrapper around the server's
// links sees it.
type lastError struct {
	mu  sync.Mutex
	err error
}

func (l *lastError) Wrap(_ *tools.Tool, next mcp.ToolHandler) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := next(ctx, req)
		l.mu.Lock()
		l.err = nil
		if res != nil && res.IsError {
			l.err = res.GetError()
		}
		l.mu.Unlock()
		return res, err
	}
}

func (l *lastError) get() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// holdFirst is a link inside the quota that holds the first call of
// read_file until release is closed, after telling entered.
type holdFirst struct {
	once             sync.Once
	entered, release chan struct{}
}

func (h *holdFirst) Wrap(t *tools.Tool, next mcp.ToolHandler) mcp.ToolHandler {
	if t.Name != "read_file" {
		return next
	}
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		first := false
		h.once.Do(func() { first = true })
		if first {
			close(h.entered)
			<-h.release
		}
		return next(ctx, req)
	}
}

// connect opens an MCP session over HTTP to url as w says.
func connect(t *testing.T, url string, w *who) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: w}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// wantRefused calls tool and wants a refusal of kind as the client sees
// it: isError, fencefs/outcome refused, fencefs/kind kind, and text
// holding text.
func wantRefused(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, kind tools.Kind, text string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	got := ""
	if len(res.Content) > 0 {
		got = res.Content[0].(*mcp.TextContent).Text
	}
	if !res.IsError || mcpserver.ResultKind(res) != kind || res.Meta[mcpserver.MetaOutcome] != string(tools.OutcomeRefused) || !strings.Contains(got, text) {
		t.Errorf("%s: isError %v, _meta %v, text %q; want a refusal of kind %q with %q", tool, res.IsError, res.Meta, got, kind, text)
	}
}

// TestLinkRefusalKinds: every refusal the server's own links make (a
// stored-usage quota, usage that cannot be counted, a rate limit, the
// concurrency limit, a scope judged per request, a broken audit log) has
// a kind a client reads from the result's _meta, and a Go error a
// platform's own link around them tests with errors.Is and errors.As
// (the kind, and the cause: *quota.LimitError, ErrNotGranted,
// ErrAuditBroken); its audit line names the kind. The server is a
// platform's own: its mux, its authenticator, its chain over a metered
// namespace, served over HTTP to the MCP SDK's client.
func TestLinkRefusalKinds(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ns, err := server.OpenNamespace(ctx, server.NamespaceConfig{Root: dir, Metered: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	cannotCount := errors.New("usage store down")
	qm, err := quota.New(quota.Options{
		Overrides: map[string]quota.Limits{
			"bytes":  {MaxBytes: 10},
			"broken": {MaxBytes: 10},
			"rate":   {CallsPerSecond: 0.001, Burst: 1},
			"one":    {MaxConcurrent: 1},
		},
		Usage: quota.UsageFunc(func(ctx context.Context, t string) (quota.Usage, error) {
			if t == "broken" {
				return quota.Usage{}, cannotCount
			}
			return ns.Usage(ctx)
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	var auditBuf bytes.Buffer
	outer := &lastError{}
	hold := &holdFirst{entered: make(chan struct{}), release: make(chan struct{})}
	chain := server.Chain{outer, server.Audit{Log: audit.New(&auditBuf, audit.Genesis)}, server.Scopes{}, server.Quota{Manager: qm}, hold}
	srv := mcpserver.New(ns.Tools(), mcpserver.Options{Wrap: chain.Wrap})
	mux := http.NewServeMux()
	mux.Handle("/mcp", server.Identify(byHeaders, nil)(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)))
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close) // after the sessions close (cleanups run last first)
	url := hs.URL + "/mcp"
	rw := tenant.ScopeRead + " " + tenant.ScopeWrite

	wantErr := func(name string, kind tools.Kind, cause error, limit string) {
		t.Helper()
		err := outer.get()
		var le *quota.LimitError
		switch {
		case !errors.Is(err, kind) || tools.KindOf(err) != kind || tools.OutcomeOf(err) != tools.OutcomeRefused:
			t.Errorf("%s: the Go error %v is of kind %q (outcome %s), want %q", name, err, tools.KindOf(err), tools.OutcomeOf(err), kind)
		case cause != nil && !errors.Is(err, cause):
			t.Errorf("%s: the Go error %v does not wrap %v", name, err, cause)
		case limit != "" && (!errors.As(err, &le) || le.Limit != limit):
			t.Errorf("%s: the Go error %v is no *quota.LimitError of %q", name, err, limit)
		}
		for _, k := range tools.Kinds {
			if k != kind && errors.Is(err, k) {
				t.Errorf("%s: the Go error %v is also %q", name, err, k)
			}
		}
	}

	t.Run("stored bytes", func(t *testing.T) {
		cs := connect(t, url, newWho("bytes", rw))
		wantRefused(t, cs, "write_file", map[string]any{"path": "big.txt", "content": strings.Repeat("x", 20)}, tools.KindQuota, "limit of 10 stored bytes")
		wantErr("stored bytes", tools.KindQuota, quota.ErrLimit, quota.LimitBytes)
		if _, err := os.Stat(filepath.Join(dir, "big.txt")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the refused write is on disk: %v", err)
		}
	})
	t.Run("usage not counted", func(t *testing.T) {
		cs := connect(t, url, newWho("broken", rw))
		wantRefused(t, cs, "write_file", map[string]any{"path": "u.txt", "content": "u"}, tools.KindUnavailable, "could not be counted")
		wantErr("usage not counted", tools.KindUnavailable, nil, "")
		if errors.Is(outer.get(), cannotCount) {
			t.Error("the usage store's own error reaches the Go error of the refusal; it is the log's")
		}
	})
	t.Run("rate", func(t *testing.T) {
		cs := connect(t, url, newWho("rate", rw))
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_directory", Arguments: map[string]any{"path": "."}}); err != nil || res.IsError {
			t.Fatalf("the first call: %v %+v", err, res)
		}
		wantRefused(t, cs, "list_directory", map[string]any{"path": "."}, tools.KindRateLimited, "calls per second")
		wantErr("rate", tools.KindRateLimited, quota.ErrLimit, quota.LimitRate)
	})
	t.Run("concurrency", func(t *testing.T) {
		held := connect(t, url, newWho("one", rw))
		done := make(chan error, 1)
		go func() {
			_, err := held.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "missing.txt"}})
			done <- err
		}()
		<-hold.entered
		cs := connect(t, url, newWho("one", rw))
		wantRefused(t, cs, "list_directory", map[string]any{"path": "."}, tools.KindRateLimited, "concurrent calls")
		wantErr("concurrency", tools.KindRateLimited, quota.ErrLimit, quota.LimitConcurrent)
		close(hold.release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
	t.Run("scope", func(t *testing.T) {
		w := newWho("scoped", rw)
		cs := connect(t, url, w) // the session offers write_file
		w.scopes.Store(tenant.ScopeRead)
		wantRefused(t, cs, "write_file", map[string]any{"path": "s.txt", "content": "s"}, tools.KindDenied, "do not grant this tool")
		wantErr("scope", tools.KindDenied, server.ErrNotGranted, "")
	})

	// Each refusal's audit line names its kind.
	kinds := map[string]int{}
	for _, l := range bytes.Split(bytes.TrimSpace(auditBuf.Bytes()), []byte("\n")) {
		var rec audit.Record
		if err := json.Unmarshal(l, &rec); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		if rec.Outcome == audit.OutcomeRefused {
			kinds[rec.Tenant+" "+rec.Kind]++
		}
	}
	for _, want := range []string{"bytes quota", "broken unavailable", "scoped denied"} {
		if kinds[want] != 1 {
			t.Errorf("audit lines of refusals by tenant and kind: %v, want one %q", kinds, want)
		}
	}
}

// TestAuditBrokenKind: a change refused because the audit log cannot be
// written is of kind unavailable, for the change that found the log
// broken and every one after it, and wraps ErrAuditBroken and the log's
// own failure.
func TestAuditBrokenKind(t *testing.T) {
	ctx := context.Background()
	f, err := os.Create(filepath.Join(t.TempDir(), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close() // every write fails: *fs.PathError, "file already closed"
	dir := t.TempDir()
	ns, err := server.OpenNamespace(ctx, server.NamespaceConfig{Root: dir, Metered: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	outer := &lastError{}
	chain := server.Chain{outer, server.Audit{Log: audit.New(f, audit.Genesis), Health: server.NewAuditHealth(nil)}}
	srv := mcpserver.New(ns.Tools(), mcpserver.Options{Wrap: chain.Wrap})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close) // after the sessions close (cleanups run last first)
	cs := connect(t, hs.URL, newWho("t", ""))
	for i := range 2 {
		wantRefused(t, cs, "write_file", map[string]any{"path": "a.txt", "content": "a"}, tools.KindUnavailable, "audit log could not be written")
		err := outer.get()
		if !errors.Is(err, tools.KindUnavailable) || !errors.Is(err, server.ErrAuditBroken) || !errors.Is(err, os.ErrClosed) {
			t.Errorf("change %d: the Go error %v is not unavailable, ErrAuditBroken and the log's failure", i, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a change reached storage with the audit log broken: %v", err)
	}
}
