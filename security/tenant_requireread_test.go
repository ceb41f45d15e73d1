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
// expected_hash: a change that replaces or removes an existing file
// (write, edit, delete, move, copy over it) without the hash of its read
// is refused and changes nothing, whichever replica answers; apply_patch,
// which carries no hashes, is not offered.
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
		// A null or empty hash is no precondition to the tools, so it
		// is none to the guard either.
		{"write_file", map[string]any{"path": "a.txt", "content": "changed\n", "expected_hash": nil}},
		{"write_file", map[string]any{"path": "a.txt", "content": "changed\n", "expected_hash": ""}},
		{"edit_file", map[string]any{"path": "a.txt", "old_text": "hello", "new_text": "bye", "expected_hash": nil}},
	} {
		if text, isErr := callTenantTool(t, sessions[1], tc.tool, tc.args); !isErr || !strings.Contains(text, "expected_hash") {
			t.Errorf("%s without expected_hash: %q, isError %v", tc.tool, text, isErr)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "b.txt"), []byte("bee\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Every other way to replace or remove a file unread is refused too.
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"delete_file", map[string]any{"path": "a.txt"}},
		{"move_file", map[string]any{"source": "a.txt", "destination": "c.txt"}},
		{"move_file", map[string]any{"source": "b.txt", "destination": "a.txt", "overwrite": true, "expected_hash": "0123456789ab"}},
		{"copy_file", map[string]any{"source": "b.txt", "destination": "a.txt", "overwrite": true}},
		{"delete_file", map[string]any{"path": "a.txt", "expected_hash": nil}},
		{"copy_file", map[string]any{"source": "b.txt", "destination": "a.txt", "overwrite": true, "destination_hash": nil}},
	} {
		if text, isErr := callTenantTool(t, sessions[1], tc.tool, tc.args); !isErr || !strings.Contains(text, "_hash") {
			t.Errorf("%s %v without the hash of its read: %q, isError %v", tc.tool, tc.args, text, isErr)
		}
	}
	// apply_patch carries no hashes, so it is not offered.
	list, err := sessions[1].ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if tool.Name == "apply_patch" {
			t.Error("apply_patch is offered under stateless --require-read")
		}
	}
	if data, _ := os.ReadFile(file); string(data) != "hello\nworld\n" {
		t.Fatalf("a.txt holds %q after refused changes", data)
	}
	if _, err := os.Stat(filepath.Join(root, "c.txt")); !os.IsNotExist(err) {
		t.Errorf("c.txt after a refused move: %v", err)
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
