package security

import (
	"strings"
	"testing"

	"github.com/fencefs/fencefs/tools"
)

// TestPatternSpellings checks that no spelling of a pattern leaves an
// operator believing a path is fenced when it is not: each spelling an
// operator may write for the private directory (and for a protected
// file, and an allowed tree) either fences what it names or is refused
// when the tool set is built, with a message showing a spelling that
// works. A pattern that can match nothing is never accepted.
func TestPatternSpellings(t *testing.T) {
	forWorlds(t, []string{kindLocal, kindMounted}, baseLayout, func(t *testing.T, w *world) {
		// In a mounted world the root is the mount "ws"; paths are
		// printed rooted (/ws/private/p.txt) and patterns match "ws/...".
		pre := ""
		if w.rooted {
			pre = "ws/"
		}
		denies := []string{pre + "private", "/" + pre + "private", "./" + pre + "private", pre + "private/", "//" + pre + "private//", "private", "/private"}
		if w.hostAbs {
			denies = append(denies, w.hostRoot+"/private")
		}
		for _, deny := range denies {
			s, err := tools.New(w.b, tools.Options{Cwd: w.cwd, Denied: []string{deny}, Tools: tools.AllTools()})
			if err != nil {
				if !strings.Contains(err.Error(), "write '"+pre+"private'") {
					t.Errorf("--deny %q refused with %q; want the message to show %q", deny, err, pre+"private")
				}
				continue
			}
			for _, tool := range []string{readFile, fileInfo, listDirectory, searchFiles} {
				if out, err := call(t, s, tool, pathArgs(tool, "private/p.txt")); err == nil || !strings.Contains(err.Error(), "is denied by pattern") {
					t.Errorf("--deny %q: %s private/p.txt = %q, %v; want it denied", deny, tool, clip(out), err)
				}
			}
		}
		for _, protect := range []string{"/" + pre + "a.txt", "./" + pre + "a.txt", "a.txt"} {
			s, err := tools.New(w.b, tools.Options{Cwd: w.cwd, Protected: []string{protect}})
			if err != nil {
				if !strings.Contains(err.Error(), "write '"+pre+"a.txt'") {
					t.Errorf("--protect %q refused with %q; want the message to show %q", protect, err, pre+"a.txt")
				}
				continue
			}
			if _, err := call(t, s, writeFile, pathArgs(writeFile, "a.txt")); err == nil || !strings.Contains(err.Error(), "is protected") {
				t.Errorf("--protect %q: write_file a.txt = %v; want it protected", protect, err)
			}
		}
		for _, allow := range []string{"/" + pre + "**", "/" + pre + "sub/", "./" + pre + "sub/**"} {
			s, err := tools.New(w.b, tools.Options{Cwd: w.cwd, Allowed: []string{allow}})
			if err != nil {
				t.Errorf("--allow %q refused: %v", allow, err)
				continue
			}
			if _, err := call(t, s, readFile, pathArgs(readFile, "sub/b.txt")); err != nil {
				t.Errorf("--allow %q: read_file sub/b.txt = %v; want it allowed", allow, err)
			}
		}
	})
}
