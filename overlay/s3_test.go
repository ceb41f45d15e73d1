package overlay_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/s3adapter"
)

// s3srv is the S3 server (versitygw) the S3 tests share; TestMain
// terminates it. As in s3adapter's tests, the root module's tests reach
// the containers module through go.work.
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
func s3Layers(t *testing.T) (base, upper layerHarness) {
	srv := s3srv.Get(t)
	return srv.Harness(t.Context(), t), srv.Harness(t.Context(), t)
}

// TestConformanceS3 runs the suite on overlays of S3 over S3: a writable
// base, a read-only base, and a read-only upper layer (reads from the
// base only).
func TestConformanceS3(t *testing.T) {
	t.Run("Writable", func(t *testing.T) {
		base, upper := s3Layers(t)
		conformance.RunWith(t, newHarness(base, upper, false, false), conformance.RunOptions{
			LargeFileSize: s3LargeFile, ExpectedSkips: writableSkips(), RequireAbilities: abilities(),
		})
	})
	t.Run("ReadOnlyBase", func(t *testing.T) {
		base, upper := s3Layers(t)
		conformance.RunWith(t, newHarness(base, upper, true, false), conformance.RunOptions{
			LargeFileSize: s3LargeFile, ExpectedSkips: writableSkips(), RequireAbilities: abilities(),
		})
	})
	t.Run("ReadOnly", func(t *testing.T) {
		base, upper := s3Layers(t)
		conformance.RunWith(t, newHarness(base, upper, true, true), conformance.RunOptions{
			LargeFileSize: s3LargeFile, ExpectedSkips: readOnlySkips(), RequireAbilities: abilities(),
		})
	})
}

func TestToolsS3(t *testing.T) {
	t.Run("ReadOnlyBase", func(t *testing.T) {
		base, upper := s3Layers(t)
		conformance.RunToolsWith(t, newHarness(base, upper, true, false), conformance.ToolsOptions{
			ExpectedSkips: toolSkips("ToolSelection/ReadOnlyBackend"), RequireAbilities: abilities(),
		})
	})
	t.Run("ReadOnly", func(t *testing.T) {
		base, upper := s3Layers(t)
		conformance.RunToolsWith(t, newHarness(base, upper, false, true), conformance.ToolsOptions{
			ExpectedSkips: readOnlyToolSkips(), RequireAbilities: abilities(),
		})
	})
}

// s3LayerPair returns S3 base and upper layers over two fresh prefixes of
// one bucket.
func s3LayerPair(t *testing.T) (base, upper backend.Backend) {
	srv := s3srv.Get(t)
	bucket := srv.NewBucket(t.Context(), t)
	return srv.Open(t, srv.Config(bucket, "base")), srv.Open(t, srv.Config(bucket, "upper"))
}
