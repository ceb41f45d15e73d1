package telemetry_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/telemetry"
	"github.com/fencefs/fencefs/tools"
)

// TestSFTPSpans reads, writes and lists on an SFTP server through the
// tools under a host's span: each storage operation is a span under the
// tool's, the read's and the write's with the bytes they moved.
func TestSFTPSpans(t *testing.T) {
	containers.SetTestcontainersDefaults()
	ctx := t.Context()
	srv := containers.StartSFTP(ctx, t)
	root, err := srv.NewRoot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := srv.Dial(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Close() })
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	tr := telemetry.New(telemetry.Options{TracerProvider: tp, Paths: true})
	set, err := tools.New(tr.Backend(fs, "remote"), tools.Options{Tools: []string{"write_file", "read_file", "list_directory"}})
	if err != nil {
		t.Fatal(err)
	}
	const content = "hello over sftp\n"
	for _, c := range []struct{ tool, args string }{
		{"write_file", `{"path":"a.txt","content":"hello over sftp\n"}`},
		{"read_file", `{"path":"a.txt"}`},
		{"list_directory", `{"path":"."}`},
	} {
		tool, _ := set.Tool(c.tool)
		hctx, host := tp.Tracer("host").Start(ctx, "step "+c.tool)
		if _, err := tr.Call(hctx, tool, json.RawMessage(c.args)); err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		host.End()
	}
	spans := exp.GetSpans().Snapshots()
	byID := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byID[s.SpanContext().SpanID().String()] = s
	}
	var lines []string
	ops := map[string]int64{}
	for _, s := range spans {
		if !strings.HasPrefix(s.Name(), "storage ") {
			continue
		}
		p := byID[s.Parent().SpanID().String()]
		if p == nil || !strings.HasPrefix(p.Name(), "tools/call ") {
			t.Errorf("%s is not under a tool's span", s.Name())
			continue
		}
		var bytes int64 = -1
		for _, kv := range s.Attributes() {
			if kv.Key == telemetry.AttrBytes {
				bytes = kv.Value.AsInt64()
			}
		}
		ops[p.Name()+" > "+s.Name()] = bytes
		lines = append(lines, p.Name()+" > "+s.Name())
	}
	for op, want := range map[string]int64{
		"tools/call write_file > storage write":    int64(len(content)),
		"tools/call read_file > storage open_read": int64(len(content)),
		"tools/call list_directory > storage list": -1,
	} {
		if got, ok := ops[op]; !ok || got != want {
			t.Errorf("%s: bytes %d (seen %v), want %d", op, got, ok, want)
		}
	}
	if t.Failed() {
		t.Logf("storage spans:\n%s", strings.Join(lines, "\n"))
	}
}
