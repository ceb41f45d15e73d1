package security

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTenantStatelessRequireReadTrees (class 5, the server's part): over
// stateless HTTP, --require-read judges every file a recursive delete
// removes and every file a directory move takes away: a directory that
// holds any file, at any depth and hidden or not, is neither deleted nor
// moved, since none of its files can carry the hash of its read; an empty
// tree still goes.
func TestTenantStatelessRequireReadTrees(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for name, content := range map[string]string{
		"d/unread.txt":        "never read\n",
		"deep/a/b/c/file.txt": "deep and unread\n",
		"hidden/.only-dot":    "hidden and unread\n",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "empty", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	srv := startTenantServe(t, "serve", "--http", "127.0.0.1:0", "--root", root, "--tools", "all", "--require-read", "--no-default-protect")
	cs, err := connectTenant(t, srv.url, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	before := dirState(t, root)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"move_file", map[string]any{"source": "d", "destination": "moved"}},
		{"move_file", map[string]any{"source": "deep/a", "destination": "moved-deep"}},
		{"move_file", map[string]any{"source": "hidden", "destination": "moved-hidden"}},
		{"delete_file", map[string]any{"path": "d", "recursive": true}},
		{"delete_file", map[string]any{"path": "deep", "recursive": true}},
		{"delete_file", map[string]any{"path": "deep/a", "recursive": true}},
		{"delete_file", map[string]any{"path": "hidden", "recursive": true}},
	} {
		if text, isErr := callTenantTool(t, cs, tc.tool, tc.args); !isErr || !strings.Contains(text, "expected_hash") {
			t.Errorf("%s %v over unread files: %q, isError %v", tc.tool, tc.args, text, isErr)
		}
	}
	wantDirState(t, root, before)
	if text, isErr := callTenantTool(t, cs, "delete_file", map[string]any{"path": "empty", "recursive": true}); isErr {
		t.Errorf("deleting a tree without files: %q", text)
	}
	if _, err := os.Stat(filepath.Join(root, "empty")); !os.IsNotExist(err) {
		t.Errorf("the empty tree after its delete: %v", err)
	}
}
