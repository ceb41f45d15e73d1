package conformance_test

import (
	"context"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/local"
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
	// In TestConformance: conformance.Run(t, h), or for a remote server
	// with a smaller big file:
	opts := conformance.RunOptions{LargeFileSize: 8 << 20}
	_, _ = h, opts
}
