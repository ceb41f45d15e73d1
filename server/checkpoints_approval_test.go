package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/audit"
	"github.com/fencefs/fencefs/checkpoint"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/mcpserver"
	"github.com/fencefs/fencefs/server"
	"github.com/fencefs/fencefs/tenant"
	"github.com/fencefs/fencefs/tools"
)

// TestCheckpointsApproval: with approvals, a change is journaled only in
// the round the user accepts it, after the answer: a declined change and
// the first round of an approval (which asks) leave no checkpoint, so
// list_checkpoints shows the accepted change alone, and a restore to the
// start undoes it and nothing else.
func TestCheckpointsApproval(t *testing.T) {
	dir := t.TempDir()
	ws, _ := tenant.ParseTemplate("local:" + filepath.Join(dir, "ws", tenant.Placeholder))
	store, _ := tenant.ParseTemplate("local:" + filepath.Join(dir, "ckpt", tenant.Placeholder))
	if err := os.MkdirAll(filepath.Join(dir, "ws", "t1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ws", "t1", "kept.txt"), []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(t.Context(), server.Config{
		Namespace:    server.NamespaceConfig{Tools: tools.Options{Tools: tools.AllTools()}},
		TenantMounts: []server.TenantMount{{Name: "ws", Template: ws}},
		Checkpoints:  &server.Checkpoints{Store: store, List: true, Restore: true},
		Identity:     headerIdentity,
		Audit:        server.Audit{Log: audit.New(&syncBuffer{}, audit.Genesis)},
		MCP:          mcpserver.Options{Approve: mcpserver.ApproveChanges},
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		hs.Close()
		srv.Close()
	})
	var accept atomic.Bool
	var asked atomic.Int32
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			if accept.Load() {
				return &mcp.ElicitResult{Action: "accept"}, nil
			}
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	tr := &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp", HTTPClient: &http.Client{Transport: caller{tenant: "t1", scopes: tenant.ScopeRead + " " + tenant.ScopeWrite}}, MaxRetries: -1}
	cs, err := client.Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })

	// Declined: nothing written, nothing journaled.
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"write_file", map[string]any{"path": "/ws/declined.txt", "content": "no\n"}},
		{"edit_file", map[string]any{"path": "/ws/kept.txt", "old_text": "before", "new_text": "declined"}},
		{"delete_file", map[string]any{"path": "/ws/kept.txt"}},
	} {
		if c.tool == "edit_file" {
			mustCall(t, cs, "", "read_file", map[string]any{"path": "/ws/kept.txt"})
		}
		out, isErr := callTool(t, cs, "", c.tool, c.args)
		if !strings.Contains(out, "declined") || !isErr && !strings.Contains(out, "not") {
			t.Fatalf("%s declined: %v %q", c.tool, isErr, out)
		}
	}
	if asked.Load() != 3 {
		t.Fatalf("the user was asked %d times, want 3", asked.Load())
	}
	if _, err := os.Stat(filepath.Join(dir, "ws", "t1", "declined.txt")); !os.IsNotExist(err) {
		t.Fatalf("a declined write was made: %v", err)
	}
	if out := mustCall(t, cs, "", "list_checkpoints", nil); strings.Contains(out, "/ws/") {
		t.Errorf("declined changes left checkpoints:\n%s", out)
	}

	// Accepted: one change, one checkpoint.
	accept.Store(true)
	mustCall(t, cs, "", "write_file", map[string]any{"path": "/ws/accepted.txt", "content": "yes\n"})
	out := mustCall(t, cs, "", "list_checkpoints", nil)
	if strings.Count(out, "/ws/") != 1 || !strings.Contains(out, "write /ws/accepted.txt") {
		t.Errorf("after one accepted change:\n%s", out)
	}
	// A restore to the start undoes that change and nothing else.
	mustCall(t, cs, "", "restore_checkpoint", map[string]any{"checkpoint": 0})
	if _, err := os.Stat(filepath.Join(dir, "ws", "t1", "accepted.txt")); !os.IsNotExist(err) {
		t.Errorf("the restore left accepted.txt: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "ws", "t1", "kept.txt")); err != nil || string(b) != "before\n" {
		t.Errorf("kept.txt after the restore: %q, %v", b, err)
	}
	cs.Close()
	srv.Close()

	// The store holds the accepted write, with its after-state, and the
	// restore.
	nsb, err := local.New(filepath.Join(dir, "ws", "t1"))
	if err != nil {
		t.Fatal(err)
	}
	sb, err := local.New(filepath.Join(dir, "ckpt", "t1"))
	if err != nil {
		t.Fatal(err)
	}
	j, err := checkpoint.Open(context.Background(), nsb, sb, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cps := j.Checkpoints()
	if len(cps) != 2 || cps[0].Op != "write" || cps[0].Path != "ws/accepted.txt" || len(cps[0].Changes) != 1 || cps[0].Changes[0].After == nil || cps[1].Op != "restore" {
		t.Fatalf("checkpoints in the store: %+v, want the accepted write, with its after-state, and the restore", cps)
	}
}
