package tools

import (
	"strings"
	"testing"
)

// TestDescriptionsSayThePathRules checks that the model is told what a
// leading '/' means and how listings show paths, in a plain and in a
// rooted namespace.
func TestDescriptionsSayThePathRules(t *testing.T) {
	tests := []struct {
		name     string
		s        *Set
		rule, ls string
	}{
		{"plain", newSet(t, newMemFS(), Options{}),
			"A path starting with '/' is a host path and must lie inside the workspace.",
			"Paths are shown relative to the working directory."},
		{"rooted", newSet(t, memRooted{newMemFS()}, Options{}),
			"A path starting with '/' starts at the namespace root, whose top-level directories are the mounts",
			"Paths are shown rooted ('/ws/notes.md'), whatever the working directory."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, name := range []string{"read_file", "write_file", "edit_file"} {
				tool, _ := tt.s.Tool(name)
				if !strings.Contains(tool.Description, tt.rule) {
					t.Errorf("%s: %q lacks %q", name, tool.Description, tt.rule)
				}
			}
			ls, _ := tt.s.Tool("list_directory")
			if !strings.Contains(ls.Description, tt.ls) {
				t.Errorf("list_directory: %q lacks %q", ls.Description, tt.ls)
			}
		})
	}
}
