// Package telemetry_test checks the spans of storage on S3: the tracing
// wrapper's span per storage operation with, under it, a span per HTTP
// request the S3 client sends.
package telemetry_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/telemetry"
	"github.com/fencefs/fencefs/tools"
)

// TestS3Spans reads a file on S3 through read_file under a host's span:
// one trace holds the tool's span, its storage spans, and under those the
// S3 requests (GetObject at least), each a child of the span it belongs
// to.
func TestS3Spans(t *testing.T) {
	containers.SetTestcontainersDefaults()
	ctx := t.Context()
	srv := containers.StartS3(ctx, t)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	tr := telemetry.New(telemetry.Options{TracerProvider: tp})

	cfg := srv.Config(containers.DefaultS3Bucket, "telemetry")
	cfg.ClientOptions = append(cfg.ClientOptions, tr.S3ClientOptions()...)
	fs := srv.Open(t, cfg)
	if err := backend.WriteFile(ctx, fs, "a.txt", []byte("hello over s3\n"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := len(exp.GetSpans()); n != 0 {
		t.Fatalf("%d spans outside any trace (a write with no span in its context)", n)
	}
	set, err := tools.New(tr.Backend(fs, "ws"), tools.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tool, _ := set.Tool("read_file")
	hctx, host := tp.Tracer("host").Start(ctx, "agent step")
	text, err := tr.Call(hctx, tool, json.RawMessage(`{"path":"a.txt"}`))
	host.End()
	if err != nil || !strings.Contains(text, "hello over s3") {
		t.Fatalf("read_file: %q %v", text, err)
	}

	spans := exp.GetSpans().Snapshots()
	byID := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byID[s.SpanContext().SpanID().String()] = s
		if s.SpanContext().TraceID() != host.SpanContext().TraceID() {
			t.Errorf("span %s is of another trace", s.Name())
		}
	}
	parent := func(s sdktrace.ReadOnlySpan) string {
		if p, ok := byID[s.Parent().SpanID().String()]; ok {
			return p.Name()
		}
		return ""
	}
	var call, storage, requests int
	for _, s := range spans {
		switch {
		case s.Name() == "tools/call read_file":
			call++
			if parent(s) != "agent step" {
				t.Errorf("tool span under %q", parent(s))
			}
		case strings.HasPrefix(s.Name(), "storage "):
			storage++
			if parent(s) != "tools/call read_file" {
				t.Errorf("%s under %q", s.Name(), parent(s))
			}
		case strings.HasPrefix(s.Name(), "s3 "):
			requests++
			if !strings.HasPrefix(parent(s), "storage ") {
				t.Errorf("%s under %q, want a storage span", s.Name(), parent(s))
			}
			if s.Name() == "s3 GetObject" && parent(s) != "storage open_read" {
				t.Errorf("GetObject under %q", parent(s))
			}
		}
	}
	names := []string{}
	for _, s := range spans {
		names = append(names, s.Name()+" <- "+parent(s))
	}
	if call != 1 || storage == 0 || requests == 0 {
		t.Errorf("%d tool spans, %d storage spans, %d S3 request spans:\n%s", call, storage, requests, strings.Join(names, "\n"))
	}
	if !strings.Contains(strings.Join(names, "\n"), "s3 GetObject <- storage open_read") {
		t.Errorf("no GetObject under the read:\n%s", strings.Join(names, "\n"))
	}
	t.Logf("spans:\n%s", strings.Join(names, "\n"))
}
