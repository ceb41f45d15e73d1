//go:build !fencefs_oneshot

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeHTTPRequestBytes: by default a write_file far over the SDK's
// 4 MiB request limit goes through; --max-request-bytes refuses a larger
// body with 413 and writes nothing.
func TestServeHTTPRequestBytes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newFixture(t)
	h := startHTTPServe(t, f)
	cs, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: h.url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	big := strings.Repeat("line of text\n", 6<<20/13) // 6 MiB
	callOK(t, ctx, cs, "write_file", map[string]any{"path": "big.txt", "content": big})
	if got := readFile(t, filepath.Join(f.root, "big.txt")); got != big {
		t.Errorf("big.txt holds %d bytes, want %d", len(got), len(big))
	}

	small := startHTTPServe(t, f, "--max-request-bytes", "4096")
	ss, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: small.url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	_, err = ss.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "over.txt", "content": strings.Repeat("x", 8192)}})
	if err == nil || !strings.Contains(err.Error(), "Too Large") {
		t.Errorf("a body over --max-request-bytes: %v, want 413", err)
	}
	if _, err := os.Stat(filepath.Join(f.root, "over.txt")); !os.IsNotExist(err) {
		t.Errorf("over.txt after a refused body: %v", err)
	}
	// The client gives up its session after a transport error: a new one
	// writes what fits.
	ss2, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: small.url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss2.Close()
	callOK(t, ctx, ss2, "write_file", map[string]any{"path": "under.txt", "content": "fits"})
}
