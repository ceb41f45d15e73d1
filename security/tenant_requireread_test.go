package security

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestTenantStatelessRequireRead: over stateless HTTP, where one agent's
// requests may reach different replicas, --require-read holds by
// expected_hash: a change to an existing file without the hash of its
// read is refused and changes nothing, whichever replica answers.
func TestTenantStatelessRequireRead(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	file := filepath.Join(root, "a.txt")
	if err := os.WriteFile(file, []byte("hello\nworld\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var replicas []*tenantServe
	for range 2 {
		replicas = append(replicas, startTenantServe(t, "serve", "--http", "127.0.0.1:0", "--root", root, "--tools", "all", "--require-read"))
	}
	var sessions []*mcp.ClientSession
	for _, r := range replicas {
		cs, err := connectTenant(t, r.url, "", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, cs)
	}
	// The read goes to one replica, the hash-less writes to the other.
	text, isErr := callTenantTool(t, sessions[0], "read_file", map[string]any{"path": "a.txt"})
	m := regexp.MustCompile(`hash:([0-9a-f]+)`).FindStringSubmatch(text)
	if isErr || m == nil {
		t.Fatalf("read_file: %q", text)
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"write_file", map[string]any{"path": "a.txt", "content": "changed\n"}},
		{"edit_file", map[string]any{"path": "a.txt", "old_text": "hello", "new_text": "bye"}},
		{"write_file", map[string]any{"path": "./a.txt", "content": "changed\n"}},
	} {
		if text, isErr := callTenantTool(t, sessions[1], tc.tool, tc.args); !isErr || !strings.Contains(text, "expected_hash") {
			t.Errorf("%s without expected_hash: %q, isError %v", tc.tool, text, isErr)
		}
	}
	if data, _ := os.ReadFile(file); string(data) != "hello\nworld\n" {
		t.Fatalf("a.txt holds %q after refused changes", data)
	}
	if text, isErr := callTenantTool(t, sessions[1], "write_file", map[string]any{"path": "a.txt", "content": "changed\n", "expected_hash": "0123456789ab"}); !isErr || !strings.Contains(text, "Conflict") {
		t.Errorf("a wrong expected_hash: %q", text)
	}
	if text, isErr := callTenantTool(t, sessions[1], "write_file", map[string]any{"path": "new.txt", "content": "new\n"}); isErr {
		t.Errorf("creating a file needs no read: %q", text)
	}
	if text, isErr := callTenantTool(t, sessions[1], "write_file", map[string]any{"path": "a.txt", "content": "changed\n", "expected_hash": m[1]}); isErr {
		t.Fatalf("with the read's hash: %q", text)
	}
	if data, _ := os.ReadFile(file); string(data) != "changed\n" {
		t.Fatalf("a.txt holds %q", data)
	}
}
