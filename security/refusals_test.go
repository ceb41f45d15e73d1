package security

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/tools"
)

// refusalPattern is the denied pattern of the refusal tests; it matches
// the private directory on every world, rooted or not.
const refusalPattern = "**/private"

// refusalLayout adds to the base layout a denied directory holding one of
// everything a name can be: a file, a directory, links into the root, to
// a secret name inside the directory, out of the root, looping and
// dangling; and links outside the directory that lead into it.
func refusalLayout(s secrets) layout {
	l := baseLayout(s)
	for name, n := range map[string]node{
		"ws/private/d/f.txt":         file("private inside\n"),
		"ws/private/zz-" + s.nameTok: file("private inside\n"),
		"ws/private/l-in":            link("../a.txt"),
		"ws/private/l-indir":         link("../sub"),
		"ws/private/l-secret":        link("zz-" + s.nameTok),
		"ws/private/l-out":           link("../../outside/secret.txt"),
		"ws/private/l-outabs":        link("@/outside/secret.txt"),
		"ws/private/l-outdir":        link("../../outside"),
		"ws/private/l-loop":          link("l-loop"),
		"ws/private/l-dangle":        link("nowhere"),
		"ws/private/l-dangleout":     link("../../outside/created.txt"),
		"ws/to-private":              link("private"),
		"ws/to-secret":               link("private/zz-" + s.nameTok),
	} {
		l[name] = n
	}
	return l
}

// refusalNames are the names inside the denied directory that must all be
// refused alike; "missing" names nothing.
var refusalNames = []string{
	"p.txt", "d", "d/f.txt", "d/missing", "missing", "missing/deeper",
	"l-in", "l-indir", "l-indir/b.txt", "l-secret", "l-out", "l-outabs", "l-outdir", "l-outdir/a.txt",
	"l-loop", "l-loop/x", "l-dangle", "l-dangleout",
}

// TestDeniedRefusalsAreUniform checks that a path in a denied directory,
// named directly or through a link that leads into it, is refused by every
// tool with one message that names the path as the caller wrote it (in the
// spelling it can pass back) and nothing else: not what the name is,
// whether it exists, nor where a link leads.
func TestDeniedRefusalsAreUniform(t *testing.T) {
	forWorlds(t, linkKinds, refusalLayout, func(t *testing.T, w *world) {
		s := w.set(t, tools.Options{Denied: []string{refusalPattern}})
		before := w.snap(t)
		var paths []string
		for _, n := range refusalNames {
			paths = append(paths, "private/"+n, "to-private/"+n)
		}
		paths = append(paths, "private", "to-private", "to-secret")
		for _, tool := range tools.AllTools() {
			for _, p := range paths {
				want := fmt.Sprintf("Path '%s' is denied by pattern '%s'.", w.shownPath(p), refusalPattern)
				for _, args := range refusalArgs(tool, p) {
					out, err := wantRefusal(t, s, tool, args, want)
					w.checkLeaks(t, tool+" "+p, p, out+"\n"+fmt.Sprint(err))
				}
			}
		}
		w.checkChanges(t, "refused calls", before, w.snap(t), true)
	})
}

// shownPath is how a refusal names the tool path p, relative to the
// world's working directory: rooted in a rooted world, the storage path
// otherwise.
func (w *world) shownPath(p string) string {
	if w.rooted {
		return strings.TrimSuffix(w.cwd, "/") + "/" + p
	}
	return p
}

// refusalArgs returns the arguments that aim tool at the path p:
// pathArgs', for apply_patch a patch that deletes p, and for move_file
// and copy_file p as the source and as the destination.
func refusalArgs(tool, p string) []map[string]any {
	switch tool {
	case "apply_patch":
		return []map[string]any{{"patch": "*** Begin Patch\n*** Delete File: " + p + "\n*** End Patch\n"}}
	case "move_file", "copy_file":
		return []map[string]any{{"source": p, "destination": "elsewhere.txt"}, {"source": "a.txt", "destination": p}}
	}
	return []map[string]any{pathArgs(tool, p)}
}

// wantRefusal calls tool with args and fails unless the call is refused
// with exactly the retryable message want; it returns what the call gave.
func wantRefusal(t *testing.T, s *tools.Set, tool string, args map[string]any, want string) (string, error) {
	t.Helper()
	out, err := call(t, s, tool, args)
	switch {
	case err == nil:
		t.Errorf("%s %v: succeeded with %q; want %q", tool, args, clip(out), want)
	case !tools.IsRetry(err):
		t.Errorf("%s %v: fatal error %v; want %q", tool, args, err, want)
	case err.Error() != want:
		t.Errorf("%s %v:\n got %q\nwant %q", tool, args, err.Error(), want)
	}
	return out, err
}
