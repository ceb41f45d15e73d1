package conformance_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/memfs"
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
		{"bare-errno", "Errors/OpenReadMissing"},
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

// strictEnv names the misconfigured run TestStrictRun makes.
const strictEnv = "FENCEFS_CONFORMANCE_STRICT"

// TestStrictRun runs the suite on memfs with options that do not match
// what it skips or what the harness can do. It only runs as a subprocess
// of TestStrictRunsFail, which expects it to fail.
func TestStrictRun(t *testing.T) {
	var h conformance.Harness = brokenHarness{}
	opts := conformance.RunOptions{LargeFileSize: 1 << 20}
	switch os.Getenv(strictEnv) {
	case "":
		t.Skipf("skipped: runs only as a subprocess of TestStrictRunsFail (%s unset)", strictEnv)
	case "unexpected":
		h = conformance.HarnessFunc(func(ctx context.Context, t *testing.T) backend.Backend { return memfs.New() })
		opts.ExpectedSkips = []string{}
	case "stale":
		opts.ExpectedSkips = []string{
			"Symlinks/*", "SpecialFiles/*", "ReadOnly/*", "FSView/Symlinks", "Walk/ListFallbackAgrees",
			"InvalidPaths/ResolveSymlinks", "InvalidPaths/Readlink", "InvalidPaths/LocalPath",
			"Changes/ChangesRefusedWhenReadOnly", "Preconditions/MatchHashCurrent",
		}
	case "require":
		opts.RequireAbilities = []conformance.Ability{conformance.AbilitySymlinker}
	}
	conformance.RunWith(t, h, opts)
}

// TestStrictRunsFail checks that a skip ExpectedSkips does not name, an
// entry that did not skip and a required ability the harness lacks each
// fail the run with a message saying so.
func TestStrictRunsFail(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped: starts subprocesses (-short)")
	}
	tests := []struct {
		mode, run, want string
	}{
		{"unexpected", "^TestStrictRun$/^ModeBits$", "ModeBits/ReplacementKeepsMode skipped, and the run's ExpectedSkips does not name it"},
		{"stale", "^TestStrictRun$", `ExpectedSkips names ["Preconditions/MatchHashCurrent"], which did not skip`},
		{"require", "^TestStrictRun$", "require the harness ability conformance.Symlinker"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run="+tt.run, "-test.v")
			cmd.Env = append(os.Environ(), strictEnv+"="+tt.mode)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the %s run passed:\n%s", tt.mode, out)
			}
			if !bytes.Contains(out, []byte(tt.want)) {
				t.Errorf("the %s run did not say %q:\n%s", tt.mode, tt.want, out)
			}
		})
	}
}

// TestDeclaredReplaceGap checks that a backend whose replacement shows the
// file missing for a moment, and says so (Capabilities.NonAtomicReplace),
// passes: the suite then holds it to what it still promises.
func TestDeclaredReplaceGap(t *testing.T) {
	conformance.RunWith(t, brokenHarness{bug: "replace-gap-declared"}, conformance.RunOptions{
		LargeFileSize: 1 << 20,
		ExpectedSkips: []string{
			"Symlinks/*", "SpecialFiles/*", "ReadOnly/*", "FSView/Symlinks", "Walk/ListFallbackAgrees",
			"InvalidPaths/ResolveSymlinks", "InvalidPaths/Readlink", "InvalidPaths/LocalPath",
			"Changes/ChangesRefusedWhenReadOnly",
		},
	})
}
