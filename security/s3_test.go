package security

import (
	"strings"
	"testing"

	"github.com/fencefs/fencefs/tools"
)

// hostileKeys are keys another tool wrote below the backend's prefix
// that are not canonical storage paths: "." and ".." segments, empty
// segments, a leading "/" below the prefix, a backslash, "~", an
// over-long segment, the prefix itself as an object, and objects that are
// also prefixes ("ws/dir" next to "ws/dir/inner.txt"). A POSIX-backed
// server such as versitygw cannot hold them (it refuses or normalizes
// them), so they are served by testserver.S3.
var hostileKeys = []string{
	"ws/./dot.txt", "ws/../up.txt", "ws//empty.txt", "ws//lead/x.txt", "ws/sub//x.txt", "ws/sub/./y.txt",
	"ws/sub/../z.txt", "ws/" + strings.Repeat("l", 300) + "/x.txt", "ws/.", "ws/..", "ws/sub/.", "ws/sub/..",
	"ws", "ws/dir", "ws/sub/deep",
}

// neighbourKeys are keys a real server holds as written: names that
// extend the prefix without a slash ("ws0/...", "wsx.txt": the tenant
// "t1" next to "t10"), and names no storage path can have.
var neighbourKeys = []string{"ws0/secret.txt", "ws0/a.txt", "wsx.txt", "ws./secret.txt", `ws/\..\...txt`, "ws/~home.txt"}

// s3Layout adds keys to the base layout, each holding the canary: none
// may be read under any name.
func s3Layout(keys []string) func(s secrets) layout {
	return func(s secrets) layout {
		l := baseLayout(s)
		for _, key := range keys {
			l[key] = file(s.tok + "\n")
		}
		l["ws/dir/inner.txt"] = file("inside\n")
		return l
	}
}

// s3Cases aim at the names the odd keys would have if they were cleaned
// or cut at the prefix.
var s3Cases = []pathCase{
	{"dot.txt", contained, ""},
	{"up.txt", contained, ""},
	{"empty.txt", contained, ""},
	{"lead/x.txt", contained, ""},
	{"/lead/x.txt", contained, ""},
	{"//lead/x.txt", contained, ""},
	{"x.txt", contained, ""},
	{"sub/x.txt", contained, ""},
	{"y.txt", contained, ""},
	{"sub/y.txt", contained, ""},
	{"z.txt", contained, ""},
	{"sub/z.txt", contained, ""},
	{"b.txt", contained, ""},
	{`\..\..\b.txt`, invalid, ""},
	{"~home.txt", invalid, ""},
	{"0/secret.txt", contained, ""},
	{"0/a.txt", contained, ""},
	{"../ws0/secret.txt", escapes, ""},
	{"../wsx.txt", escapes, ""},
	{"../ws./secret.txt", escapes, ""},
	{".", contained, ""},
	{"sub", contained, ""},
	{"sub/.", contained, ""},
	{"sub/deep", contained, ""},
	{"/", contained, ""},
	{"dir", contained, ""},
	{"dir/inner.txt", contained, ""},
}

// TestS3HostileKeys attacks an S3 backend whose prefix holds keys written
// by another tool that are not canonical paths, whose neighbours extend
// its prefix without a slash, and where an object is also a prefix:
// every tool on every name keeps the canary hidden and changes nothing
// outside the prefix; the object that is also a prefix is a directory
// that no write replaces.
func TestS3HostileKeys(t *testing.T) {
	t.Run("server", func(t *testing.T) {
		forWorlds(t, []string{kindS3}, s3Layout(neighbourKeys), func(t *testing.T, w *world) {
			w.attackPaths(t, w.set(t, tools.Options{}), s3Cases)
		})
	})
	t.Run("keys", func(t *testing.T) {
		s := newSecrets()
		w := newMemS3World(t, s, s3Layout(append(hostileKeys, neighbourKeys...))(s))
		testObjectAndPrefix(t, w)
	})
}

// testObjectAndPrefix runs the S3 cases in w, then checks that the
// object "dir", which is also a prefix, is a directory that no write
// replaces.
func testObjectAndPrefix(t *testing.T, w *world) {
	t.Helper()
	s := w.set(t, tools.Options{})
	w.attackPaths(t, s, s3Cases)
	state := w.snap(t)
	for _, c := range []struct {
		tool, want string
		refuse     bool
	}{
		{readFile, "'dir' is a directory, not a file.", true},
		{writeFile, "", true},
		{editFile, "", true},
		{listDirectory, "", false},
		{fileInfo, "", false},
	} {
		var out string
		var err error
		state, out, err = w.attack(t, s, probe{tool: c.tool, args: pathArgs(c.tool, "dir"), echo: "dir", refuse: c.refuse, want: c.want}, state)
		if !c.refuse && (err != nil || !strings.Contains(out, "inner.txt") && !strings.Contains(out, "type: directory")) {
			t.Errorf("%s %s dir: %q, %v; want the directory", w.kind, c.tool, out, err)
		}
	}
}
