//go:build pendingfix

package security

import "testing"

// pendingHugeCases are the calls on huge files that exceed their bounds
// today: grep on a 50 MB matching line decodes every submatch ripgrep
// reports (gigabytes in 40 s), so it never answers by a deadline of a few
// seconds, where search_files answers in 0.1 s.
var pendingHugeCases = []hugeCase{
	{"long.txt", grepTool, 256 << 20, true},
}

// TestHugeFilesPending runs pendingHugeCases.
func TestHugeFilesPending(t *testing.T) {
	runHugeCases(t, pendingHugeCases)
}
