package security

import (
	"strings"
	"testing"

	"github.com/fencefs/fencefs/tools"
)

// linkKinds are the worlds that hold symlinks.
var linkKinds = []string{kindLocal, kindMounted, kindSFTP}

// symlinkLayout adds to the base layout links planted by a hostile
// workspace: out of the root (relative, absolute, through ".." inside
// the target, to the sibling directories, to the parent), chains and
// loops, dangling links to outside files and directories, and links that
// stay inside (to the root itself, to a file, to a directory, to denied
// and protected files). Every link that leads out is named "x-out-...".
func symlinkLayout(s secrets) layout {
	l := baseLayout(s)
	for name, target := range map[string]string{
		"x-out-dir":          "@/ws-evil",
		"x-out-rel":          "../ws-evil",
		"x-out-file":         "../ws-evil/secret.txt",
		"x-out-absfile":      "@/ws-evil/secret.txt",
		"x-out-sibling":      "../ws2",
		"x-out-parent":       "..",
		"sub/x-out-up":       "../..",
		"x-out-mixed":        "sub/../../ws-evil",
		"x-out-abslex":       "@/ws/../ws-evil",
		"x-out-chain1":       "x-out-chain2",
		"x-out-chain2":       "sub/x-out-chain3",
		"sub/x-out-chain3":   "../../ws-evil/secret.txt",
		"x-out-loop1":        "x-out-loop2",
		"x-out-loop2":        "x-out-loop1",
		"x-out-self":         "x-out-self",
		"x-out-dangle":       "../ws-evil/created.txt",
		"x-out-dangleabs":    "@/outside/created.txt",
		"x-out-dangledir":    "../newdir",
		"x-out-danglesub":    "@/newdir2/deeper",
		"lnk-root":           ".",
		"lnk-rootabs":        "@/ws",
		"lnk-in":             "a.txt",
		"lnk-mid":            "sub",
		"lnk-denied":         "private/p.txt",
		"lnk-denieddir":      "private",
		"lnk-env":            ".env",
		"lnk-git":            ".git/config",
		"lnk-gitdir":         ".git",
		"lnk-dangle-in":      "nothere.txt",
		"sub/lnk-up-in":      "../a.txt",
		"lnk-chain-in1":      "lnk-chain-in2",
		"lnk-chain-in2":      "sub/deep/c.txt",
		"lnk-mid-to-rootabs": "@/ws/sub",
	} {
		l["ws/"+name] = link(target)
	}
	l["ws/.git/config"] = file("[core]\n")
	return l
}

