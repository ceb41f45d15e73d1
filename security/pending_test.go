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
	// create_directory on a path at the top of a mounted namespace that
	// names no mount ("/etc", "../x" from a mount root) gets
	// fs.ErrNotExist from mounted.MkdirAll, which the tool does not map
	// to a retryable error.
	{kind: kindMounted, tool: createDirectory, fatal: "file does not exist"},
	// A walk root that was a directory when the path was resolved and is
	// a symlink when the walk starts (TestSwapRaces) ends the walkers in
	// a fatal "not a directory" instead of a refusal.
	{tool: searchFiles, fatal: "not a directory"},
	{tool: findFiles, fatal: "not a directory"},
	{tool: listFiles, fatal: "not a directory"},
	{tool: grepTool, fatal: "not a directory"},
	// A pattern or glob longer than the 128 KiB a command-line argument
	// may hold (TestOversizedArguments) makes starting ripgrep fail with
	// E2BIG, which the tools report as fatal.
	{tool: grepTool, fatal: "argument list too long"},
	{tool: listFiles, fatal: "argument list too long"},
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
