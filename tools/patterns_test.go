package tools

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

// Spellings of a pattern that match nothing as written are read as the
// operator meant them, and each rewrite is logged at debug level.
func TestPatternSpellingsNormalized(t *testing.T) {
	fx := localFixture(t)
	fx.put(t, "private/x.txt", "secret\n")
	fx.put(t, "notes.md", "notes\n")
	host, _ := fx.b.(backend.LocalPather).LocalPath(".")
	for _, deny := range []string{"private", "./private", "private/", "/private", host + "/private"} {
		t.Run(deny, func(t *testing.T) {
			var log bytes.Buffer
			s := newSet(t, fx.b, Options{Denied: []string{deny}, Protected: []string{"/notes.md"},
				Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			wantEqual(t, retry(t, s, "read_file", "path", "private/x.txt"), "Path 'private/x.txt' is denied by pattern 'private'.")
			wantEqual(t, retry(t, s, "write_file", "path", "notes.md", "content", "x"), "Path 'notes.md' is protected (matches 'notes.md').")
			if got := log.String(); (deny != "private") != strings.Contains(got, "pattern="+deny) || !strings.Contains(got, "level=DEBUG msg=\"pattern normalized\"") {
				t.Errorf("log:\n%s\nwant a debug line for each rewritten pattern", got)
			}
		})
	}
	s := newSet(t, fx.b, Options{Allowed: []string{"/private/"}})
	wantEqual(t, ok(t, s, "find_files", "pattern", "**"), "private/x.txt")
}

// In a rooted namespace a leading "/" is the namespace root, and a pattern
// whose first component names no mount is refused with the spellings that
// can match.
func TestPatternsInRootedNamespace(t *testing.T) {
	m, _ := mountedFixture(t)
	s := newSet(t, m, Options{Denied: []string{"/tenant/private"}, Allowed: []string{"/tenant/**", "/docs/**"}, Protected: []string{"/tenant/notes.md"}})
	wantEqual(t, retry(t, s, "write_file", "path", "/tenant/private/x", "content", ""),
		"Path '/tenant/private/x' is denied by pattern 'tenant/private'.")
	wantEqual(t, retry(t, s, "write_file", "path", "/tenant/notes.md", "content", ""),
		"Path '/tenant/notes.md' is protected (matches 'tenant/notes.md').")
	ok(t, s, "read_file", "path", "/docs/guide.md")
	tests := []struct {
		opts Options
		want string
	}{
		{Options{Denied: []string{"private"}}, "tools: deny pattern 'private': it can match nothing: every path of this namespace starts with a mount name (docs, tenant, work); write 'docs/private' for one mount, or '*/private' for every mount"},
		{Options{Protected: []string{"notes.md"}}, "tools: protect pattern 'notes.md': it can match nothing"},
		{Options{Allowed: []string{"./src/"}}, "tools: allow pattern './src/': it can match nothing: every path of this namespace starts with a mount name (docs, tenant, work); write 'docs/src/**'"},
		{Options{Denied: []string{"/tenant/../x"}}, "tools: deny pattern '/tenant/../x': a '..' component can match nothing"},
		{Options{Denied: []string{"/"}}, "tools: deny pattern '/': it names the namespace root"},
	}
	for _, tt := range tests {
		_, err := New(m, tt.opts)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v; want an error saying %q", tt.opts, err, tt.want)
		}
	}
}
