package conformance_test

import (
	"testing"

	"github.com/fencefs/fencefs/conformance"
)

func TestMem(t *testing.T) {
	conformance.Run(t, memHarness{})
}

func TestMemReadOnly(t *testing.T) {
	conformance.Run(t, memHarness{readOnly: true})
}

func TestMemInDir(t *testing.T) {
	conformance.RunWith(t, memHarness{}, conformance.RunOptions{Dir: "work/space", LargeFileSize: 3<<20 + 5})
}
