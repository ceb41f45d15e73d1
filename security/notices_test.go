package security

import (
	"strings"
	"testing"

	"github.com/fencefs/fencefs/tools"
)

// noticeLayout adds to the base layout (whose root holds one visible
// hidden file, .env) denied hidden entries, a file and a directory, and
// two names with control characters, of which one is denied.
func noticeLayout(s secrets) layout {
	l := baseLayout(s)
	l["ws/.vault/key.txt"] = file("hello vault\n")
	l["ws/.token"] = file("hello token\n")
	l["ws/keep\nme.txt"] = file("hello\n")
	l["ws/deny\nme.txt"] = file("hello\n")
	return l
}

// TestNoticesCountOnlyVisible checks that a denied entry is invisible, not
// hidden: the walkers' notices of hidden entries and of names with control
// characters count only entries the policy would have shown, so no count
// tells that a denied name exists.
func TestNoticesCountOnlyVisible(t *testing.T) {
	forWorlds(t, allKinds, noticeLayout, func(t *testing.T, w *world) {
		s := w.set(t, tools.Options{Denied: []string{"**/.vault", "**/.token", "**/deny*"}})
		const (
			hidden  = "[1 hidden entry omitted; name a hidden path explicitly to include it]"
			control = "[1 entry with control characters in their names omitted]"
		)
		for _, tool := range walkers {
			args := map[string]any{"path": "."}
			switch tool {
			case searchFiles, grepTool:
				args["pattern"] = "hello"
			case findFiles:
				args["pattern"] = "**"
			}
			out, err := call(t, s, tool, args)
			if err != nil {
				t.Errorf("%s %s: %v", w.kind, tool, err)
				continue
			}
			lines := strings.Split(out, "\n")
			var notices []string
			for _, l := range lines {
				if strings.HasSuffix(l, "omitted]") || strings.HasSuffix(l, "include it]") {
					notices = append(notices, l)
				}
			}
			if got, want := strings.Join(notices, "\n"), hidden+"\n"+control; got != want {
				t.Errorf("%s %s: notices\n%s\nwant\n%s\nin:\n%s", w.kind, tool, got, want, clip(out))
			}
		}
	})
}
