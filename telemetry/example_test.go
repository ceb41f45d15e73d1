package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/mcpserver"
	"github.com/fencefs/fencefs/memfs"
	"github.com/fencefs/fencefs/telemetry"
	"github.com/fencefs/fencefs/tools"
)

// A host traces the tools it calls in process: the storage under the
// tools through Backend, each call through Call. A server passes
// tr.Wrap as mcpserver.Options.Wrap (or puts tr in its server.Chain)
// instead, and tr.Handler around its HTTP handler.
func Example() {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)) // in production: an OTLP exporter
	defer tp.Shutdown(context.Background())
	tr := telemetry.New(telemetry.Options{TracerProvider: tp})

	fsys := memfs.New()
	backend.WriteFile(context.Background(), fsys, "notes.txt", []byte("hello\n"), backend.WriteOptions{})
	set, err := tools.New(tr.Backend(fsys, "notes"), tools.Options{})
	if err != nil {
		panic(err)
	}
	tool, _ := set.Tool("read_file")
	if _, err := tr.Call(context.Background(), tool, json.RawMessage(`{"path":"notes.txt"}`)); err != nil {
		panic(err)
	}
	_ = mcpserver.Options{Wrap: tr.Wrap}

	for _, s := range exp.GetSpans() {
		fmt.Println(s.Name)
	}
	// Output:
	// storage open_read
	// tools/call read_file
}
