package tools

import (
	"testing"
)

// TestChangeToolsAcrossMounts checks the change tools between the mounts
// of a rooted namespace: a move across mounts is refused before anything
// changes, a copy streams across them, and a read-only mount refuses to
// be changed, as source or as destination.
func TestChangeToolsAcrossMounts(t *testing.T) {
	m, _ := mountedFixture(t)
	s := newSet(t, m, Options{Cwd: "/tenant", Tools: AllTools()})
	ok(t, s, "write_file", "path", "a.txt", "content", "a\n")
	ok(t, s, "create_directory", "path", "/work/d")
	tests := []struct {
		tool string
		kv   []any
		want string
	}{
		{"move_file", []any{"source", "a.txt", "destination", "/work/d/a.txt"},
			"Cannot move 'a.txt' to '/work/d/a.txt': they are on different mounts. Use copy_file, then delete_file."},
		{"move_file", []any{"source", "/docs/guide.md", "destination", "/docs/g.md"},
			"Path '/docs/guide.md' is on read-only storage and cannot be changed. Write somewhere else."},
		{"delete_file", []any{"path", "/docs/guide.md"},
			"Path '/docs/guide.md' is on read-only storage and cannot be changed. Write somewhere else."},
		{"copy_file", []any{"source", "a.txt", "destination", "/docs/a.txt"},
			"Path '/docs/a.txt' is on read-only storage and cannot be changed. Write somewhere else."},
		{"delete_file", []any{"path", "/work"}, "Path '/work' is a mount and cannot be deleted or moved."},
		{"move_file", []any{"source", "/work", "destination", "/work2"}, "Path '/work' is a mount and cannot be deleted or moved."},
	}
	for _, tt := range tests {
		wantEqual(t, retry(t, s, tt.tool, tt.kv...), tt.want)
	}
	wantEqual(t, ok(t, s, "copy_file", "source", "a.txt", "destination", "/work/d/a.txt"),
		"Copied a.txt to /work/d/a.txt. [hash:"+h12("a\n")+"]")
	wantEqual(t, ok(t, s, "read_file", "path", "/work/d/a.txt"), "[/work/d/a.txt | 1 line | hash:"+h12("a\n")+"]\n     1\ta\n")
	wantEqual(t, ok(t, s, "delete_file", "path", "a.txt"), "Deleted file: a.txt")
	wantEqual(t, ok(t, s, "read_file", "path", "/docs/guide.md"), "[/docs/guide.md | 1 line | hash:"+h12("read me\n")+"]\n     1\tread me\n")
}
