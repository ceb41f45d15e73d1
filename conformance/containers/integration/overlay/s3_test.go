// Package overlay_test runs package overlay over S3 layers on versitygw:
// conformance.Run and RunTools in each shape, the commit table, and the
// requests each operation sends.
package overlay_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/overlay/overlaytest"
	"github.com/fencefs/fencefs/s3adapter"
)

// s3srv is the S3 server (versitygw) the tests of this package share;
// TestMain terminates it.
var s3srv = containers.Shared[*containers.S3Server]{Start: containers.StartS3Server, Image: containers.S3Image()}

func TestMain(m *testing.M) {
	containers.SetTestcontainersDefaults()
	code := m.Run()
	if err := s3srv.Terminate(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "terminating the S3 server:", err)
	}
	os.Exit(code)
}

// s3LargeFile crosses the S3 upload's part size twice.
const s3LargeFile = 2*s3adapter.MinPartSize + 123_457

// s3Layers returns layer harnesses over two fresh buckets of one server:
// the base's and the upper layer's.
func s3Layers(t *testing.T) (base, upper overlaytest.LayerHarness) {
	srv := s3srv.Get(t)
	return srv.Harness(t.Context(), t), srv.Harness(t.Context(), t)
}

// TestConformanceS3 runs the suite on overlays of S3 over S3: a read-only
// base (the usual shape), and a read-only upper layer (reads from the
// base only). The writable-base shape runs on memfs and local layers
// only: the suite never commits, and every read of a base passes through
// backend.ReadOnly unchanged, so over S3 it runs the same overlay code as
// the read-only base (go test -coverpkg of overlay: the same blocks, but
// for an index read failing under a cancelled context, which both reach
// by timing) and took 46 of the package's 250 seconds under -race.
func TestConformanceS3(t *testing.T) {
	t.Run("ReadOnlyBase", func(t *testing.T) {
		base, upper := s3Layers(t)
		conformance.RunWith(t, overlaytest.NewHarness(base, upper, true, false), conformance.RunOptions{
			LargeFileSize: s3LargeFile, ExpectedSkips: overlaytest.WritableSkips(), RequireAbilities: overlaytest.Abilities(),
		})
	})
	t.Run("ReadOnly", func(t *testing.T) {
		base, upper := s3Layers(t)
		conformance.RunWith(t, overlaytest.NewHarness(base, upper, true, true), conformance.RunOptions{
			LargeFileSize: s3LargeFile, ExpectedSkips: overlaytest.ReadOnlySkips(), RequireAbilities: overlaytest.Abilities(),
		})
	})
}

func TestToolsS3(t *testing.T) {
	t.Run("ReadOnlyBase", func(t *testing.T) {
		base, upper := s3Layers(t)
		conformance.RunToolsWith(t, overlaytest.NewHarness(base, upper, true, false), conformance.ToolsOptions{
			ExpectedSkips: overlaytest.ToolSkips("ToolSelection/ReadOnlyBackend"), RequireAbilities: overlaytest.Abilities(),
		})
	})
	t.Run("ReadOnly", func(t *testing.T) {
		base, upper := s3Layers(t)
		conformance.RunToolsWith(t, overlaytest.NewHarness(base, upper, false, true), conformance.ToolsOptions{
			ExpectedSkips: overlaytest.ReadOnlyToolSkips(), RequireAbilities: overlaytest.Abilities(),
		})
	})
}

// TestCommit runs overlay's commit table over S3 layers (ETag
// preconditions).
func TestCommit(t *testing.T) { overlaytest.RunCommit(t, s3LayerPair) }

// s3LayerPair returns S3 base and upper layers over two fresh prefixes of
// one bucket.
func s3LayerPair(t *testing.T) (base, upper backend.Backend) {
	srv := s3srv.Get(t)
	bucket := srv.NewBucket(t.Context(), t)
	return srv.Open(t, srv.Config(bucket, "base")), srv.Open(t, srv.Config(bucket, "upper"))
}
