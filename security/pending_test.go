package security

import (
	"strings"
)

// pendingFix is a defect of another package that this suite found and
// reported: a call that ends in a fatal error where the model should get
// a retryable refusal. Until the fix lands, matching calls may end in
// that fatal error; every other guarantee (no canary shown, nothing
// changed) is still checked on them. Delete the entry with the fix, and
// the suite demands the refusal again.
type pendingFix struct {
	// kind is the world kind, "" for any.
	kind, tool string
	// fatal is part of the fatal error's text.
	fatal string
}

// pendingFixes lists the reported defects (see SECURITY.md, "Open
// defects").
var pendingFixes = []pendingFix{
	// None is open: every call that may fail gets a retryable error.
}

// pendingFatal reports whether err is the fatal error of a reported,
// unfixed defect of tool in a world of kind.
func pendingFatal(kind, tool string, err error) bool {
	for _, p := range pendingFixes {
		if (p.kind == "" || p.kind == kind) && p.tool == tool && strings.Contains(err.Error(), p.fatal) {
			return true
		}
	}
	return false
}
