package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/tools"
)

// BenchmarkCall measures one tools/call through the SDK over in-memory
// transports, client included: through New over a local directory, and
// through the SDK's floor, a server on the same SDK whose tool returns the
// same text with no work. The difference is what fencefs adds to a call.
func BenchmarkCall(b *testing.B) {
	dir := b.TempDir()
	for i := range 20 {
		os.WriteFile(filepath.Join(dir, "f"+string(rune('a'+i))+".txt"), []byte("line\n"), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "four.txt"), []byte(strings.Repeat("0123456789abcde\n", 256)), 0o644)
	lb, err := local.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	set, err := tools.New(lb, tools.Options{})
	if err != nil {
		b.Fatal(err)
	}
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"read_file", map[string]any{"path": "four.txt"}},
		{"list_directory", map[string]any{"path": "."}},
		{"file_info", map[string]any{"path": "four.txt"}},
	}
	ctx := context.Background()
	for _, c := range calls {
		tool, _ := set.Tool(c.tool)
		want, err := tool.Call(ctx, mustJSON(b, c.args))
		if err != nil {
			b.Fatal(err)
		}
		floor := mcp.NewServer(&mcp.Implementation{Name: "floor", Version: "1"}, nil)
		floor.AddTool(Tool(tool), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: want}}}, nil
		})
		for _, s := range []struct {
			name   string
			server *mcp.Server
		}{{"floor", floor}, {"fencefs", New(set, Options{})}} {
			b.Run(c.tool+"/"+s.name, func(b *testing.B) {
				cs := benchConnect(b, s.server)
				params := &mcp.CallToolParams{Name: c.tool, Arguments: c.args}
				b.ReportAllocs()
				for b.Loop() {
					res, err := cs.CallTool(ctx, params)
					if err != nil || res.IsError {
						b.Fatal(err, res)
					}
				}
			})
		}
	}
}

// BenchmarkCallHTTP measures read_file of a 4 KiB file over stateless
// streamable HTTP, as fencefs serve answers it, with the SDK's client:
// through New, and through the SDK's floor (the same text prebuilt) with
// the tool's input schema as New hands it to the SDK (compact) and as
// package tools writes it (indented). Over HTTP the SDK reads the schema
// of the called tool again on every call, so its size is paid per call.
// cpu-µs/op is the process's CPU (client included) per call.
func BenchmarkCallHTTP(b *testing.B) {
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "four.txt"), []byte(strings.Repeat("0123456789abcde\n", 256)), 0o644)
	lb, err := local.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	set, err := tools.New(lb, tools.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	tool, _ := set.Tool("read_file")
	args := map[string]any{"path": "four.txt"}
	want, err := tool.Call(ctx, mustJSON(b, args))
	if err != nil {
		b.Fatal(err)
	}
	floor := func(schema json.RawMessage) *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "floor", Version: "1"}, nil)
		mt := Tool(tool)
		mt.InputSchema = schema
		s.AddTool(mt, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: want}}}, nil
		})
		return s
	}
	for _, s := range []struct {
		name   string
		server *mcp.Server
	}{
		{"floor", floor(Tool(tool).InputSchema.(json.RawMessage))},
		{"floor-indented-schema", floor(tool.InputSchema)},
		{"fencefs", New(set, Options{Stateless: true})},
	} {
		b.Run(s.name, func(b *testing.B) {
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.server }, &mcp.StreamableHTTPOptions{Stateless: true})
			hs := httptest.NewServer(h)
			defer hs.Close()
			tr := &mcp.StreamableClientTransport{Endpoint: hs.URL, DisableStandaloneSSE: true, MaxRetries: -1}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, tr, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			params := &mcp.CallToolParams{Name: "read_file", Arguments: args}
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				res, err := cs.CallTool(ctx, params)
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
			b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// processCPU returns the CPU time the process has used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchConnect(b *testing.B, server *mcp.Server) *mcp.ClientSession {
	b.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}
