package security

import (
	"errors"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/tools"
)

// treeLayout adds trees to move and delete to the base layout.
func treeLayout(s secrets) layout {
	l := baseLayout(s)
	for name, data := range map[string]string{
		"srcdeny/secret.env":        "TOKEN=1\n",
		"srcdeny/readme.txt":        "readme\n",
		"srcprot/config/app.yml":    "app: 1\n",
		"srcprot/readme.txt":        "readme\n",
		"srcdeep/x/y/secret.env":    "TOKEN=2\n",
		"srcok/readme.txt":          "readme\n",
		"tree/one.txt":              "one\n",
		"tree/sub/two.txt":          "two\n",
		"tree/sub/deeper/three.txt": "three\n",
	} {
		l["ws/"+name] = file(data)
	}
	return l
}

// TestTreeMovesJudgeWhereTheyLand (class 5): a directory move is judged
// at every path its tree lands on, not only at the paths it leaves. A
// tree whose secret.env would land where that path is denied, or whose
// config/ would land under a protected pattern, is refused whole and
// nothing moves; the same tree is allowed where nothing below the
// destination is denied or protected. On every backend.
func TestTreeMovesJudgeWhereTheyLand(t *testing.T) {
	forWorlds(t, allKinds, treeLayout, func(t *testing.T, w *world) {
		s := w.set(t, tools.Options{
			Denied:    []string{"**/dst/secret.env", "**/dst/x/y/secret.env"},
			Protected: []string{"**/dst/config/**"},
		})
		for _, c := range []struct {
			src, dst string
			kind     tools.Kind
			names    string // the destination entry the refusal names
		}{
			{"srcdeny", "dst", tools.KindDenied, "dst/secret.env"},
			{"srcprot", "dst", tools.KindProtected, "dst/config"},
			{"srcdeep", "dst", tools.KindDenied, "dst/x/y/secret.env"},
			{"srcdeny", "sub/dst", tools.KindDenied, "sub/dst/secret.env"},
		} {
			before := w.snap(t)
			out, err := call(t, s, "move_file", map[string]any{"source": c.src, "destination": c.dst})
			if err == nil || !tools.IsRetry(err) {
				t.Errorf("move %s -> %s: got %q, %v; want a refusal", c.src, c.dst, out, err)
				continue
			}
			if !errors.Is(err, c.kind) {
				t.Errorf("move %s -> %s: kind %q, want %q (%v)", c.src, c.dst, tools.KindOf(err), c.kind, err)
			}
			if !strings.Contains(err.Error(), c.names) {
				t.Errorf("move %s -> %s: refusal %q does not name %q", c.src, c.dst, err, c.names)
			}
			if d := before.diff(w.snap(t)); len(d) > 0 {
				t.Errorf("move %s -> %s refused but changed %v", c.src, c.dst, d)
			}
		}
		// A tree with nothing denied or protected below the destination
		// moves.
		if out, err := call(t, s, "move_file", map[string]any{"source": "srcok", "destination": "dst"}); err != nil {
			t.Fatalf("move srcok -> dst: %v", err)
		} else if !strings.Contains(out, "Moved") {
			t.Fatalf("move srcok -> dst: %q", out)
		}
	})
}

// TestTreeDeleteRequiresRead (class 5): with RequireRead, a recursive
// delete is refused whole while the tree holds a file the Set has not
// read, or one changed since it was read (by another writer), and
// deletes once every file was read as it is; on every backend.
func TestTreeDeleteRequiresRead(t *testing.T) {
	forWorlds(t, allKinds, treeLayout, func(t *testing.T, w *world) {
		s := w.set(t, tools.Options{RequireRead: true})
		other := w.set(t, tools.Options{})
		del := map[string]any{"path": "tree", "recursive": true}
		refused := func(step string, kind tools.Kind, names string) {
			t.Helper()
			before := w.snap(t)
			out, err := call(t, s, "delete_file", del)
			if err == nil || !errors.Is(err, kind) {
				t.Fatalf("%s: got %q, %v; want a refusal of kind %q", step, out, err, kind)
			}
			if !strings.Contains(err.Error(), names) {
				t.Errorf("%s: refusal %q does not name %q", step, err, names)
			}
			if d := before.diff(w.snap(t)); len(d) > 0 {
				t.Fatalf("%s: refused but changed %v", step, d)
			}
		}
		refused("nothing read", tools.KindNotRead, "tree/")
		for _, p := range []string{"tree/one.txt", "tree/sub/two.txt"} {
			if _, err := call(t, s, "read_file", map[string]any{"path": p}); err != nil {
				t.Fatal(err)
			}
		}
		refused("one file unread", tools.KindNotRead, "three.txt")
		if _, err := call(t, s, "read_file", map[string]any{"path": "tree/sub/deeper/three.txt"}); err != nil {
			t.Fatal(err)
		}
		if _, err := call(t, other, "write_file", map[string]any{"path": "tree/sub/two.txt", "content": "changed\n"}); err != nil {
			t.Fatal(err)
		}
		refused("changed since read", tools.KindConflict, "two.txt")
		if _, err := call(t, s, "read_file", map[string]any{"path": "tree/sub/two.txt"}); err != nil {
			t.Fatal(err)
		}
		out, err := call(t, s, "delete_file", del)
		if err != nil || !strings.Contains(out, "Deleted directory") {
			t.Fatalf("every file read: %q, %v", out, err)
		}
		if _, err := call(t, s, "file_info", map[string]any{"path": "tree"}); !errors.Is(err, tools.KindNotFound) {
			t.Fatalf("tree still there after the delete: %v", err)
		}
	})
}
