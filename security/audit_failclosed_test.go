package security

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAuditFailClosed (class 1, the server's part): once the audit log's
// storage fails (here /dev/full: every write is ENOSPC), no change
// reaches storage unrecorded: every later change is refused before it
// runs and changes nothing, and the server says so in its log, in
// /readyz (503) and in /metrics; reading goes on. The record of a change
// is appended (and synced) before the change commits, so even the first
// change, whose record is the one that failed, is not made.
func TestAuditFailClosed(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skipf("no /dev/full to fail the audit log's writes: %v", err)
	}
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "keep.txt"), []byte("kept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startTenantServe(t, "serve", "--http", "127.0.0.1:0", "--root", root, "--tools", "all", "--audit", "/dev/full")
	cs, err := connectTenant(t, srv.url, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if text, isErr := callTenantTool(t, cs, "write_file", map[string]any{"path": "first.txt", "content": "1\n"}); !isErr || !strings.Contains(text, "audit log") {
		t.Errorf("the change whose line failed: %q, isError %v", text, isErr)
	}
	if _, err := os.Stat(filepath.Join(root, "first.txt")); !os.IsNotExist(err) {
		t.Errorf("the change whose write-ahead line failed reached storage: %v", err)
	}
	before := dirState(t, root)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"write_file", map[string]any{"path": "second.txt", "content": "2\n"}},
		{"edit_file", map[string]any{"path": "keep.txt", "old_text": "kept", "new_text": "lost"}},
		{"delete_file", map[string]any{"path": "keep.txt"}},
		{"create_directory", map[string]any{"path": "dir"}},
		{"apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Add File: patched.txt\n+x\n*** End Patch\n"}},
	} {
		if text, isErr := callTenantTool(t, cs, tc.tool, tc.args); !isErr || !strings.Contains(text, "audit log") {
			t.Errorf("%s with a broken audit log: %q, isError %v", tc.tool, text, isErr)
		}
	}
	wantDirState(t, root, before)
	if text, isErr := callTenantTool(t, cs, "read_file", map[string]any{"path": "keep.txt"}); isErr || !strings.Contains(text, "kept") {
		t.Errorf("read_file with a broken audit log: %q", text)
	}
	base := strings.TrimSuffix(srv.url, "/mcp")
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := get("/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "audit log") {
		t.Errorf("/readyz with a broken audit log: %d %q", code, body)
	}
	if _, body := get("/metrics"); !strings.Contains(body, "fencefs_audit_broken 1") {
		t.Errorf("/metrics does not say the audit log is broken")
	}
	srv.waitLog(t, "the audit log cannot be written")
}
