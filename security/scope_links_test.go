package security

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/policy"
	"github.com/fencefs/fencefs/tools"
)

// scopeSecret is the content of the file of the tenant outside the scope.
const scopeSecret = "TENANT-TWO-ONLY\n"

// scopeLayout adds to the base layout two tenants' trees side by side,
// with links between them: from the other tenant's tree into the scope,
// from the scope through the other tree and back, from the scope out, and
// one that stays inside.
func scopeLayout(s secrets) layout {
	l := baseLayout(s)
	l["ws/t1/own.txt"] = file("mine\n")
	l["ws/t2/theirs.txt"] = file(scopeSecret)
	for name, target := range map[string]string{
		"t2/l-into":   "../t1/own.txt",
		"t1/l-via":    "../t2/l-back",
		"t2/l-back":   "../t1/own.txt",
		"t1/l-viadir": "../t2/d-back/own.txt",
		"t2/d-back":   "../t1",
		"t1/l-out":    "../t2/theirs.txt",
		"t1/l-direct": "own.txt",
	} {
		l["ws/"+name] = link(target)
	}
	return l
}

// TestScopeJudgesLinkChains checks that a policy.Scope as the Permission
// hook judges every path a link chain passes, not only where it ends: a
// link in another tenant's tree that leads into the scope, and a link in
// the scope whose chain passes through the other tree, are refused by
// every tool with the scope's message naming the path as written, and
// change nothing; walkers below the scope do not follow such links; a link
// that stays in the scope still works.
func TestScopeJudgesLinkChains(t *testing.T) {
	forWorlds(t, linkKinds, scopeLayout, func(t *testing.T, w *world) {
		root := "/t1"
		if w.rooted {
			root = "/ws/t1"
		}
		scope, err := policy.NewScope(root)
		if err != nil {
			t.Fatal(err)
		}
		s := w.set(t, tools.Options{Cwd: w.shownPath("t1"), Permission: scope})
		before := w.snap(t)
		for _, p := range []string{"../t2/l-into", "l-via", "l-viadir", "l-out"} {
			written := "t1/" + p
			if strings.HasPrefix(p, "../") {
				written = p[3:]
			}
			want := fmt.Sprintf("Path '%s' is outside the allowed scope.", w.shownPath(written))
			for _, tool := range tools.AllTools() {
				for _, args := range refusalArgs(tool, p) {
					out, _ := wantRefusal(t, s, tool, args, want)
					if strings.Contains(out, strings.TrimSpace(scopeSecret)) {
						t.Errorf("%s %v: shows the other tenant's file: %s", tool, args, clip(out))
					}
				}
			}
		}
		// Walkers below the scope never follow a link out of it.
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"search_files", map[string]any{"pattern": "TENANT|mine"}},
			{"grep", map[string]any{"pattern": "TENANT|mine"}},
			{"find_files", map[string]any{"pattern": "**"}},
			{"list_files", map[string]any{}},
			{"list_directory", map[string]any{}},
		} {
			out, err := call(t, s, c.tool, c.args)
			if err != nil || !strings.Contains(out, "own.txt") {
				t.Errorf("%s %v: %q, %v; want own.txt listed", c.tool, c.args, clip(out), err)
			}
			for _, hidden := range []string{"l-out", "l-via", "TENANT"} {
				if c.tool != "list_directory" && strings.Contains(out, hidden) {
					t.Errorf("%s %v: shows %q, a link leading out of the scope:\n%s", c.tool, c.args, hidden, clip(out))
				}
			}
		}
		w.checkChanges(t, "refused calls", before, w.snap(t), true)
		out, err := call(t, s, "read_file", map[string]any{"path": "l-direct"})
		if err != nil || !strings.Contains(out, "mine") {
			t.Errorf("read_file of a link inside the scope: %q, %v; want the file", clip(out), err)
		}
	})
}
