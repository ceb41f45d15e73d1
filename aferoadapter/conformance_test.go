package aferoadapter_test

import (
	"testing"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/aferoadapter"
	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/internal/backendtest"
)

// The harnesses have no conformance.Reopener: preconditions are atomic
// only between writers sharing one *FS (see FS), and the suite's
// cross-value races (Reopen/Concurrent*) show two adapters over one
// afero.Fs both committing with the same hash, in about one run in ten.

// memHarness makes backends over fresh MemMapFs file systems, wrapped by
// wrap (a read-only Fs, say).
func memHarness(wrap func(afero.Fs) afero.Fs) memAbilitiesOnly {
	return memAbilitiesOnly{backendtest.NewAferoHarness("", func(t *testing.T, fsys afero.Fs) backend.Backend {
		return aferoadapter.New(wrap(fsys))
	})}
}

// osHarness makes backends over host directories seen through afero,
// where they also hold symlinks and special files.
func osHarness() osAbilitiesOnly {
	return osAbilitiesOnly{backendtest.NewHostHarness("", func(t *testing.T, dir string) backend.Backend {
		return aferoadapter.New(afero.NewBasePathFs(afero.NewOsFs(), dir))
	})}
}

// memAbilitiesOnly and osAbilitiesOnly pass on every ability of the
// harness they hold but Reopen.
type memAbilitiesOnly struct{ memHarnessAbilities }

type osAbilitiesOnly struct{ osHarnessAbilities }

type memHarnessAbilities interface {
	conformance.Harness
	conformance.RawLister
	conformance.Chmoder
	conformance.Seeder
}

type osHarnessAbilities interface {
	memHarnessAbilities
	conformance.Symlinker
	conformance.SpecialFileMaker
}

func plain(fsys afero.Fs) afero.Fs { return fsys }

// memAbilities are the abilities of the MemMapFs harness; osAbilities
// those of the host one.
func memAbilities() []conformance.Ability {
	return []conformance.Ability{conformance.AbilityRawLister, conformance.AbilityChmoder, conformance.AbilitySeeder}
}

func osAbilities() []conformance.Ability {
	return append(memAbilities(), conformance.AbilitySymlinker, conformance.AbilitySpecialFileMaker)
}

// commonSkips are what every afero run skips: afero files have no
// versions and no local path, the adapter has no Walker, and nothing here
// reopens.
func commonSkips(more ...string) []string {
	return append([]string{
		"Preconditions/MatchVersion*", "InvalidPaths/LocalPath", "Walk/ListFallbackAgrees", "Reopen/*",
	}, more...)
}

// writableSkips are what a writable run skips besides.
func writableSkips(more ...string) []string {
	return commonSkips(append([]string{"ReadOnly/*", "Changes/ChangesRefusedWhenReadOnly"}, more...)...)
}

// TestConformanceMemMapFs runs the suite on a MemMapFs, which holds no
// symlinks or special files and has no name length limit.
func TestConformanceMemMapFs(t *testing.T) {
	conformance.RunWith(t, memHarness(plain), conformance.RunOptions{
		ExpectedSkips:    writableSkips("Names/*Length*", "Names/TooLong*", "Symlinks/*", "SpecialFiles/*", "FSView/Symlinks"),
		RequireAbilities: memAbilities(),
	})
}

func TestConformanceOsFs(t *testing.T) {
	conformance.RunWith(t, osHarness(), conformance.RunOptions{
		ExpectedSkips:    writableSkips(),
		RequireAbilities: osAbilities(),
	})
}

// TestConformanceReadOnly runs the read tests on a read-only afero.Fs,
// seeded through the writable MemMapFs beneath it.
func TestConformanceReadOnly(t *testing.T) {
	conformance.RunWith(t, memHarness(afero.NewReadOnlyFs), conformance.RunOptions{
		ExpectedSkips: commonSkips(
			"RoundTrip/*", "Names/*Length*", "Names/TooLong*", "Errors/Write*", "Atomicity/*", "Preconditions/*", "Changes/TruthTable",
			"Changes/Remove*", "Changes/Rename*", "Changes/Concurrent*", "ModeBits/*", "MkdirAll/*", "Symlinks/*",
			"SpecialFiles/*", "Context/Cancel*Commit*", "Context/CancelledBeforeOpenWrite", "FSView/Symlinks",
		),
		RequireAbilities: memAbilities(),
	})
}

func TestToolsMemMapFs(t *testing.T) {
	conformance.RunToolsWith(t, memHarness(plain), conformance.ToolsOptions{
		ExpectedSkips:    []string{"ToolSelection/ReadOnlyBackend", "Symlinks/*", "SpecialFiles/*"},
		RequireAbilities: memAbilities(),
	})
}

// TestToolsOsFs runs the tools over a host directory seen through afero:
// on local disk, but without a local path, so list_files and grep use
// the built-in engine there while symlinks and special files exist.
func TestToolsOsFs(t *testing.T) {
	conformance.RunToolsWith(t, osHarness(), conformance.ToolsOptions{
		ExpectedSkips:    []string{"ToolSelection/ReadOnlyBackend"},
		RequireAbilities: osAbilities(),
	})
}

// TestToolsReadOnly runs the read scenarios on a read-only afero.Fs; the
// write scenarios skip.
func TestToolsReadOnly(t *testing.T) {
	conformance.RunToolsWith(t, memHarness(afero.NewReadOnlyFs), conformance.ToolsOptions{
		ExpectedSkips: []string{
			"WriteFile/*", "EditFile/*", "ApplyPatch/*", "DeleteFile/*", "MoveFile/*", "CopyFile/*",
			"ChangeTools/ChangeRequests", "ChangeTools/Cancelled", "ChangeTools/Events", "CreateDirectory/*", "Policy/Protected*", "Events/*", "ChangeRequests/*",
			"Symlinks/*", "SpecialFiles/*",
		},
		RequireAbilities: memAbilities(),
	})
}
