package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/tools"
)

// workspace is a local directory served by a tool set.
type workspace struct {
	dir string
	set *tools.Set
}

func newWorkspace(t *testing.T, opts tools.Options, files map[string]string) *workspace {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	set, err := tools.New(b, opts)
	if err != nil {
		t.Fatal(err)
	}
	return &workspace{dir: dir, set: set}
}

func (w *workspace) read(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(w.dir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func (w *workspace) write(t *testing.T, name, data string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(w.dir, filepath.FromSlash(name)), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// connect serves server to a new SDK client over in-memory transports.
func connect(t *testing.T, server *mcp.Server, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return connectVersion(t, server, copts, "")
}

// connectVersion connects with the given protocol version ("" for the
// latest).
func connectVersion(t *testing.T, server *mcp.Server, copts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	return connectClient(t, server, mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, copts), version)
}

// connectClient connects client to server.
func connectClient(t *testing.T, server *mcp.Server, client *mcp.Client, version string) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	if version != "" && cs.InitializeResult().ProtocolVersion != version {
		t.Fatalf("protocol %s, want %s", cs.InitializeResult().ProtocolVersion, version)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// call calls a tool and returns its text and whether it is an error
// result; a JSON-RPC error fails the test.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d contents, want 1", name, len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("%s: content %T, want text", name, res.Content[0])
	}
	return res, text.Text
}

// structured decodes a result's structured content.
func structured(t *testing.T, res *mcp.CallToolResult, into any) {
	t.Helper()
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, into); err != nil {
		t.Fatalf("structured content %s: %v", raw, err)
	}
}

// mkdirWrite writes a file, making its directories.
func (w *workspace) mkdirWrite(t *testing.T, name, data string) {
	t.Helper()
	p := filepath.Join(w.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
