package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/mcpserver"
	"github.com/fencefs/fencefs/quota"
	"github.com/fencefs/fencefs/server"
	"github.com/fencefs/fencefs/telemetry"
	"github.com/fencefs/fencefs/tools"
)

// The caller's trace: a platform's span that fencefs's spans continue.
const (
	callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan  = "00f067aa0ba902b7"
	traceparent = "00-" + callerTrace + "-" + callerSpan + "-01"
)

type tenantKey struct{}

// fixture is a local workspace of one file served through a traced tool
// set.
type fixture struct {
	exp *tracetest.InMemoryExporter
	tr  *telemetry.Tracing
	set *tools.Set
}

func newFixture(t *testing.T, paths bool) *fixture {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello\nworld\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	tr := telemetry.New(telemetry.Options{TracerProvider: tp, Paths: paths,
		Tenant: func(ctx context.Context) string { s, _ := ctx.Value(tenantKey{}).(string); return s }})
	set, err := tools.New(tr.Backend(b, "work"), tools.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{exp: exp, tr: tr, set: set}
}

// connect serves the fixture's tools, each wrapped by the tracing link,
// to an SDK client over in-memory transports.
func (f *fixture) connect(t *testing.T) *mcp.ClientSession {
	t.Helper()
	server := mcpserver.New(f.set, mcpserver.Options{Wrap: f.tr.Wrap})
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.WithValue(context.Background(), tenantKey{}, "acme")
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func attr(s sdktrace.ReadOnlySpan, key attribute.Key) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// toolSpan returns the one span of a tool call and the storage spans
// under it, failing unless every span is of one trace.
func toolSpan(t *testing.T, exp *tracetest.InMemoryExporter) (sdktrace.ReadOnlySpan, []sdktrace.ReadOnlySpan) {
	t.Helper()
	var call sdktrace.ReadOnlySpan
	var storage []sdktrace.ReadOnlySpan
	for _, s := range exp.GetSpans().Snapshots() {
		switch {
		case strings.HasPrefix(s.Name(), "tools/call "):
			if call != nil {
				t.Fatalf("two tool spans: %s and %s", call.Name(), s.Name())
			}
			call = s
		case strings.HasPrefix(s.Name(), "storage "):
			storage = append(storage, s)
		default:
			t.Fatalf("unexpected span %q", s.Name())
		}
	}
	if call == nil {
		t.Fatal("no tool span")
	}
	for _, s := range storage {
		if s.Parent().SpanID() != call.SpanContext().SpanID() || s.SpanContext().TraceID() != call.SpanContext().TraceID() {
			t.Errorf("storage span %s is not a child of the tool span", s.Name())
		}
	}
	return call, storage
}

func TestReadSpanContinuesMetaTrace(t *testing.T) {
	f := newFixture(t, false)
	cs := f.connect(t)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "a.txt"},
		Meta: mcp.Meta{"traceparent": traceparent}})
	if err != nil || res.IsError {
		t.Fatalf("read_file: %v %+v", err, res)
	}
	call, storage := toolSpan(t, f.exp)
	if got := call.SpanContext().TraceID().String(); got != callerTrace {
		t.Errorf("trace %s, want the caller's %s", got, callerTrace)
	}
	if got := call.Parent().SpanID().String(); got != callerSpan || !call.Parent().IsRemote() {
		t.Errorf("parent %s (remote %v), want the caller's span %s", got, call.Parent().IsRemote(), callerSpan)
	}
	for key, want := range map[attribute.Key]string{telemetry.AttrTool: "read_file", telemetry.AttrOutcome: "ok", telemetry.AttrTenant: "acme"} {
		if v, _ := attr(call, key); v.AsString() != want {
			t.Errorf("%s = %q, want %q", key, v.AsString(), want)
		}
	}
	if v, _ := attr(call, telemetry.AttrResultBytes); v.AsInt64() <= 0 {
		t.Errorf("response bytes %d", v.AsInt64())
	}
	if _, ok := attr(call, telemetry.AttrPaths); ok {
		t.Error("paths recorded without Options.Paths")
	}
	var read bool
	for _, s := range storage {
		if _, ok := attr(s, telemetry.AttrPath); ok {
			t.Errorf("%s names its path without Options.Paths", s.Name())
		}
		if s.Name() == "storage open_read" {
			read = true
			if v, _ := attr(s, telemetry.AttrBytes); v.AsInt64() != int64(len("hello\nworld\n")) {
				t.Errorf("open_read bytes %d, want %d", v.AsInt64(), len("hello\nworld\n"))
			}
			if v, _ := attr(s, telemetry.AttrStorage); v.AsString() != "work" {
				t.Errorf("storage name %q", v.AsString())
			}
		}
	}
	if !read {
		t.Errorf("no open_read span among %d storage spans", len(storage))
	}
}

func TestRefusalSpan(t *testing.T) {
	f := newFixture(t, true)
	cs := f.connect(t)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "missing.txt"}})
	if err != nil || !res.IsError {
		t.Fatalf("read_file of a missing file: %v %+v", err, res)
	}
	call, _ := toolSpan(t, f.exp)
	if call.Parent().IsValid() {
		t.Errorf("a call without trace context has parent %v", call.Parent())
	}
	if v, _ := attr(call, telemetry.AttrOutcome); v.AsString() != string(tools.OutcomeRefused) {
		t.Errorf("outcome %q", v.AsString())
	}
	if v, _ := attr(call, telemetry.AttrRefusal); v.AsString() != string(tools.KindNotFound) {
		t.Errorf("refusal kind %q", v.AsString())
	}
}

