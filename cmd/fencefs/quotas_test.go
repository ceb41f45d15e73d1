//go:build !fencefs_oneshot

package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tenant/tenanttest"
)

// TestServeHTTPQuotas: a change that would pass --quota-bytes is refused
// with a message naming the limit and leaves nothing; a delete gives the
// space back; calls beyond --rate-limit are refused, saying when to retry.
func TestServeHTTPQuotas(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	root := t.TempDir()
	h := startServe(t, "serve", "--http", "127.0.0.1:0", "--root", root, "--tools", allTools(), "--quota-bytes", "20", "--quota-files", "2")
	cs, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: h.url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	callOK(t, ctx, cs, "write_file", map[string]any{"path": "a.txt", "content": "0123456789a"})
	for _, tc := range []struct {
		tool, limit string
		args        map[string]any
		path        string
	}{
		{"write_file", "stored bytes", map[string]any{"path": "b.txt", "content": "0123456789abcde"}, "b.txt"},
		{"copy_file", "stored bytes", map[string]any{"source": "a.txt", "destination": "c.txt"}, "c.txt"},
		{"write_file", "stored bytes", map[string]any{"path": "a.txt", "content": strings.Repeat("x", 21)}, ""},
	} {
		text, isError := callTool(t, ctx, cs, tc.tool, tc.args)
		if !isError || !strings.Contains(text, tc.limit) {
			t.Errorf("%s %v: %q, want a refusal naming %q", tc.tool, tc.args, text, tc.limit)
		}
		if tc.path != "" {
			if _, err := os.Stat(filepath.Join(root, tc.path)); !os.IsNotExist(err) {
				t.Errorf("%s after a refused %s: %v", tc.path, tc.tool, err)
			}
		}
	}
	if got := readFile(t, filepath.Join(root, "a.txt")); got != "0123456789a" {
		t.Errorf("a.txt holds %q after a refused overwrite", got)
	}
	callOK(t, ctx, cs, "write_file", map[string]any{"path": "b.txt", "content": "012345678"})
	if text, isError := callTool(t, ctx, cs, "write_file", map[string]any{"path": "c.txt", "content": ""}); !isError || !strings.Contains(text, "stored files") {
		t.Errorf("a third file: %q, want a refusal naming stored files", text)
	}
	callOK(t, ctx, cs, "delete_file", map[string]any{"path": "a.txt"})
	callOK(t, ctx, cs, "write_file", map[string]any{"path": "c.txt", "content": "0123456789"})

	resp, err := http.Get(strings.TrimSuffix(h.url, "/mcp") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`fencefs_tool_calls_total{outcome="refused",tool="write_file"} 3`, `fencefs_quota_refusals_total{limit="stored bytes"} 3`,
		`fencefs_quota_refusals_total{limit="stored files"} 1`, `fencefs_tool_call_seconds_count{tool="delete_file"} 1`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics has no %s:\n%s", want, body)
		}
	}

	r := startServe(t, "serve", "--http", "127.0.0.1:0", "--root", root, "--rate-limit", "0.001", "--rate-burst", "2")
	rs, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	callOK(t, ctx, rs, "read_file", map[string]any{"path": "b.txt"})
	callOK(t, ctx, rs, "read_file", map[string]any{"path": "b.txt"})
	if text, isError := callTool(t, ctx, rs, "read_file", map[string]any{"path": "b.txt"}); !isError || !strings.Contains(text, "calls per second") {
		t.Errorf("a call beyond the rate: %q", text)
	}
}

