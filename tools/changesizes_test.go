package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"testing"
)

// hashOf is the full hex SHA-256 of s, as SizeChange.BeforeHash spells it.
func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestChangeRequestSizes checks the sizes each changing tool announces,
// which a quota reserves before the change commits.
func TestChangeRequestSizes(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		tool  string
		args  []any
		want  []SizeChange
	}{
		{"write creates", nil, "write_file", []any{"path", "n.txt", "content", "12345"}, []SizeChange{{"n.txt", -1, 5, "", false}}},
		{"write replaces", map[string]string{"f.txt": "abc"}, "write_file", []any{"path", "f.txt", "content", "x"}, []SizeChange{{"f.txt", 3, 1, hashOf("abc"), false}}},
		{"edit", map[string]string{"f.txt": "a b"}, "edit_file", []any{"path", "f.txt", "old_text", "b", "new_text", "bbbb"}, []SizeChange{{"f.txt", 3, 6, hashOf("a b"), false}}},
		{"delete", map[string]string{"f.txt": "abcd"}, "delete_file", []any{"path", "f.txt"}, []SizeChange{{"f.txt", 4, -1, hashOf("abcd"), false}}},
		{"copy", map[string]string{"f.txt": "abcd"}, "copy_file", []any{"source", "f.txt", "destination", "g.txt"}, []SizeChange{{"g.txt", -1, 4, "", false}}},
		{"copy replaces", map[string]string{"f.txt": "abcd", "g.txt": "xy"}, "copy_file", []any{"source", "f.txt", "destination", "g.txt", "overwrite", true}, []SizeChange{{"g.txt", 2, 4, hashOf("xy"), false}}},
		{"move", map[string]string{"f.txt": "abcd"}, "move_file", []any{"source", "f.txt", "destination", "g.txt"}, []SizeChange{{"g.txt", -1, 4, "", false}, {"f.txt", 4, -1, hashOf("abcd"), false}}},
		{"move replaces", map[string]string{"f.txt": "abcd", "g.txt": "xyzzy"}, "move_file", []any{"source", "f.txt", "destination", "g.txt", "overwrite", true}, []SizeChange{{"g.txt", 5, 4, hashOf("xyzzy"), false}, {"f.txt", 4, -1, hashOf("abcd"), false}}},
		{"patch", map[string]string{"m.txt": "m\n", "d.txt": "dd\n", "u.txt": "u\n", "r.txt": "123456\n"}, "apply_patch", []any{"patch",
			"*** Begin Patch\n*** Update File: u.txt\n@@\n-u\n+uuu\n*** Update File: m.txt\n*** Move to: r.txt\n@@\n-m\n+M\n*** Delete File: d.txt\n*** Add File: n.txt\n+n\n*** End Patch\n"},
			[]SizeChange{{"u.txt", 2, 4, hashOf("u\n"), false}, {"m.txt", 2, -1, hashOf("m\n"), false}, {"r.txt", 7, 2, hashOf("123456\n"), false}, {"d.txt", 3, -1, hashOf("dd\n"), false}, {"n.txt", -1, 2, "", false}}},
		{"directory", nil, "create_directory", []any{"path", "d"}, []SizeChange{{"d", -1, 0, "", true}}},
		{"directory and parents", map[string]string{"a/f.txt": "f"}, "create_directory", []any{"path", "a/b/c"}, []SizeChange{{"a/b", -1, 0, "", true}, {"a/b/c", -1, 0, "", true}}},
		{"patch with new parents", map[string]string{"a/f.txt": "f"}, "apply_patch", []any{"patch",
			"*** Begin Patch\n*** Add File: a/x/y/n.txt\n+n\n*** Add File: a/x/m.txt\n+m\n*** Add File: z/o.txt\n+o\n*** End Patch\n"},
			[]SizeChange{{"a/x", -1, 0, "", true}, {"a/x/y", -1, 0, "", true}, {"z", -1, 0, "", true},
				{"a/x/y/n.txt", -1, 2, "", false}, {"a/x/m.txt", -1, 2, "", false}, {"z/o.txt", -1, 2, "", false}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newMemFS()
			for name, data := range tc.files {
				m.put(name, data)
			}
			var got []*ChangeRequest
			s := newSet(t, m, Options{Tools: AllTools(), OnChangeRequest: func(_ context.Context, r *ChangeRequest) error {
				got = append(got, r)
				return nil
			}})
			ok(t, s, tc.tool, tc.args...)
			if len(got) != 1 {
				t.Fatalf("%d change requests", len(got))
			}
			if !reflect.DeepEqual(got[0].Sizes, tc.want) {
				t.Errorf("Sizes %v, want %v", got[0].Sizes, tc.want)
			}
		})
	}
}
