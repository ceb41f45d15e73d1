package security

import (
	"strings"
	"testing"

	"github.com/fencefs/fencefs/tools"
)

// dotDotCases put ".." in every position: alone, first, in the middle,
// after a file, repeated far above the root, with "." and "//" around it,
// and into the sibling directories whose names extend the root's.
var dotDotCases = []pathCase{
	{"..", escapes, ""},
	{"../", escapes, ""},
	{"../.", escapes, ""},
	{"./..", escapes, ""},
	{"../secret.txt", escapes, ""},
	{"../a.txt", escapes, ""},
	{"../ws-evil", escapes, ""},
	{"../ws-evil/", escapes, ""},
	{"../ws-evil/secret.txt", escapes, ""},
	{"../ws2/secret.txt", escapes, ""},
	{"../ws2", escapes, ""},
	{"../outside/a.txt", escapes, ""},
	{"../ws/../ws-evil/secret.txt", escapes, ""},
	{"./../secret.txt", escapes, ""},
	{"sub/../../secret.txt", escapes, ""},
	{"sub/deep/../../../secret.txt", escapes, ""},
	{"sub/..//../secret.txt", escapes, ""},
	{"sub/./../../ws-evil/secret.txt", escapes, ""},
	{"a.txt/../../secret.txt", escapes, ""},
	{"nonexistent/../../secret.txt", escapes, ""},
	{"../../../../../../../../../../etc/passwd", escapes, ""},
	{strings.Repeat("../", 300) + "etc/passwd", escapes, ""},
	{"/../secret.txt", escapes, ""},
	{"/../../ws-evil/secret.txt", escapes, ""},
	{"../secret.txt ", escapes, ""},
	{"../ro/r.txt", escapes, ""},
	{"../newdir/new.txt", escapes, ""},
}

// absoluteCases are absolute paths: host paths of the outside, of the
// root itself, and of system files. "@" is the parent of the root.
var absoluteCases = []pathCase{
	{"@/ws-evil/secret.txt", hostOutside, ""},
	{"@/ws-evil", hostOutside, ""},
	{"@/ws2/secret.txt", hostOutside, ""},
	{"@/secret.txt", hostOutside, ""},
	{"@/a.txt", hostOutside, ""},
	{"@", hostOutside, ""},
	{"@/", hostOutside, ""},
	{"@/ws/../ws-evil/secret.txt", hostOutside, ""},
	{"@/ws/../secret.txt", hostOutside, ""},
	{"@/ws-evil/../ws-evil/secret.txt", hostOutside, ""},
	{"@/newdir/new.txt", hostOutside, ""},
	{"/etc/passwd", hostOutside, ""},
	{"/etc", hostOutside, ""},
	{"/proc/self/environ", hostOutside, ""},
	{"//server/share/secret.txt", hostOutside, ""},
	{"/", hostOutside, ""},
	{"//", hostOutside, ""},
	{"@/ws/a.txt", contained, ""},
	{"@/ws", contained, ""},
	{"@/ws/sub/../a.txt", contained, ""},
}

// invalidCases are spellings every tool refuses: NUL and other control
// characters, backslashes (also in UNC and device forms), drive letters,
// "~" and over-long names and paths.
var invalidCases = []pathCase{
	{"", invalid, ""},
	{"a.txt\x00", invalid, ""},
	{"\x00", invalid, ""},
	{"..\x00/secret.txt", invalid, ""},
	{"sub\x00/../../secret.txt", invalid, ""},
	{"a.txt\x00../../secret.txt", invalid, ""},
	{"a\nb", invalid, ""},
	{"\n../secret.txt", invalid, ""},
	{"sub/\r", invalid, ""},
	{"\t../secret.txt", invalid, ""},
	{"a\x1b[2Jb", invalid, ""},
	{"\x7f", invalid, ""},
	{`..\secret.txt`, invalid, ""},
	{`sub\..\..\secret.txt`, invalid, ""},
	{`\..\secret.txt`, invalid, ""},
	{`..\..\ws-evil\secret.txt`, invalid, ""},
	{`\\server\share\secret.txt`, invalid, ""},
	{`\\?\C:\secret.txt`, invalid, ""},
	{`\\.\pipe\x`, invalid, ""},
	{"C:", invalid, ""},
	{"C:/secret.txt", invalid, ""},
	{"c:secret.txt", invalid, ""},
	{`C:\Windows\win.ini`, invalid, ""},
	{"Z:../secret.txt", invalid, ""},
	{"~", invalid, ""},
	{"~/secret.txt", invalid, ""},
	{"~root/.ssh/id_rsa", invalid, ""},
	{"sub/~/x", invalid, ""},
	{"~/../secret.txt", invalid, ""},
	{strings.Repeat("a", 256), invalid, ""},
	{"sub/" + strings.Repeat("b", 300) + "/x", invalid, ""},
	{strings.Repeat("a/", 2100), invalid, ""},
	{strings.Repeat("x", 100_000), invalid, ""},
	{strings.Repeat("../", 1400), invalid, ""},
}

