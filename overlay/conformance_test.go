package overlay_test

import (
	"testing"

	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/overlay/overlaytest"
)

func TestConformanceMem(t *testing.T) {
	conformance.RunWith(t, overlaytest.NewHarness(memHarness{}, memHarness{}, false, false), conformance.RunOptions{
		LargeFileSize: 3<<20 + 5, ExpectedSkips: overlaytest.WritableSkips(), RequireAbilities: overlaytest.Abilities(),
	})
}

// TestConformanceMemReadOnlyBase is the usual shape: a read-only base
// under a writable upper layer.
func TestConformanceMemReadOnlyBase(t *testing.T) {
	conformance.RunWith(t, overlaytest.NewHarness(memHarness{}, memHarness{}, true, false), conformance.RunOptions{
		LargeFileSize: 3<<20 + 5, Dir: "work/space", ExpectedSkips: overlaytest.WritableSkips("FSView/Empty"), RequireAbilities: overlaytest.Abilities(),
	})
}

// TestConformanceMemReadOnly runs the read tests on an overlay whose upper
// layer is read-only, seeded in the base: every read goes through to it.
func TestConformanceMemReadOnly(t *testing.T) {
	conformance.RunWith(t, overlaytest.NewHarness(memHarness{}, memHarness{}, true, true), conformance.RunOptions{
		LargeFileSize: 3<<20 + 5, ExpectedSkips: overlaytest.ReadOnlySkips(), RequireAbilities: overlaytest.Abilities(),
	})
}

func TestToolsMem(t *testing.T) {
	conformance.RunToolsWith(t, overlaytest.NewHarness(memHarness{}, memHarness{}, true, false), conformance.ToolsOptions{
		ExpectedSkips: overlaytest.ToolSkips("ToolSelection/ReadOnlyBackend"), RequireAbilities: overlaytest.Abilities(),
	})
}

func TestToolsMemReadOnly(t *testing.T) {
	conformance.RunToolsWith(t, overlaytest.NewHarness(memHarness{}, memHarness{}, false, true), conformance.ToolsOptions{
		ExpectedSkips: overlaytest.ReadOnlyToolSkips(), RequireAbilities: overlaytest.Abilities(),
	})
}
