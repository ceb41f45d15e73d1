package overlay_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/memfs"
	"github.com/fencefs/fencefs/overlay"
	"github.com/fencefs/fencefs/tools"
)

// TestToolsCannotReachIndex drives every tool at the overlay's index, in
// the upper layer beside the agent's files: no tool reads, lists, finds,
// searches, changes or replaces it, and the overlay's whiteouts survive.
func TestToolsCannotReachIndex(t *testing.T) {
	ctx := t.Context()
	base := memfs.New()
	for name, data := range map[string]string{"secret-gone.txt": "whiteout marker", "src/a.go": "package a\n"} {
		if err := backend.WriteFile(ctx, base, name, []byte(data), backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	upper := memfs.New()
	o, err := overlay.New(backend.ReadOnly(base), upper, overlay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	set, err := tools.New(o, tools.Options{Tools: tools.AllTools(), NoContentHashes: true})
	if err != nil {
		t.Fatal(err)
	}
	call := func(name, args string) (string, error) {
		return set.Call(ctx, name, json.RawMessage(args))
	}
	if _, err := call("delete_file", `{"path": "secret-gone.txt"}`); err != nil {
		t.Fatal(err)
	}
	index, err := backend.ReadFile(ctx, upper, overlay.IndexName)
	if err != nil {
		t.Fatalf("the index is not in the upper layer: %v", err)
	}
	idx := overlay.IndexName
	for _, c := range []struct{ tool, args string }{
		{"read_file", `{"path": "` + idx + `"}`},
		{"read_file", `{"path": "/` + idx + `"}`},
		{"file_info", `{"path": "` + idx + `"}`},
		{"write_file", `{"path": "` + idx + `", "content": "{}"}`},
		{"edit_file", `{"path": "` + idx + `", "old_string": "deleted", "new_string": "x"}`},
		{"delete_file", `{"path": "` + idx + `"}`},
		{"move_file", `{"source": "src/a.go", "destination": "` + idx + `"}`},
		{"copy_file", `{"source": "src/a.go", "destination": "` + idx + `"}`},
		{"move_file", `{"source": "` + idx + `", "destination": "stolen"}`},
		{"create_directory", `{"path": "` + idx + `/x"}`},
		{"list_directory", `{"path": "."}`},
		{"find_files", `{"pattern": "**"}`},
		{"find_files", `{"pattern": ".*"}`},
		{"search_files", `{"pattern": "secret-gone"}`},
		{"grep", `{"pattern": "secret-gone"}`},
		{"list_files", `{}`},
	} {
		out, err := call(c.tool, c.args)
		text := out
		if err != nil {
			text += " " + err.Error()
		}
		if strings.Contains(text, "secret-gone") || strings.Contains(text, `"format"`) {
			t.Errorf("%s %s showed the index's content: %q", c.tool, c.args, text)
		}
		lookup := strings.HasPrefix(c.tool, "list") || strings.HasPrefix(c.tool, "find") || strings.HasPrefix(c.tool, "search") || c.tool == "grep"
		switch {
		case lookup && strings.Contains(text, idx):
			t.Errorf("%s %s showed the index: %q", c.tool, c.args, text)
		case !lookup && err == nil:
			t.Errorf("%s %s succeeded: %q", c.tool, c.args, out)
		}
	}
	after, err := backend.ReadFile(ctx, upper, overlay.IndexName)
	if err != nil || string(after) != string(index) {
		t.Errorf("the index changed: %q, %v; was %q", after, err, index)
	}
	if data, err := backend.ReadFile(ctx, o, "secret-gone.txt"); err == nil {
		t.Errorf("the whited-out file came back: %q", data)
	}
}
