package sftpadapter_test

import (
	"testing"

	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/conformance/containers"
)

// TestToolsSFTP runs the tool-level suite against a real OpenSSH server,
// with the same expected texts as on local disk.
func TestToolsSFTP(t *testing.T) {
	containers.SetTestcontainersDefaults()
	srv := containers.StartSFTP(t.Context(), t)
	conformance.RunToolsWith(t, containers.NewSFTPHarness(srv), conformance.ToolsOptions{
		ExpectedSkips: []string{"ToolSelection/ReadOnlyBackend"},
	})
}
