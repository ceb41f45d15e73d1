// Package conformance is the shared behaviour suite every fencefs backend
// passes. An adapter author calls [Run] from a test with a [Harness] that
// makes a fresh backend per subtest:
//
//	func TestConformance(t *testing.T) {
//		conformance.Run(t, conformance.HarnessFunc(func(ctx context.Context, t *testing.T) backend.Backend {
//			return mybackend.New(t.TempDir())
//		}))
//	}
//
// The tests are gated by the backend's declared [backend.Capabilities]
// and by the optional interfaces it implements; a test that does not apply
// is skipped with a message naming the capability, so `go test -v` shows
// exactly what ran. Optional harness abilities ([Symlinker],
// [SpecialFileMaker], [RawLister], [Chmoder], [Seeder], [Reopener]) unlock
// the tests that need storage to be arranged or inspected behind the
// backend's back, or a second backend over it; a check a missing ability
// rules out is a visible skip too. [RunOptions.ExpectedSkips] names the
// skips a run expects, so that any other fails it, and
// [RunOptions.RequireAbilities] the abilities it must not lose.
//
// Where the contract leaves a choice, the suite accepts every reasonable
// answer: a read of a path that goes through a file may report
// not-a-directory or not-existing; a CreateOnly or MatchHash failure may
// surface from OpenWrite or from Commit; a component longer than
// MaxNameBytes may be refused (with fs.ErrInvalid) or stored intact,
// since a namespace reports the smallest limit of its mounts. Where it
// does not, the suite is strict: a write or MkdirAll through a file fails
// with backend.ErrNotDir and a write onto a directory with
// backend.ErrIsDir; invalid paths are refused by OpenWrite itself, before
// any temporary file could exist; and a write in progress shows up in no
// List or Walk, so temporary names never reach a model.
package conformance

import (
	"testing"

	"github.com/fencefs/fencefs/backend"
)

// DefaultLargeFileSize is the size of the big round-trip file unless
// RunOptions says otherwise.
const DefaultLargeFileSize = 64 << 20

// DefaultConcurrentWriters is how many writers race in the precondition
// tests unless RunOptions says otherwise.
const DefaultConcurrentWriters = 8

// DefaultConcurrentRounds is how many replacements the concurrency tests
// make unless RunOptions says otherwise.
const DefaultConcurrentRounds = 200

// RunOptions tune the suite for slow or remote backends. The zero value
// runs the full suite at its default sizes.
type RunOptions struct {
	// LargeFileSize is the size in bytes of the file streamed through the
	// backend in chunks; 0 means DefaultLargeFileSize. A remote backend may
	// pass something smaller that still crosses its multipart threshold.
	LargeFileSize int64
	// ConcurrentWriters is the number of writers racing with the same
	// precondition; 0 means DefaultConcurrentWriters.
	ConcurrentWriters int
	// Dir is the storage directory the suite works in, "." (the default)
	// for the backend's root. A backend whose root cannot hold files, such
	// as a mounted namespace, passes a directory that can (a mount name).
	// The directory must be empty, or missing and creatable by a write.
	Dir string
	// ConcurrentRounds is how many replacements the concurrency tests
	// make; 0 means DefaultConcurrentRounds. More rounds make a rare
	// visibility gap likelier to show.
	ConcurrentRounds int
	// ExpectedSkips lists the tests this backend and harness are expected
	// to skip, as path.Match patterns of test names below the run
	// ("Symlinks/*", "Atomicity/AbandonKeepsOld/Leftovers"); a pattern
	// that matches a test covers its subtests. When it is
	// not nil, a skip it does not name fails that test, and a pattern that
	// matches no skip fails the run, so a harness that stops declaring an
	// ability cannot go quietly green. A nil list leaves skips unchecked;
	// an empty one requires that nothing skips.
	ExpectedSkips []string
	// RequireAbilities names the optional harness abilities the run needs;
	// a harness without one of them fails the run at its start.
	RequireAbilities []Ability
}

func (o RunOptions) withDefaults() RunOptions {
	if o.LargeFileSize <= 0 {
		o.LargeFileSize = DefaultLargeFileSize
	}
	if o.ConcurrentWriters <= 0 {
		o.ConcurrentWriters = DefaultConcurrentWriters
	}
	if o.Dir == "" {
		o.Dir = "."
	}
	if o.ConcurrentRounds <= 0 {
		o.ConcurrentRounds = DefaultConcurrentRounds
	}
	return o
}

// Run runs the whole suite against the backends h makes, with default
// options.
func Run(t *testing.T, h Harness) {
	t.Helper()
	RunWith(t, h, RunOptions{})
}

// RunWith runs the whole suite against the backends h makes, tuned by
// opts.
func RunWith(t *testing.T, h Harness, opts RunOptions) {
	t.Helper()
	opts = opts.withDefaults()
	if !backend.ValidPath(opts.Dir) {
		t.Fatalf("RunOptions.Dir %q is not a canonical storage path", opts.Dir)
	}
	requireAbilities(t, h, opts.RequireAbilities)
	s := &suite{h: h, opts: opts, skips: newSkipCheck(t, opts.ExpectedSkips)}
	runGroups(t, s.skips, s.groups())
}

// suite carries the harness and options to every test.
type suite struct {
	h     Harness
	opts  RunOptions
	skips *skipCheck
}

type testCase struct {
	name string
	fn   func(t *testing.T)
}

type group struct {
	name  string
	cases []testCase
}

func (s *suite) groups() []group {
	return []group{
		{"Capabilities", s.capabilityTests()},
		{"RoundTrip", s.roundTripTests()},
		{"Names", s.nameTests()},
		{"Errors", s.errorTests()},
		{"InvalidPaths", s.invalidPathTests()},
		{"Atomicity", s.atomicityTests()},
		{"Preconditions", s.preconditionTests()},
		{"Changes", s.changeTests()},
		{"ModeBits", s.modeTests()},
		{"MkdirAll", s.mkdirTests()},
		{"List", s.listTests()},
		{"Symlinks", s.symlinkTests()},
		{"SpecialFiles", s.specialFileTests()},
		{"Walk", s.walkTests()},
		{"Context", s.contextTests()},
		{"ReadOnly", s.readOnlyTests()},
		{"Reopen", s.reopenTests()},
		{"FSView", s.fsViewTests()},
	}
}
