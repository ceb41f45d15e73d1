package conformance_test

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/fencefs/fencefs/conformance"
)

// TestToolsBrokenMem runs the tool suite on a brokenFS with the defect
// named by bugEnv. It only runs as a subprocess of TestToolsCatchBugs.
func TestToolsBrokenMem(t *testing.T) {
	bug := os.Getenv(bugEnv)
	if bug == "" {
		t.Skipf("skipped: runs only as a subprocess of TestToolsCatchBugs (%s unset)", bugEnv)
	}
	conformance.RunTools(t, brokenHarness{bug: bug})
}

// TestToolsCatchBugs checks that the tool suite fails, in the expected
// scenario, when storage misbehaves in ways the tools pass on to the
// model, so its scenarios do not pass vacuously.
func TestToolsCatchBugs(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped: starts subprocesses (-short)")
	}
	tests := []struct {
		bug, run string
	}{
		{"list-dup", "ListDirectory/Sorted"},
		{"list-dup", "FindFiles/Patterns"},
		{"list-dup", "SearchFiles/Matches"},
		{"list-file-notexist", "ListDirectory/NotADirectory"},
		{"mode-reset", "WriteFile/ModeKept"},
	}
	for _, tt := range tests {
		t.Run(tt.bug+"/"+tt.run, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestToolsBrokenMem$/^"+tt.run+"$", "-test.v")
			cmd.Env = append(os.Environ(), bugEnv+"="+tt.bug)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the tool suite passed a backend with bug %q:\n%s", tt.bug, out)
			}
			if want := []byte("--- FAIL: TestToolsBrokenMem/" + tt.run + " "); !bytes.Contains(out, want) {
				t.Errorf("bug %q did not fail %s:\n%s", tt.bug, tt.run, out)
			}
		})
	}
}