// symlinkCases aim at the links as final and middle components.
var symlinkCases = []pathCase{
	{path: "x-out-dir", e: invalid, want: outsideWant},
	{path: "x-out-dir/secret.txt", e: invalid, want: outsideWant},
	{path: "x-out-dir/new.txt", e: invalid, want: outsideWant},
	{path: "x-out-rel", e: invalid, want: outsideWant},
	{path: "x-out-rel/secret.txt", e: invalid, want: outsideWant},
	{path: "x-out-rel/zz", e: invalid, want: outsideWant},
	{path: "x-out-file", e: invalid, want: outsideWant},
	{path: "x-out-absfile", e: invalid, want: outsideWant},
	{path: "x-out-sibling/secret.txt", e: invalid, want: outsideWant},
	{path: "x-out-parent", e: invalid, want: outsideWant},
	{path: "x-out-parent/secret.txt", e: invalid, want: outsideWant},
	{path: "x-out-parent/ws-evil/secret.txt", e: invalid, want: outsideWant},
	{path: "sub/x-out-up/secret.txt", e: invalid, want: outsideWant},
	{path: "sub/x-out-up", e: invalid, want: outsideWant},
	{path: "x-out-mixed/secret.txt", e: invalid, want: outsideWant},
	{path: "x-out-abslex/secret.txt", e: invalid, want: outsideWant},
	{path: "x-out-chain1", e: invalid, want: outsideWant},
	{path: "lnk-mid/x-out-chain3", e: invalid, want: outsideWant},
	{path: "x-out-loop1", e: invalid, want: "symlink loop"},
	{path: "x-out-loop1/x", e: invalid, want: "symlink loop"},
	{path: "x-out-self", e: invalid, want: "symlink loop"},
	{path: "x-out-dangle", e: invalid, want: outsideWant},
	{path: "x-out-dangleabs", e: invalid, want: outsideWant},
	{path: "x-out-dangledir", e: invalid, want: outsideWant},
	{path: "x-out-dangledir/new.txt", e: invalid, want: outsideWant},
	{path: "x-out-danglesub", e: invalid, want: outsideWant},
	{path: "x-out-danglesub/x/y", e: invalid, want: outsideWant},
	{path: "lnk-root", e: contained},
	{path: "lnk-root/a.txt", e: contained},
	{path: "lnk-root/../secret.txt", e: contained},
	{path: "lnk-root/lnk-root/x-out-dir/secret.txt", e: invalid, want: outsideWant},
	{path: "lnk-rootabs/a.txt", e: contained},
	{path: "lnk-rootabs", e: contained},
	{path: "lnk-in", e: contained},
	{path: "lnk-mid/b.txt", e: contained},
	{path: "lnk-mid", e: contained},
	{path: "lnk-mid/../a.txt", e: contained},
	{path: "sub/lnk-up-in", e: contained},
	{path: "lnk-chain-in1", e: contained},
	{path: "lnk-mid-to-rootabs/b.txt", e: contained},
	{path: "lnk-dangle-in", e: contained},
	{path: "lnk-env", e: protectedWrite, want: "is protected"},
	{path: "lnk-git", e: protectedWrite, want: "is protected"},
	{path: "lnk-gitdir/hooks/pre-commit", e: protectedWrite, want: "is protected"},
	{path: "lnk-denied", e: invalid, want: "is denied by pattern '**/private'"},
	{path: "lnk-denieddir", e: invalid, want: "is denied by pattern '**/private'"},
	{path: "lnk-denieddir/p.txt", e: invalid, want: "is denied by pattern '**/private'"},
	{path: "lnk-root/private/p.txt", e: invalid, want: "is denied by pattern '**/private'"},
}

const outsideWant = "resolves outside the root directory."

// TestSymlinks attacks with the links a hostile workspace can hold: every
// tool refuses a link that leads out, whether it is the final component,
// a middle one or the root of a walk, dangling or not, through chains and
// loops, with a retryable error; a write through a dangling link never
// creates the outside file; denied and protected targets stay refused
// under a link's name; links inside the root work.
func TestSymlinks(t *testing.T) {
	forWorlds(t, linkKinds, symlinkLayout, func(t *testing.T, w *world) {
		s := w.set(t, tools.Options{Denied: []string{"**/private"}})
		w.attackPaths(t, s, symlinkCases)
		t.Run("walkers", func(t *testing.T) { w.walkersDropLinks(t, s) })
	})
}

// walkersDropLinks runs every walker from the root and from a linked
// directory and checks that no link leading out, no denied directory and
// no link to a denied target is listed, and that walks through the link
// to the root itself end.
func (w *world) walkersDropLinks(t *testing.T, s *tools.Set) {
	t.Helper()
	for _, root := range []string{".", "sub", "lnk-mid", "lnk-root"} {
		for _, tool := range walkers {
			before := w.snap(t)
			_, out, err := w.attack(t, s, probe{tool: tool, args: pathArgs(tool, root), echo: root}, before)
			if err != nil {
				t.Errorf("%s %s %q: %v", w.kind, tool, root, err)
			}
			for _, bad := range []string{"x-out-", "lnk-denied", "private"} {
				if strings.Contains(out, bad) {
					t.Errorf("%s %s %q lists %s entries:\n%s", w.kind, tool, root, bad, clip(out))
				}
			}
		}
	}
}
