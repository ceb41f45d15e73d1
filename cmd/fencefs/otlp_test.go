//go:build !fencefs_oneshot

package main

import (
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	collectormetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/fencefs/fencefs/conformance/containers"
)

// otlpReceiver is an OTLP/HTTP receiver on 127.0.0.1 that decodes the
// protobufs it is sent (traces and metrics) and keeps them.
type otlpReceiver struct {
	url string

	mu      sync.Mutex
	spans   []*tracepb.Span
	metrics map[string]bool
	// got is signalled (without blocking) after each export.
	got chan struct{}
}

func newOTLPReceiver(t testing.TB) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{metrics: map[string]bool{}, got: make(chan struct{}, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		var msg collectortrace.ExportTraceServiceRequest
		if !r.decode(t, w, req, &msg) {
			return
		}
		r.mu.Lock()
		for _, rs := range msg.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				r.spans = append(r.spans, ss.Spans...)
			}
		}
		r.mu.Unlock()
		r.reply(w, &collectortrace.ExportTraceServiceResponse{})
	})
	mux.HandleFunc("POST /v1/metrics", func(w http.ResponseWriter, req *http.Request) {
		var msg collectormetrics.ExportMetricsServiceRequest
		if !r.decode(t, w, req, &msg) {
			return
		}
		r.mu.Lock()
		for _, rm := range msg.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					r.metrics[m.Name] = true
				}
			}
		}
		r.mu.Unlock()
		r.reply(w, &collectormetrics.ExportMetricsServiceResponse{})
	})
	srv := httptest.NewServer(mux) // listens on 127.0.0.1
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

// decode reads a protobuf request body (gzip or not) into msg, answering
// 400 when it is not one.
func (r *otlpReceiver) decode(t testing.TB, w http.ResponseWriter, req *http.Request, msg proto.Message) bool {
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		t.Errorf("OTLP export with Content-Type %q", ct)
		http.Error(w, "want application/x-protobuf", http.StatusUnsupportedMediaType)
		return false
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return false
		}
		body = zr
	}
	data, err := io.ReadAll(body)
	if err == nil {
		err = proto.Unmarshal(data, msg)
	}
	if err != nil {
		t.Errorf("OTLP export that does not decode: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func (r *otlpReceiver) reply(w http.ResponseWriter, msg proto.Message) {
	data, _ := proto.Marshal(msg)
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(data)
	select {
	case r.got <- struct{}{}:
	default:
	}
}

// trace returns the spans of trace (hex) received so far.
func (r *otlpReceiver) trace(id string) []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range r.spans {
		if hex.EncodeToString(s.TraceId) == id {
			out = append(out, s)
		}
	}
	return out
}

func (r *otlpReceiver) metric(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.metrics[name]
}

// waitFor waits until done reports true after an export, for at most
// otlpWait.
func (r *otlpReceiver) waitFor(t *testing.T, what string, done func() bool) {
	t.Helper()
	deadline := time.After(otlpWait)
	for !done() {
		select {
		case <-r.got:
		case <-deadline:
			r.mu.Lock()
			var got []string
			for _, s := range r.spans {
				got = append(got, hex.EncodeToString(s.TraceId)+" "+s.Name)
			}
			r.mu.Unlock()
			t.Fatalf("no %s received within %v; spans received:\n%s", what, otlpWait, strings.Join(got, "\n"))
		}
	}
}

// otlpWait bounds the wait for an export: the server is told to export
// spans every 100 ms and metrics every 300 ms.
const otlpWait = 30 * time.Second

// The callers' traces.
const (
	headerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	headerSpan  = "00f067aa0ba902b7"
	metaTrace   = "0af7651916cd43dd8448eb211c80319c"
	metaSpan    = "b7ad6b7169203331"
)