// oddNameCases name odd but legal files inside the root: whitespace and
// quotes around an escape, percent-encodings of "..", URL forms, unicode
// lookalikes of "." and "/", invisible characters, and in-root spellings
// that lead back into the root.
var oddNameCases = []pathCase{
	{" a.txt", contained, ""},
	{"a.txt ", contained, ""},
	{" ../secret.txt", contained, ""},
	{".. /secret.txt", contained, ""},
	{" ..", contained, ""},
	{"'../secret.txt'", contained, ""},
	{`"../secret.txt"`, contained, ""},
	{"`../secret.txt`", contained, ""},
	{"%2e%2e/secret.txt", contained, ""},
	{"%2e%2e%2fsecret.txt", contained, ""},
	{"..%2fsecret.txt", contained, ""},
	{"..%2Fws-evil%2Fsecret.txt", contained, ""},
	{"%252e%252e%252fsecret.txt", contained, ""},
	{"%2E%2E/%2E%2E/secret.txt", contained, ""},
	{"..%00/secret.txt", contained, ""},
	{"..%c0%afsecret.txt", contained, ""},
	{"file:///etc/passwd", contained, ""},
	{"file:..%2fsecret.txt", contained, ""},
	{"\u2024\u2024/secret.txt", contained, ""},
	{"\u2025/secret.txt", contained, ""},
	{"\uff0e\uff0e/secret.txt", contained, ""},
	{"..\uff0fsecret.txt", contained, ""},
	{"\uff0e\uff0e\uff0fws-evil\uff0fsecret.txt", contained, ""},
	{"..\u2215secret.txt", contained, ""},
	{"..\u2044secret.txt", contained, ""},
	{".\u200b./secret.txt", contained, ""},
	{"\ufeff../secret.txt", contained, ""},
	{"\u202e../secret.txt", contained, ""},
	{"..\u00a0/secret.txt", contained, ""},
	{".\u0338./secret.txt", contained, ""},
	{"...", contained, ""},
	{".../secret.txt", contained, ""},
	{"a~", contained, ""},
	{strings.Repeat("c", 255), contained, ""},
	{".", contained, ""},
	{"./", contained, ""},
	{"a.txt", contained, ""},
	{"sub//b.txt", contained, ""},
	{"./sub/./deep/../b.txt", contained, ""},
	{"sub/..", contained, ""},
	{"sub/deep/../../a.txt", contained, ""},
}

// TestPathSpellings aims every path-taking tool at every hostile spelling
// on every backend: escapes are refused with a retryable error naming the
// escape, invalid spellings are refused, odd names stay inside the root,
// no output shows a byte of the outside, and nothing outside changes.
func TestPathSpellings(t *testing.T) {
	families := []struct {
		name  string
		cases []pathCase
	}{
		{"dotdot", dotDotCases},
		{"absolute", absoluteCases},
		{"invalid", invalidCases},
		{"oddnames", oddNameCases},
	}
	forWorlds(t, allKinds, baseLayout, func(t *testing.T, w *world) {
		s := w.set(t, tools.Options{})
		if w.hostAbs {
			// On local disk an absolute host path inside the root names
			// the file it leads to.
			p := w.expand("@/ws/sub/../a.txt")
			if out, err := call(t, s, readFile, map[string]any{"path": p}); err != nil || !strings.Contains(out, "hello inside") {
				t.Errorf("read_file %s: %q, %v; want a.txt", p, out, err)
			}
		}
		for _, f := range families {
			t.Run(f.name, func(t *testing.T) { w.attackPaths(t, s, f.cases) })
		}
	})
}
