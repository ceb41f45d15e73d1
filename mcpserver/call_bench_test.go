package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
