package security

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/tools"
)

// chainLayout adds to the refusal layout links outside the denied
// directory whose chains pass through it: two and three hops, leading
// back in, out of the root (relative and absolute), to a secret name, to
// a directory, dangling, looping inside it or through it, and stepping
// through it with "..". Every such link is named "ch-...".
func chainLayout(s secrets) layout {
	l := refusalLayout(s)
	for name, target := range map[string]string{
		"sub/ch-out":     "../private/l-out",
		"sub/ch-in":      "../private/l-in",
		"sub/ch-indir":   "../private/l-indir",
		"sub/ch-secret":  "../private/l-secret",
		"sub/ch-dangle":  "../private/l-dangle",
		"sub/ch-loop":    "../private/l-loop",
		"sub/ch-dotdot":  "../private/d/../../a.txt",
		"sub/ch-abs":     "@/ws/private/l-in",
		"ch-3a":          "sub/ch-3b",
		"sub/ch-3b":      "../private/l-outabs",
		"ch-3in":         "ch-3in2",
		"ch-3in2":        "private/l-in",
		"ch-back":        "private/l-back",
		"private/l-back": "../ch-back",
		"ch-dir":         "sub/ch-indir",
		"ch-todir":       "to-private",
	} {
		l["ws/"+name] = link(target)
	}
	return l
}

// chainPaths are the tool paths whose resolution passes through the
// denied directory although none is written inside it.
var chainPaths = []string{
	"sub/ch-out", "sub/ch-in", "sub/ch-indir", "sub/ch-indir/b.txt", "sub/ch-secret", "sub/ch-dangle",
	"sub/ch-loop", "sub/ch-dotdot", "sub/ch-abs", "ch-3a", "sub/ch-3b", "ch-3in", "ch-3in2", "ch-back",
	"ch-dir", "ch-dir/b.txt", "ch-todir", "ch-todir/l-in", "ch-todir/p.txt",
}

// TestDeniedChainsAreRefused checks that a link outside a denied
// directory whose chain of links passes through it is refused by every
// tool with the uniform denied message, whatever the rest of the chain
// does (lead back in, out, loop, dangle): the policy judges every hop, so
// the links inside the denied directory tell nothing through a link
// planted beside it. Walkers show no such link either.
func TestDeniedChainsAreRefused(t *testing.T) {
	forWorlds(t, linkKinds, chainLayout, func(t *testing.T, w *world) {
		s := w.set(t, tools.Options{Denied: []string{refusalPattern}})
		before := w.snap(t)
		for _, tool := range tools.AllTools() {
			for _, p := range chainPaths {
				want := fmt.Sprintf("Path '%s' is denied by pattern '%s'.", w.shownPath(p), refusalPattern)
				for _, args := range refusalArgs(tool, p) {
					out, err := wantRefusal(t, s, tool, args, want)
					w.checkLeaks(t, tool+" "+p, p, out+"\n"+fmt.Sprint(err))
				}
			}
		}
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"find_files", map[string]any{"pattern": "**", "path": "."}},
			{"list_files", map[string]any{"path": "."}},
			{"search_files", map[string]any{"pattern": "inside", "path": "."}},
			{"grep", map[string]any{"pattern": "inside", "path": "."}},
		} {
			out, err := call(t, s, c.tool, c.args)
			if err != nil {
				t.Errorf("%s %v: %v", c.tool, c.args, err)
				continue
			}
			if !strings.Contains(out, "a.txt") {
				t.Errorf("%s %v: a.txt not listed, so the check below proves nothing:\n%s", c.tool, c.args, clip(out))
			}
			if strings.Contains(out, "ch-") {
				t.Errorf("%s %v: shows a link whose chain passes through the denied directory:\n%s", c.tool, c.args, clip(out))
			}
			w.checkLeaks(t, c.tool, "", out)
		}
		w.checkChanges(t, "refused calls", before, w.snap(t), true)
	})
}
