package security

import (
	"strings"
	"testing"
)

// TestNamespacePatternRefusalNamesOption starts the command with patterns
// that can match nothing only because of the namespace (a first component
// naming no mount): start-up fails naming the list the pattern came from
// and the spelling to use, from a flag as from the library's Options.
func TestNamespacePatternRefusalNamesOption(t *testing.T) {
	t.Parallel()
	mount := "ws=local:" + cmdRoot(t)
	for _, c := range []struct {
		flag, pattern, want string
	}{
		{"--deny", "private", "fencefs: tools: deny pattern 'private': it can match nothing: every path of this namespace starts with a mount name (ws); write 'ws/private' for one mount, or '*/private' for every mount"},
		{"--protect", "notes.md", "fencefs: tools: protect pattern 'notes.md': it can match nothing"},
		{"--allow", "src/**", "fencefs: tools: allow pattern 'src/**': it can match nothing"},
	} {
		for _, cmd := range []string{"serve", "call"} {
			args := []string{cmd, "--mount", mount, c.flag, c.pattern}
			if cmd == "call" {
				args = append(args, "list_directory", `{"path":"/ws"}`)
			}
			code, stderr := runCmd(t, nil, args...)
			if code != 1 || !strings.Contains(stderr, "\n"+c.want) && !strings.HasPrefix(stderr, c.want) {
				t.Errorf("fencefs %q: exit %d, stderr %q; want exit 1 and %q", args, code, stderr, c.want)
			}
		}
	}
}
