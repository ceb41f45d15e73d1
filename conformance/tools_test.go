package conformance_test

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/aferoadapter"
	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/mounted"
)

// The tool-level suite on every backend of this module that needs no
// server. The S3 and SFTP runs live in conformance/containers.

func TestToolsLocal(t *testing.T) {
	conformance.RunTools(t, newHostHarness("", func(t *testing.T, dir string) backend.Backend {
		return newLocal(t, dir)
	}))
}

// TestToolsLocalInDir works in a subdirectory of a plain namespace, so
// the tool sets' working directory is not the root: output paths stay
// relative to it, events and policy messages name the full path.
func TestToolsLocalInDir(t *testing.T) {
	conformance.RunToolsWith(t, newHostHarness("", func(t *testing.T, dir string) backend.Backend {
		return newLocal(t, dir)
	}), conformance.ToolsOptions{Dir: "work/space"})
}

// TestToolsAferoReadOnly runs the read scenarios on a read-only afero.Fs,
// seeded through the MemMapFs beneath it; the write scenarios skip.
func TestToolsAferoReadOnly(t *testing.T) {
	conformance.RunTools(t, newAferoHarness("", func(t *testing.T, fsys afero.Fs) backend.Backend {
		return aferoadapter.New(afero.NewReadOnlyFs(fsys))
	}))
}

func TestToolsAferoMemMapFs(t *testing.T) {
	conformance.RunTools(t, newAferoHarness("", func(t *testing.T, fsys afero.Fs) backend.Backend {
		return aferoadapter.New(fsys)
	}))
}

// TestToolsAferoOsFs runs the tools over a host directory seen through
// afero: on local disk, but without a local path, so list_files and grep
// use the built-in engine there while symlinks and special files exist.
func TestToolsAferoOsFs(t *testing.T) {
	conformance.RunTools(t, newHostHarness("", func(t *testing.T, dir string) backend.Backend {
		return aferoadapter.New(afero.NewBasePathFs(afero.NewOsFs(), dir))
	}))
}

// The mounted namespace is rooted: the suite works in one mount, with a
// mount of the other kind beside it, and expects rooted output paths.

func TestToolsMountedLocal(t *testing.T) {
	h := newHostHarness("disk", func(t *testing.T, dir string) backend.Backend {
		return newMounted(t, map[string]backend.Backend{
			"disk": newLocal(t, dir),
			"mem":  aferoadapter.New(afero.NewMemMapFs()),
		})
	})
	conformance.RunToolsWith(t, h, conformance.ToolsOptions{Dir: "disk"})
}

func TestToolsMountedAfero(t *testing.T) {
	h := newAferoHarness("mem", func(t *testing.T, fsys afero.Fs) backend.Backend {
		return newMounted(t, map[string]backend.Backend{
			"disk": newLocal(t, t.TempDir()),
			"mem":  aferoadapter.New(fsys),
		})
	})
	conformance.RunToolsWith(t, h, conformance.ToolsOptions{Dir: "mem"})
}

// TestToolsMountedLocalOnly mounts local disk alone, so the namespace
// reports symlinks and special files and their scenarios run through the
// routing, in a directory below the mount.
func TestToolsMountedLocalOnly(t *testing.T) {
	h := newHostHarness("disk", func(t *testing.T, dir string) backend.Backend {
		return newMounted(t, map[string]backend.Backend{"disk": newLocal(t, dir)})
	})
	conformance.RunToolsWith(t, h, conformance.ToolsOptions{Dir: "disk/ws"})
}

// TestToolsMountedReadOnly runs the suite on a namespace whose only mount
// is read-only: reads work on files seeded on disk, and every change is a
// retry naming the path.
func TestToolsMountedReadOnly(t *testing.T) {
	h := newHostHarness("ro", func(t *testing.T, dir string) backend.Backend {
		return newMounted(t, map[string]backend.Backend{"ro": mounted.ReadOnly(newLocal(t, dir))})
	})
	conformance.RunToolsWith(t, h, conformance.ToolsOptions{Dir: "ro"})
}

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
