package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fencefs/fencefs/quota"
	"github.com/fencefs/fencefs/server"
	"github.com/fencefs/fencefs/telemetry"
	"github.com/fencefs/fencefs/tenant"
)

// TestTracing serves tenants with Config.Tracing: a call whose HTTP
// request carries a traceparent is a span under the caller's, naming the
// tool, the authenticated tenant and the outcome (a quota's refusal
// too), with its storage operations under it, named by their mount.
func TestTracing(t *testing.T) {
	dir := t.TempDir()
	for _, tn := range []string{"acme", "globex"} {
		if err := os.MkdirAll(filepath.Join(dir, tn), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "acme", "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := tenant.ParseTemplate("local:" + filepath.Join(dir, tenant.Placeholder))
	if err != nil {
		t.Fatal(err)
	}
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	srv, err := server.New(t.Context(), server.Config{
		TenantMounts: []server.TenantMount{{Name: "ws", Template: ws}},
		Identity:     readWriteByHeader,
		Quota:        quota.Limits{MaxFiles: 2},
		Tracing:      telemetry.New(telemetry.Options{TracerProvider: tp, Tenant: server.Tenant}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	const trace, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	tr := &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp", HTTPClient: &http.Client{Transport: headers{
		"X-Tenant": "acme", "traceparent": "00-" + trace + "-" + parent + "-01"}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"read_file", map[string]any{"path": "/ws/a.txt"}},
		{"write_file", map[string]any{"path": "/ws/b.txt", "content": "b\n"}},
		{"write_file", map[string]any{"path": "/ws/c.txt", "content": "c\n"}}, // over the quota of two files
	} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s %v: isError %v", c.tool, c.args, res.IsError)
	}

	spans := exp.GetSpans().Snapshots()
	calls := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		if s.Name() == "tools/call read_file" || s.Name() == "tools/call write_file" {
			calls[s.Name()] = s
		}
	}
	for name, want := range map[string]map[attribute.Key]string{
		"tools/call read_file":  {telemetry.AttrTenant: "acme", telemetry.AttrOutcome: "ok"},
		"tools/call write_file": {telemetry.AttrTenant: "acme", telemetry.AttrOutcome: "refused"},
	} {
		s, ok := calls[name]
		if !ok {
			t.Fatalf("no %s span among %d", name, len(spans))
		}
		if s.Parent().TraceID().String() != trace || s.Parent().SpanID().String() != parent {
			t.Errorf("%s: parent %v, want the caller's", name, s.Parent())
		}
		got := map[attribute.Key]string{}
		for _, kv := range s.Attributes() {
			got[kv.Key] = kv.Value.Emit()
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q", name, k, got[k], v)
			}
		}
	}
	var read bool
	for _, s := range spans {
		if s.Name() != "storage open_read" || s.Parent().SpanID() != calls["tools/call read_file"].SpanContext().SpanID() {
			continue
		}
		read = true
		for _, kv := range s.Attributes() {
			if kv.Key == telemetry.AttrStorage && kv.Value.AsString() != "ws" {
				t.Errorf("storage %q, want the mount ws", kv.Value.AsString())
			}
		}
	}
	if !read {
		t.Error("no storage open_read span under read_file's")
	}
}

// headers sets headers on every request.
type headers map[string]string

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}
