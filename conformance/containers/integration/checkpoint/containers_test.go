package checkpoint_test

import (
	"fmt"
	"io/fs"
	"sync/atomic"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance/containers"
)

// TestScenariosS3 runs the scenarios on S3 (versitygw): the namespace and
// the store are two prefixes of one bucket. It skips loudly without
// Docker or the image, and fails with FENCEFS_REQUIRE_CONTAINERS=1.
func TestScenariosS3(t *testing.T) {
	containers.SetTestcontainersDefaults()
	srv := containers.StartS3(t.Context(), t)
	var n atomic.Int64
	runScenarios(t, func(t *testing.T) env {
		i := n.Add(1)
		ns := srv.NewBackend(t, fmt.Sprintf("ns-%d", i))
		store := srv.NewBackend(t, fmt.Sprintf("checkpoints-%d", i))
		return env{ns: ns, store: store, seed: func(t *testing.T, name string, data []byte, _ fs.FileMode) {
			// Another writer: a second client of the same prefix.
			other := srv.NewBackend(t, fmt.Sprintf("ns-%d", i))
			if err := backend.WriteFile(t.Context(), other, name, data, backend.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
		}}
	})
}

// TestScenariosSFTP runs the scenarios on an OpenSSH server: the
// namespace and the store are two directories of its user's home, each
// reached by a connection of its own.
func TestScenariosSFTP(t *testing.T) {
	containers.SetTestcontainersDefaults()
	srv := containers.StartSFTP(t.Context(), t)
	h := containers.NewSFTPHarness(srv)
	runScenarios(t, func(t *testing.T) env {
		ns := h.MakeBackend(t.Context(), t)
		store := h.MakeBackend(t.Context(), t)
		return env{ns: ns, store: store, seed: func(t *testing.T, name string, data []byte, mode fs.FileMode) {
			other := h.Reopen(t.Context(), t, ns)
			if err := backend.WriteFile(t.Context(), other, name, data, backend.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			h.Chmod(t.Context(), t, ns, name, mode)
		}}
	})
}
