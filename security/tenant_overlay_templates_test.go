package security

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/tenant"
)

// TestTenantOverlayTemplatesDisjoint (class 2, overlay templates): an
// overlay template's layers are proven disjoint from the other templates
// and shared mounts as a template of their own would be. With
// ws=overlay:local:REPO:ro+local:D/{tenant} beside
// notes=local:D/notes/{tenant}, tenant "notes" has D/notes, every
// tenant's notes, as its upper layer: it reads and writes t1's notes at
// /ws/t1. `fencefs serve` must refuse the set before serving anyone,
// naming the id; a disjoint overlay set is served.
func TestTenantOverlayTemplatesDisjoint(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	d, repo := filepath.Join(base, "d"), filepath.Join(base, "repo")
	for _, dir := range []string{filepath.Join(d, "notes", "t1"), filepath.Join(d, "notes", "notes"), filepath.Join(d, "ws", "t1"), repo} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(d, "notes", "t1", "plan.txt"), []byte("t1's plan\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(base, "tokens.yaml")
	var tokens strings.Builder
	tokens.WriteString("tokens:\n")
	for _, id := range []string{"t1", "notes"} {
		fmt.Fprintf(&tokens, "  - name: %s\n    sha256: %s\n    tenant: %s\n    scopes: [files:read, files:write]\n", id, tenant.HashToken("token-of-"+id), id)
	}
	if err := os.WriteFile(file, []byte(tokens.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	serve := func(mounts ...string) []string {
		args := []string{"serve", "--http", "127.0.0.1:0", "--tools", "all", "--auth", "tokens", "--token-file", file}
		for _, m := range mounts {
			args = append(args, "--tenant-mount", m)
		}
		return args
	}

	overlapping := serve("ws=overlay:local:"+repo+":ro+local:"+filepath.Join(d, "{tenant}"), "notes=local:"+filepath.Join(d, "notes", "{tenant}"))
	serveBinary.get(t) // built before serveOrExit's deadline starts
	log, served := serveOrExit(t, overlapping...)
	if served {
		srv := startTenantServe(t, overlapping...)
		cs, err := connectTenant(t, srv.url, "token-of-notes", "", nil)
		if err != nil {
			t.Fatalf("the overlapping set was served; connecting as tenant notes: %v", err)
		}
		text, _ := callTenantTool(t, cs, "read_file", map[string]any{"path": "/ws/t1/plan.txt"})
		t.Fatalf("the overlapping set was served: tenant notes read t1's note through its overlay's upper layer: %q", text)
	}
	if !strings.Contains(log, "reach the same storage") || !strings.Contains(log, `"notes"`) {
		t.Errorf("the refusal does not name the overlap and tenant notes:\n%s", log)
	}

	// The same layers under directories of their own are served.
	srv := startTenantServe(t, serve("ws=overlay:local:"+repo+":ro+local:"+filepath.Join(d, "ws", "{tenant}"), "notes=local:"+filepath.Join(d, "notes", "{tenant}"))...)
	cs, err := connectTenant(t, srv.url, "token-of-t1", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if text, isErr := callTenantTool(t, cs, "read_file", map[string]any{"path": "/notes/plan.txt"}); isErr || !strings.Contains(text, "t1's plan") {
		t.Errorf("t1 reading its own note: %q", text)
	}
}
