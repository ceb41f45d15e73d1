package main

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// apiKeyHeader adds the platform's API key to every request.
type apiKeyHeader string

func (k apiKeyHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Api-Key", string(k))
	return http.DefaultTransport.RoundTrip(r)
}

// TestPlatform builds the example and runs it as a platform would, then
// talks to it with the MCP SDK's client: each API key works in its own
// tenant's workspace with its own scopes, an unknown key is refused, and
// the change is in the audit log.
func TestPlatform(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "platform")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building the example: %v\n%s", err, out)
	}
	data := filepath.Join(dir, "data")
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-dir", data)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "MCP endpoint: "); ok {
				urls <- u
			}
		}
	}()
	var url string
	select {
	case url = <-urls:
	case <-time.After(30 * time.Second): // a bound against a hang, not a measure
		t.Fatal("the example did not print its endpoint")
	}
	connect := func(key string) (*mcp.ClientSession, error) {
		tr := &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1, HTTPClient: &http.Client{Transport: apiKeyHeader(key)}}
		return mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), tr, nil)
	}
	alice, err := connect("key-alice")
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close()
	res, err := alice.CallTool(t.Context(), &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "/ws/plan.md", "content": "ship it\n"}})
	if err != nil || res.IsError {
		t.Fatalf("alice's write_file: %v %+v", err, res)
	}
	if got, err := os.ReadFile(filepath.Join(data, "tenants", "acme", "plan.md")); err != nil || string(got) != "ship it\n" {
		t.Fatalf("acme's workspace holds %q, %v", got, err)
	}
	bob, err := connect("key-bob")
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close()
	res, err = bob.CallTool(t.Context(), &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "/ws/plan.md"}})
	if err != nil || !res.IsError {
		t.Errorf("bob (globex) read acme's file: %v %+v", err, res)
	}
	res, err = bob.CallTool(t.Context(), &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "/ws/x.md", "content": "x"}})
	if err == nil && !res.IsError {
		t.Error("bob's read-only key wrote")
	}
	if _, err := connect("key-mallory"); err == nil {
		t.Error("an unknown API key connected")
	}
	line, err := os.ReadFile(filepath.Join(data, "audit.jsonl"))
	if err != nil || !strings.Contains(string(line), `"tenant":"acme"`) || !strings.Contains(string(line), "plan.md") {
		t.Errorf("the audit log: %q, %v", line, err)
	}
}
