package security

import (
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/mounted"
)

// TestLibraryMountNames checks that a namespace built with the library
// (mounted.New, not only the command's flags) refuses mount names the
// model could not type back or that could forge a listing line: spaces,
// line breaks, control characters, non-ASCII, path syntax, over-long
// names.
func TestLibraryMountNames(t *testing.T) {
	b := openLocal(t, t.TempDir())
	for _, name := range []string{
		"with space", "line\nbreak", "nul\x00", "tab\t", "ü", "\u202eevil", "a:b", `a\b`, "a*", "~home",
		strings.Repeat("n", 300), strings.Repeat("n", 65), "ws\n/etc/passwd",
	} {
		if _, err := mounted.New(map[string]backend.Backend{"ws": b, name: b}); err == nil {
			t.Errorf("mounted.New accepted the mount name %q", name)
		} else if !strings.Contains(err.Error(), "the name must be 1 to 64 ASCII letters, digits, '-', '_' and '.'") {
			t.Errorf("mounted.New refused %q without saying what a name must be: %v", name, err)
		}
	}
	if _, err := mounted.New(map[string]backend.Backend{"ws": b, "docs-2.v1_x": b, strings.Repeat("n", 64): b}); err != nil {
		t.Errorf("mounted.New refused good names: %v", err)
	}
}
