package conformance_test

import (
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/local"
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

func TestLocal(t *testing.T) {
	conformance.Run(t, newHostHarness("", func(t *testing.T, dir string) backend.Backend {
		b, err := local.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}))
}
