package conformance_test

import (
	"testing"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/aferoadapter"
	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/local"
)

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

func TestAferoMemMapFs(t *testing.T) {
	conformance.Run(t, newAferoHarness("", func(t *testing.T, fsys afero.Fs) backend.Backend {
		return aferoadapter.New(fsys)
	}))
}

// TestAferoOsFs runs the afero adapter over a host directory, where it
// also holds symlinks and special files.
func TestAferoOsFs(t *testing.T) {
	conformance.Run(t, newHostHarness("", func(t *testing.T, dir string) backend.Backend {
		return aferoadapter.New(afero.NewBasePathFs(afero.NewOsFs(), dir))
	}))
}

// TestAferoReadOnly runs the read tests on a read-only afero.Fs, seeded
// through the writable MemMapFs beneath it.
func TestAferoReadOnly(t *testing.T) {
	conformance.Run(t, newAferoHarness("", func(t *testing.T, fsys afero.Fs) backend.Backend {
		return aferoadapter.New(afero.NewReadOnlyFs(fsys))
	}))
}
