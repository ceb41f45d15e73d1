package telemetry_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/mcpserver"
	"github.com/fencefs/fencefs/memfs"
	"github.com/fencefs/fencefs/telemetry"
	"github.com/fencefs/fencefs/tools"
)

// BenchmarkReadFile measures a read_file of a 4 KiB file through the MCP
// handler over in-memory transports, client included: "none" is the
// server without telemetry, "off" the same server built through
// telemetry.New without a TracerProvider (a nil Tracing as the link and
// around the backend), "on" with every span recorded and handed in
// batches to an exporter that drops them, so the row is the cost of
// building the spans (one for the call, one per storage operation).
// cpuTime is the CPU time the process has used, user and system, in
// nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func BenchmarkReadFile(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "four.txt"), []byte(strings.Repeat("0123456789abcde\n", 256)), 0o644); err != nil {
		b.Fatal(err)
	}
	lb, err := local.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer lb.Close()
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	defer tp.Shutdown(context.Background())
	for _, row := range []struct {
		name string
		opts telemetry.Options
		none bool
	}{
		{name: "none", none: true},
		{name: "off"},
		{name: "on", opts: telemetry.Options{TracerProvider: tp}},
	} {
		b.Run(row.name, func(b *testing.B) {
			var server *mcp.Server
			if row.none {
				set, err := tools.New(lb, tools.Options{})
				if err != nil {
					b.Fatal(err)
				}
				server = mcpserver.New(set, mcpserver.Options{})
			} else {
				tr := telemetry.New(row.opts)
				set, err := tools.New(tr.Backend(lb, "work"), tools.Options{})
				if err != nil {
					b.Fatal(err)
				}
				server = mcpserver.New(set, mcpserver.Options{Wrap: tr.Wrap})
			}
			ctx := context.Background()
			st, ct := mcp.NewInMemoryTransports()
			ss, err := server.Connect(ctx, st, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer ss.Close()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			params := &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "four.txt"}}
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				res, err := cs.CallTool(ctx, params)
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
			// The process's CPU time per call, which a loaded machine
			// disturbs less than the wall time of ns/op.
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkCallSpans measures the spans alone: read_file of a 4 KiB file
// on memfs called in process, without tracing and with every span
// recorded (one for the call, one for the storage read) and batched to
// an exporter that drops them.
func BenchmarkCallSpans(b *testing.B) {
	fsys := memfs.New()
	if err := backend.WriteFile(context.Background(), fsys, "four.txt", []byte(strings.Repeat("0123456789abcde\n", 256)), backend.WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	defer tp.Shutdown(context.Background())
	args := json.RawMessage(`{"path":"four.txt"}`)
	for _, row := range []struct {
		name string
		tp   *sdktrace.TracerProvider
	}{{"off", nil}, {"on", tp}} {
		b.Run(row.name, func(b *testing.B) {
			opts := telemetry.Options{}
			if row.tp != nil {
				opts.TracerProvider = row.tp
			}
			tr := telemetry.New(opts)
			set, err := tools.New(tr.Backend(fsys, "mem"), tools.Options{})
			if err != nil {
				b.Fatal(err)
			}
			tool, _ := set.Tool("read_file")
			ctx := context.Background()
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				if _, err := tr.Call(ctx, tool, args); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