// TestOTLPOverS3 serves a mount on S3 (versitygw) with --otlp-endpoint
// to a receiver on 127.0.0.1 that decodes the OTLP protobufs it gets. A
// read_file whose HTTP request carries a traceparent header, and a
// file_info whose _meta carries one, each arrive as one trace under the
// caller's span: the tool's span (tool, outcome, the tenant's absence
// without --auth), its storage spans under it, and the S3 requests under
// those. The metrics /metrics serves arrive too.
func TestOTLPOverS3(t *testing.T) {
	containers.SetTestcontainersDefaults()
	ctx := t.Context()
	srv := containers.StartS3(ctx, t)
	if _, err := srv.Client().PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(containers.DefaultS3Bucket),
		Key: aws.String("otlp/a.txt"), Body: strings.NewReader("hello over s3\n")}); err != nil {
		t.Fatal(err)
	}
	rcv := newOTLPReceiver(t)
	env := []string{"AWS_ACCESS_KEY_ID=" + srv.AccessKey, "AWS_SECRET_ACCESS_KEY=" + srv.SecretKey, "AWS_REGION=" + srv.Region,
		"OTEL_BSP_SCHEDULE_DELAY=100", "OTEL_METRIC_EXPORT_INTERVAL=300"}
	mount := fmt.Sprintf("ws=s3://%s/otlp?endpoint=%s&region=%s&path_style=1", containers.DefaultS3Bucket, srv.Endpoint, srv.Region)
	h := startServeEnv(t, env, "serve", "--http", "127.0.0.1:0", "--mount", mount, "--otlp-endpoint", rcv.url)
	client := &http.Client{Transport: traceparentTransport{"00-" + headerTrace + "-" + headerSpan + "-01"}}
	cs, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: h.url, MaxRetries: -1, HTTPClient: client}, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, h.stderr.String())
	}
	defer cs.Close()
	if text := callOK(t, ctx, cs, "read_file", map[string]any{"path": "/ws/a.txt"}); !strings.Contains(text, "hello over s3") {
		t.Fatalf("read_file: %q", text)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "file_info", Arguments: map[string]any{"path": "/ws/a.txt"},
		Meta: mcp.Meta{"traceparent": "00-" + metaTrace + "-" + metaSpan + "-01"}})
	if err != nil || res.IsError {
		t.Fatalf("file_info: %v %+v", err, res)
	}

	for _, c := range []struct{ trace, parent, tool, storage, request string }{
		{headerTrace, headerSpan, "read_file", "storage open_read", "s3 GetObject"},
		{metaTrace, metaSpan, "file_info", "storage open_read", "s3 GetObject"},
	} {
		t.Run(c.tool, func(t *testing.T) {
			var spans []*tracepb.Span
			byID := map[string]*tracepb.Span{}
			rcv.waitFor(t, c.tool+"'s trace", func() bool {
				spans = rcv.trace(c.trace)
				clear(byID)
				for _, s := range spans {
					byID[hex.EncodeToString(s.SpanId)] = s
				}
				var call, storage, request bool
				for _, s := range spans {
					call = call || s.Name == "tools/call "+c.tool
					storage = storage || s.Name == c.storage
					request = request || s.Name == c.request
				}
				return call && storage && request
			})
			parent := func(s *tracepb.Span) string {
				if p := byID[hex.EncodeToString(s.ParentSpanId)]; p != nil {
					return p.Name
				}
				return "remote " + hex.EncodeToString(s.ParentSpanId)
			}
			var tree []string
			for _, s := range spans {
				tree = append(tree, s.Name+" <- "+parent(s))
				switch {
				case strings.HasPrefix(s.Name, "tools/call "):
					if s.Name != "tools/call "+c.tool || parent(s) != "remote "+c.parent {
						t.Errorf("%s under %s, want tools/call %s under the caller's span %s", s.Name, parent(s), c.tool, c.parent)
					}
					attrs := map[string]string{}
					for _, kv := range s.Attributes {
						attrs[kv.Key] = kv.Value.GetStringValue()
					}
					if attrs["fencefs.tool"] != c.tool || attrs["fencefs.outcome"] != "ok" {
						t.Errorf("tool span attributes %v", attrs)
					}
					if _, ok := attrs["fencefs.paths"]; ok {
						t.Error("paths on a span without --otlp-paths")
					}
				case strings.HasPrefix(s.Name, "storage "):
					if parent(s) != "tools/call "+c.tool {
						t.Errorf("%s under %s", s.Name, parent(s))
					}
				case strings.HasPrefix(s.Name, "s3 "):
					if !strings.HasPrefix(parent(s), "storage ") {
						t.Errorf("%s under %s", s.Name, parent(s))
					}
				default:
					t.Errorf("unexpected span %s", s.Name)
				}
			}
			if !slices.Contains(tree, c.request+" <- "+c.storage) {
				t.Errorf("no %s under %s", c.request, c.storage)
			}
			if t.Failed() {
				t.Logf("trace %s:\n%s", c.trace, strings.Join(tree, "\n"))
			}
		})
	}
	rcv.waitFor(t, "fencefs_tool_calls_total", func() bool { return rcv.metric("fencefs_tool_calls_total") })
	rcv.waitFor(t, "fencefs_storage_requests_total", func() bool { return rcv.metric("fencefs_storage_requests_total") })
}

// traceparentTransport sends a traceparent header on every request.
type traceparentTransport struct{ traceparent string }

func (h traceparentTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("traceparent", h.traceparent)
	return http.DefaultTransport.RoundTrip(r)
}