// TestServeHTTPQuotaChanges: with tenant mounts, the quota counts what
// move_file and apply_patch change, from the sizes the tools announce,
// and only in the tenant's own mounts: a mount every tenant shares is
// neither scanned nor counted.
func TestServeHTTPQuotaChanges(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	iss := tenanttest.NewIssuer(t)
	base := t.TempDir()
	for _, d := range []string{"tenants/t1", "shared"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(base, "shared", "old.txt"), strings.Repeat("s", 1000))
	h := startServe(t, "serve", "--http", "127.0.0.1:0", "--tools", allTools(),
		"--auth", "jwt", "--oidc-issuer", iss.URL, "--oidc-audience", iss.Audience,
		"--tenant-mount", "ws=local:"+filepath.Join(base, "tenants", "{tenant}"),
		"--tenant-mount", "shared=local:"+filepath.Join(base, "shared"),
		"--quota-bytes", "20", "--quota-files", "3")
	cs, err := connectAs(t, h.url, iss.Sign(t, tenanttest.Claims{Subject: "t1"}), "")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ws := filepath.Join(base, "tenants", "t1")
	callOK(t, ctx, cs, "write_file", map[string]any{"path": "/ws/a.txt", "content": "0123456789"})
	callOK(t, ctx, cs, "write_file", map[string]any{"path": "/shared/big.txt", "content": strings.Repeat("b", 100)})
	for _, tc := range []struct {
		tool  string
		args  map[string]any
		gone  string
		limit string
	}{
		{"apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Add File: /ws/p.txt\n+" + strings.Repeat("p", 14) + "\n*** End Patch\n"}, "p.txt", "stored bytes"},
		{"copy_file", map[string]any{"source": "/shared/big.txt", "destination": "/ws/big.txt"}, "big.txt", "stored bytes"},
	} {
		text, isError := callTool(t, ctx, cs, tc.tool, tc.args)
		if !isError || !strings.Contains(text, tc.limit) {
			t.Errorf("%s %v: %q, want a refusal naming %s", tc.tool, tc.args, text, tc.limit)
		}
		if _, err := os.Stat(filepath.Join(ws, tc.gone)); !os.IsNotExist(err) {
			t.Errorf("%s after a refused %s: %v", tc.gone, tc.tool, err)
		}
	}
	callOK(t, ctx, cs, "write_file", map[string]any{"path": "/ws/b.txt", "content": "01234567"}) // 18 bytes, 2 files
	// Moving a.txt over b.txt gives b's 8 bytes and one file back.
	callOK(t, ctx, cs, "move_file", map[string]any{"source": "/ws/a.txt", "destination": "/ws/b.txt", "overwrite": true})
	callOK(t, ctx, cs, "write_file", map[string]any{"path": "/ws/c.txt", "content": "0123456789"}) // 20 bytes, 2 files
	// A patch that deletes c.txt and adds a smaller d.txt fits; the
	// deletion's bytes are counted before the addition is checked.
	callOK(t, ctx, cs, "apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Delete File: /ws/c.txt\n*** Add File: /ws/d.txt\n+abcd\n*** End Patch\n"})
	callOK(t, ctx, cs, "write_file", map[string]any{"path": "/ws/e.txt", "content": "01234"}) // 20 bytes, 3 files
	if text, isError := callTool(t, ctx, cs, "write_file", map[string]any{"path": "/ws/f.txt", "content": ""}); !isError || !strings.Contains(text, "stored files") {
		t.Errorf("a fourth file: %q, want a refusal naming stored files", text)
	}
	// A directory is an entry too: a fourth one is refused.
	if text, isError := callTool(t, ctx, cs, "create_directory", map[string]any{"path": "/ws/dir"}); !isError || !strings.Contains(text, "stored files") {
		t.Errorf("a directory as the fourth entry: %q, want a refusal naming stored files", text)
	}
	if _, err := os.Stat(filepath.Join(ws, "dir")); !os.IsNotExist(err) {
		t.Errorf("dir after a refused create_directory: %v", err)
	}
	callOK(t, ctx, cs, "delete_file", map[string]any{"path": "/ws/d.txt"}) // 15 bytes, 2 entries
	// A directory's move keeps the usage as it was; its delete has no
	// sizes: the usage is scanned again.
	callOK(t, ctx, cs, "create_directory", map[string]any{"path": "/ws/dir"}) // 3 entries
	callOK(t, ctx, cs, "move_file", map[string]any{"source": "/ws/e.txt", "destination": "/ws/dir/e.txt"})
	callOK(t, ctx, cs, "move_file", map[string]any{"source": "/ws/dir", "destination": "/ws/moved"})
	if text, isError := callTool(t, ctx, cs, "write_file", map[string]any{"path": "/ws/f.txt", "content": ""}); !isError || !strings.Contains(text, "stored files") {
		t.Errorf("a fourth entry after a directory's move: %q, want a refusal naming stored files", text)
	}
	callOK(t, ctx, cs, "delete_file", map[string]any{"path": "/ws/moved", "recursive": true})
	callOK(t, ctx, cs, "write_file", map[string]any{"path": "/ws/f.txt", "content": "01234"})
}
