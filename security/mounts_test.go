package security

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/mounted"
	"github.com/fencefs/fencefs/tools"
)

// mountLayout holds three mounts whose names prefix each other ("w",
// "ws", "ws2", the last read-only), links from one mount's directory into
// another's on the host, and an outside directory that is not mounted.
func mountLayout(s secrets) layout {
	canary := file(s.tok + "\n")
	return layout{
		"ws/a.txt":                file("hello inside\n"),
		"ws/sub/b.txt":            file("inside b\n"),
		"ws/x-out-ws2":            link("../ws2/r.txt"),
		"ws/x-out-ws2abs":         link("@/ws2/r.txt"),
		"ws/x-out-ws2dir":         link("../ws2"),
		"ws2/r.txt":               file("read-only inside\n"),
		"ws2/sub/s.txt":           file("read-only s\n"),
		"ws2/x-out-back":          link("../ws/a.txt"),
		"ws2/x-out-evil":          link("../ws-evil/secret.txt"),
		"w/w.txt":                 file("w inside\n"),
		"ws-evil/secret.txt":      canary,
		"ws-evil/zz-" + s.nameTok: canary,
		"ws2a/r.txt":              canary,
		"secret.txt":              canary,
	}
}

// mountCases cross mounts with "..", name mounts by prefixes of other
// mounts' names, write into the read-only mount by every route, and
// follow links from one mount's directory into another's.
var mountCases = []pathCase{
	{"../ws2/r.txt", escapes, ""},
	{"/ws2/r.txt", escapes, ""},
	{"/ws/../ws2/r.txt", escapes, ""},
	{"/ws2/../ws/a.txt", contained, ""},
	{"../ws2/new.txt", escapes, ""},
	{"/ws2/new.txt", escapes, ""},
	{"/ws/../ws2/new.txt", escapes, ""},
	{"/ws2/sub/../../ws2/n.txt", escapes, ""},
	{"/ws/sub/../../ws2/sub/s.txt", escapes, ""},
	{"../ws2/newdir/x", escapes, ""},
	{"../ws2", escapes, ""},
	{"../ws2/sub", escapes, ""},
	{"/w/w.txt", escapes, ""},
	{"../w/../ws2/r.txt", escapes, ""},
	{"/ws2/a.txt", escapes, ""},
	{"/ws2a/r.txt", escapes, ""},
	{"/wsa.txt", escapes, ""},
	{"/ws-evil/secret.txt", escapes, ""},
	{"../ws-evil/secret.txt", escapes, ""},
	{"../../ws2/r.txt", escapes, ""},
	{"/ws/../../ws2/r.txt", escapes, ""},
	{"/../ws2/r.txt", escapes, ""},
	{"../secret.txt", escapes, ""},
	{"/", escapes, ""},
	{"..", escapes, ""},
	{"x-out-ws2", invalid, outsideWant},
	{"x-out-ws2abs", invalid, outsideWant},
	{"x-out-ws2dir/r.txt", invalid, outsideWant},
	{"/ws2/x-out-back", invalid, outsideWant},
	{"/ws2/x-out-evil", invalid, outsideWant},
	{"../ws2/x-out-back", invalid, outsideWant},
}

// TestMounts attacks a mounted namespace from inside one mount: ".."
// reaches the other mounts only through the namespace (and a write to
// the read-only one is refused by every route, leaving its directory
// untouched), a mount is routed by its exact name, never by a prefix,
// unmounted directories beside the mounts stay unreachable, and links
// never lead from one mount's directory into another's.
func TestMounts(t *testing.T) {
	s := newSecrets()
	parent := t.TempDir()
	buildLocal(t, parent, mountLayout(s))
	m, err := mounted.New(map[string]backend.Backend{
		"ws":  openLocal(t, filepath.Join(parent, "ws")),
		"ws2": backend.ReadOnly(openLocal(t, filepath.Join(parent, "ws2"))),
		"w":   openLocal(t, filepath.Join(parent, "w")),
	})
	if err != nil {
		t.Fatal(err)
	}
	w := &world{kind: kindMounted, s: s, b: m, cwd: "/ws", rooted: true, mounts: []string{"w", "ws", "ws2"}, roMounts: []string{"ws2"},
		absParent: parent, leaks: []string{parent}, cheapSnap: true, hostRoot: filepath.Join(parent, "ws"), root: "ws/", otherRoots: []string{"w/"}}
	w.snap = func(t *testing.T) snapshot { return snapLocal(t, parent) }
	// The first component picks a mount by its exact name.
	set := w.set(t, tools.Options{})
	for p, want := range map[string]string{"/ws2/r.txt": "read-only inside", "/w/w.txt": "w inside", "/ws/a.txt": "hello inside"} {
		out, err := call(t, set, readFile, map[string]any{"path": p})
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("read_file %s: %q, %v; want %q", p, out, err, want)
		}
	}
	for _, p := range []string{"/ws2/a.txt", "/w/a.txt", "/wsa.txt", "/ws2a/r.txt"} {
		if _, err := call(t, set, readFile, map[string]any{"path": p}); !tools.IsRetry(err) {
			t.Errorf("read_file %s: %v; want not found", p, err)
		}
	}
	for _, p := range []string{"/ws2/new.txt", "../ws2/r.txt", "/ws/../ws2/sub/n.txt"} {
		_, err := call(t, set, writeFile, map[string]any{"path": p, "content": "x"})
		if err == nil || !strings.Contains(err.Error(), "is on read-only storage") {
			t.Errorf("write_file %s: %v; want the read-only refusal", p, err)
		}
	}
	w.attackPaths(t, set, mountCases)
}
