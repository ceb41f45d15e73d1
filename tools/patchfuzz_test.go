package tools

import (
	"context"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/tools/internal/patch"
)

// FuzzApplyHunks applies fuzzed V4A hunks to fuzzed files and checks the
// rules of line endings: a file whose every line break is CRLF never gains
// a bare LF from hunks without line breaks of their own, and a hunk of
// only context lines (here the file's last lines) leaves the file byte for
// byte, its final line break or its lack included.
func FuzzApplyHunks(f *testing.F) {
	f.Add("a\r\nb", "@@\n a\n-b\n+B\n")
	f.Add("a\r\nb\r\nc", "@@\n a\n-b\n+B\n c\n")
	f.Add("a\nb", "@@\n+c\n")
	f.Add("\ufeffx\r\ny\r\n", "@@\n-x\n+X\n")
	f.Add("a\n\nb\n\n", "@@\n+c\n\n")
	f.Add("", "@@\n+new\n")
	f.Fuzz(func(t *testing.T, text, body string) {
		ctx := context.Background()
		if p, err := patch.Parse("*** Begin Patch\n*** Update File: f\n" + body + "\n*** End Patch\n"); err == nil {
			out, _, err := applyHunks(ctx, text, p.Files[0].Hunks, "f", true)
			if err == nil && allCRLF(text) && !strings.Contains(body, "\r") && strings.Count(text, "\n") > 0 {
				if i := bareLF(out); i >= 0 {
					t.Fatalf("a CRLF file gained a bare LF at %d: %q -> %q", i, text, out)
				}
			}
		}
		lines := splitFile(text)
		if n := len(lines.key); n > 0 {
			from := max(0, n-3)
			var b strings.Builder
			b.WriteString("*** Begin Patch\n*** Update File: f\n@@\n")
			for _, k := range lines.key[from:] {
				if strings.ContainsAny(k, "\r\n") {
					return
				}
				b.WriteString(" " + k + "\n")
			}
			b.WriteString("*** End Patch\n")
			p, err := patch.Parse(b.String())
			if err != nil {
				return
			}
			out, _, err := applyHunks(ctx, text, p.Files[0].Hunks, "f", false)
			if err == nil && out != text {
				t.Fatalf("a context-only hunk changed %q into %q", text, out)
			}
		}
	})
}

// allCRLF reports whether every "\n" of s follows a "\r".
func allCRLF(s string) bool { return bareLF(s) < 0 }

// bareLF returns the index of the first "\n" not after a "\r", or -1.
func bareLF(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' && (i == 0 || s[i-1] != '\r') {
			return i
		}
	}
	return -1
}
