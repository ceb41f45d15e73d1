package security

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fencefs/fencefs/tenant"
)

// TestTenantLoopbackOnly: without --auth, serve --http refuses to bind
// an address other than loopback, where anyone reaching the port would
// use the tools.
func TestTenantLoopbackOnly(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		if out, served := serveOrExit(t, "serve", "--root", root, "--http", addr); served || !strings.Contains(out, "without --auth the server binds only a loopback address") {
			t.Errorf("--http %s without --auth: served %v\n%s", addr, served, out)
		}
	}
}

// serveOrExit runs fencefs with args until it exits or logs that it
// serves (then it is killed), and returns its stderr and which it was.
func serveOrExit(t *testing.T, args ...string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), serveStartDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, serveBinary.get(t), args...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	served := false
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "serving MCP") {
			served = true
			cmd.Process.Kill()
		}
	}
	cmd.Wait()
	return out.String(), served
}

// TestTenantTokenFileReload serves --auth tokens: a token of the file is
// accepted, one not in it is not, and once the file changes and the
// server gets SIGHUP, the removed token is refused and the new one works.
func TestTenantTokenFileReload(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	file := filepath.Join(base, "tokens.yaml")
	tokens := func(name, token string) []byte {
		return []byte("tokens:\n  - name: " + name + "\n    sha256: " + tenant.HashToken(token) + "\n    tenant: t1\n    scopes: [files:read]\n")
	}
	if err := os.WriteFile(file, tokens("old", "old-secret-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startTenantServe(t, "serve", "--http", "127.0.0.1:0", "--auth", "tokens", "--token-file", file, "--tenant-mount", tenantDirs(t, base))
	if code, _ := postMCP(t, srv.url, "old-secret-token", nil); code != http.StatusOK {
		t.Fatalf("the file's token: %d", code)
	}
	if code, _ := postMCP(t, srv.url, "new-secret-token", nil); code != http.StatusUnauthorized {
		t.Fatalf("a token not in the file: %d", code)
	}
	if err := os.WriteFile(file, tokens("new", "new-secret-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := srv.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	srv.waitLog(t, "reloaded the token file")
	if code, _ := postMCP(t, srv.url, "old-secret-token", nil); code != http.StatusUnauthorized {
		t.Errorf("a removed token after SIGHUP: %d", code)
	}
	cs, err := connectTenant(t, srv.url, "new-secret-token", "", nil)
	if err != nil {
		t.Fatalf("the new token: %v", err)
	}
	if text, isErr := callTenantTool(t, cs, "read_file", map[string]any{"path": "/ws/secret.txt"}); isErr || !strings.Contains(text, "secret of t1") {
		t.Errorf("read_file with the new token: %q", text)
	}
	// A file that no longer loads keeps the tokens loaded before.
	if err := os.WriteFile(file, []byte("tokens: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := srv.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	srv.waitLog(t, "the tokens loaded before stay")
	if code, _ := postMCP(t, srv.url, "new-secret-token", nil); code != http.StatusOK {
		t.Errorf("the loaded token after a bad reload: %d", code)
	}
}
