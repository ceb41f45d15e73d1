package conformance_test

import (
	"context"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/memfs"
)

// An adapter's test file runs the suite with a harness that makes a fresh,
// empty backend for every subtest. The harness would live in a
// TestConformance(t *testing.T) function; the optional abilities
// (conformance.Symlinker, conformance.RawLister, ...) are methods on a
// harness type instead of a HarnessFunc.
func ExampleRun() {
	h := conformance.HarnessFunc(func(ctx context.Context, t *testing.T) backend.Backend {
		b, err := local.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	})
	// In TestConformance: conformance.Run(t, h), or, to make the run fail
	// on any skip but the ones local disk is known for, and with a
	// smaller big file as for a remote server:
	opts := conformance.RunOptions{
		LargeFileSize: 8 << 20,
		ExpectedSkips: []string{"Preconditions/MatchVersion*", "ReadOnly/*"},
	}
	_, _ = h, opts
}

// memHarness makes memfs backends and has two of the optional abilities:
// a second backend over the same storage, and a raw listing (memfs keeps
// nothing hidden, so it is the listing itself).
type memHarness struct{}

func (memHarness) MakeBackend(ctx context.Context, t *testing.T) backend.Backend {
	return memfs.New()
}

func (memHarness) Reopen(ctx context.Context, t *testing.T, b backend.Backend) backend.Backend {
	return b.(*memfs.FS).Reopen()
}

func (memHarness) ListRaw(ctx context.Context, t *testing.T, b backend.Backend) []string {
	var files []string
	err := backend.Walk(ctx, b, ".", func(name string, e backend.DirEntry) error {
		if !e.IsDir() {
			files = append(files, name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// A harness type carries the optional abilities as methods, and
// RunOptions.RequireAbilities makes the run fail should one go missing.
func ExampleRunWith() {
	opts := conformance.RunOptions{
		RequireAbilities: []conformance.Ability{conformance.AbilityReopener, conformance.AbilityRawLister},
	}
	// In TestConformance: conformance.RunWith(t, memHarness{}, opts)
	_, _ = memHarness{}, opts
}