// TestLinkRefusalSpan: a call a link inside the tracing refuses before
// the tool runs (a rate limit of the server's Quota) is refused with that
// link's kind, not a bare refusal.
func TestLinkRefusalSpan(t *testing.T) {
	f := newFixture(t, false)
	qm, err := quota.New(quota.Options{Default: quota.Limits{CallsPerSecond: 0.001, Burst: 1}})
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpserver.New(f.set, mcpserver.Options{Wrap: server.Chain{f.tr, server.Quota{Manager: qm}}.Wrap})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	read := &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "a.txt"}}
	if res, err := cs.CallTool(t.Context(), read); err != nil || res.IsError {
		t.Fatalf("the first call: %v %+v", err, res)
	}
	f.exp.Reset()
	if res, err := cs.CallTool(t.Context(), read); err != nil || !res.IsError {
		t.Fatalf("the second call, over the rate: %v %+v", err, res)
	}
	call, _ := toolSpan(t, f.exp)
	if v, _ := attr(call, telemetry.AttrOutcome); v.AsString() != string(tools.OutcomeRefused) {
		t.Errorf("outcome %q", v.AsString())
	}
	if v, _ := attr(call, telemetry.AttrRefusal); v.AsString() != string(tools.KindRateLimited) {
		t.Errorf("refusal kind %q, want %q", v.AsString(), tools.KindRateLimited)
	}
}

func TestPathsWhenOptedIn(t *testing.T) {
	f := newFixture(t, true)
	cs := f.connect(t)
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "a.txt"}}); err != nil {
		t.Fatal(err)
	}
	call, storage := toolSpan(t, f.exp)
	if v, _ := attr(call, telemetry.AttrPaths); !slices.Contains(v.AsStringSlice(), "a.txt") {
		t.Errorf("paths %q, want a.txt", v.AsStringSlice())
	}
	named := false
	for _, s := range storage {
		if v, ok := attr(s, telemetry.AttrPath); ok && v.AsString() == "a.txt" {
			named = true
		}
	}
	if !named {
		t.Error("no storage span names a.txt")
	}
}

// TestHTTPTraceparent serves over streamable HTTP: a traceparent header
// on the requests continues the caller's trace, read by Tracing.Handler
// around the HTTP handler or, without it, by the link from the request's
// headers the SDK hands the tool handler.
func TestHTTPTraceparent(t *testing.T) {
	for _, withHandler := range []bool{true, false} {
		t.Run(fmt.Sprintf("handler=%v", withHandler), func(t *testing.T) {
			f := newFixture(t, false)
			server := mcpserver.New(f.set, mcpserver.Options{Wrap: f.tr.Wrap})
			var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
			if withHandler {
				h = f.tr.Handler(h)
			}
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			client := &http.Client{Transport: headerTransport{traceparent}}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(t.Context(),
				&mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: client}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "a.txt"}}); err != nil {
				t.Fatal(err)
			}
			call, storage := toolSpan(t, f.exp)
			if call.Parent().TraceID().String() != callerTrace || call.Parent().SpanID().String() != callerSpan {
				t.Errorf("parent %v, want the header's", call.Parent())
			}
			if len(storage) == 0 {
				t.Error("no storage spans")
			}
		})
	}
}

type headerTransport struct{ traceparent string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("traceparent", h.traceparent)
	return http.DefaultTransport.RoundTrip(r)
}

// TestCallInProcess traces a call a host makes in process, under its own
// span.
func TestCallInProcess(t *testing.T) {
	f := newFixture(t, false)
	tp := sdktrace.NewTracerProvider()
	ctx, parent := tp.Tracer("host").Start(t.Context(), "agent step")
	tool, _ := f.set.Tool("read_file")
	text, err := f.tr.Call(ctx, tool, json.RawMessage(`{"path":"a.txt"}`))
	parent.End()
	if err != nil || !strings.Contains(text, "hello") {
		t.Fatalf("read_file: %q %v", text, err)
	}
	call, storage := toolSpan(t, f.exp)
	if call.Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Errorf("parent %v, want the host's span", call.Parent())
	}
	if v, _ := attr(call, telemetry.AttrResultBytes); v.AsInt64() != int64(len(text)) {
		t.Errorf("response bytes %d, want %d", v.AsInt64(), len(text))
	}
	if len(storage) == 0 {
		t.Error("no storage spans")
	}
}

// TestOff: without a TracerProvider nothing is built: no Tracing, the
// handler and the backend unwrapped.
func TestOff(t *testing.T) {
	tr := telemetry.New(telemetry.Options{})
	if tr != nil {
		t.Fatal("New without a TracerProvider built a Tracing")
	}
	b := backend.Backend(nil)
	if got := tr.Backend(b, "x"); got != b {
		t.Error("a nil Tracing wrapped the backend")
	}
	next := mcp.ToolHandler(func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
	if got := tr.Wrap(&tools.Tool{Name: "read_file"}, next); reflect.ValueOf(got).Pointer() != reflect.ValueOf(next).Pointer() {
		t.Error("a nil Tracing wrapped the handler")
	}
	h := http.NotFoundHandler()
	if got := tr.Handler(h); reflect.ValueOf(got).Pointer() != reflect.ValueOf(h).Pointer() {
		t.Error("a nil Tracing wrapped the HTTP handler")
	}
	if tr.S3ClientOptions() != nil {
		t.Error("a nil Tracing gave S3 client options")
	}
	if trace.SpanFromContext(tr.Extract(t.Context(), nil)).SpanContext().IsValid() {
		t.Error("a nil Tracing extracted a span context")
	}
}
