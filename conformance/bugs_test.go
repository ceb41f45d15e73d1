package conformance_test

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/fencefs/fencefs/conformance"
)

// bugEnv names the deliberate defect TestBrokenMem runs with.
const bugEnv = "FENCEFS_CONFORMANCE_BUG"

// TestBrokenMem runs the suite on a brokenFS with the defect named by
// bugEnv. It only runs as a subprocess of TestSuiteCatchesBugs, which
// expects it to fail.
func TestBrokenMem(t *testing.T) {
	bug := os.Getenv(bugEnv)
	if bug == "" {
		t.Skipf("skipped: runs only as a subprocess of TestSuiteCatchesBugs (%s unset)", bugEnv)
	}
	conformance.RunWith(t, brokenHarness{bug: bug}, conformance.RunOptions{LargeFileSize: 1 << 20})
}

// TestSuiteCatchesBugs checks that the suite fails, in the expected test,
// for backends with typical defects, so no test passes vacuously.
func TestSuiteCatchesBugs(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped: starts subprocesses (-short)")
	}
	tests := []struct {
		bug, run string
	}{
		{"write-through", "Atomicity/InvisibleBeforeCommit"},
		{"write-through", "Atomicity/AbandonKeepsOld"},
		{"write-through", "Atomicity/ConcurrentReadersSeeWholeContent"},
		{"close-commits", "Atomicity/AbandonNewLeavesNothing"},
		{"lax-paths", "InvalidPaths/OpenRead"},
		{"lax-paths", "InvalidPaths/OpenWrite"},
		{"ignore-hash", "Preconditions/MatchHashStale"},
		{"hash-at-open", "Preconditions/ConcurrentMatchHashOneWinner"},
		{"temp-left", "Atomicity/NoTempFilesAfterCommit"},
		{"list-file-notexist", "Errors/ListFile"},
		{"list-dup", "List/NoDuplicates"},
		{"list-dup", "Walk/EveryEntryOnce"},
		{"mode-reset", "ModeBits/ReplacementKeepsMode"},
		{"ignore-cancel", "Context/CancelBeforeCommitKeepsOld"},
		{"ignore-cancel-read", "Context/CancelledOpenRead"},
		{"replace-gap", "Atomicity/ConcurrentReadersSeeWholeContent"},
		{"reopen-fresh", "Reopen/CommitSeenByOther"},
		{"reopen-fresh", "Reopen/ConcurrentCreateOnlyAcrossValues"},
	}
	for _, tt := range tests {
		t.Run(tt.bug+"/"+tt.run, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestBrokenMem$/^"+tt.run+"$", "-test.v")
			cmd.Env = append(os.Environ(), bugEnv+"="+tt.bug)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a backend with bug %q:\n%s", tt.bug, out)
			}
			if want := []byte("--- FAIL: TestBrokenMem/" + tt.run + " "); !bytes.Contains(out, want) {
				t.Errorf("bug %q did not fail %s:\n%s", tt.bug, tt.run, out)
			}
		})
	}
}
