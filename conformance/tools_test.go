package conformance_test

import (
	"testing"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/aferoadapter"
	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance"
)

// The tool-level suite on every backend of this module that needs no
// server. The S3 and SFTP runs live in conformance/containers.

func TestToolsLocal(t *testing.T) {
	conformance.RunTools(t, newHostHarness("", func(t *testing.T, dir string) backend.Backend {
		return newLocal(t, dir)
	}))
}

// TestToolsLocalInDir works in a subdirectory of a plain namespace, so
// the tool sets' working directory is not the root: output paths stay
// relative to it, events and policy messages name the full path.
func TestToolsLocalInDir(t *testing.T) {
	conformance.RunToolsWith(t, newHostHarness("", func(t *testing.T, dir string) backend.Backend {
		return newLocal(t, dir)
	}), conformance.ToolsOptions{Dir: "work/space"})
}

func TestToolsAferoMemMapFs(t *testing.T) {
	conformance.RunTools(t, newAferoHarness("", func(t *testing.T, fsys afero.Fs) backend.Backend {
		return aferoadapter.New(fsys)
	}))
}

// TestToolsAferoOsFs runs the tools over a host directory seen through
// afero: on local disk, but without a local path, so list_files and grep
// use the built-in engine there while symlinks and special files exist.
func TestToolsAferoOsFs(t *testing.T) {
	conformance.RunTools(t, newHostHarness("", func(t *testing.T, dir string) backend.Backend {
		return aferoadapter.New(afero.NewBasePathFs(afero.NewOsFs(), dir))
	}))
}

// The mounted namespace is rooted: the suite works in one mount, with a
// mount of the other kind beside it, and expects rooted output paths.

func TestToolsMountedLocal(t *testing.T) {
	h := newHostHarness("disk", func(t *testing.T, dir string) backend.Backend {
		return newMounted(t, map[string]backend.Backend{
			"disk": newLocal(t, dir),
			"mem":  aferoadapter.New(afero.NewMemMapFs()),
		})
	})
	conformance.RunToolsWith(t, h, conformance.ToolsOptions{Dir: "disk"})
}

func TestToolsMountedAfero(t *testing.T) {
	h := newAferoHarness("mem", func(t *testing.T, fsys afero.Fs) backend.Backend {
		return newMounted(t, map[string]backend.Backend{
			"disk": newLocal(t, t.TempDir()),
			"mem":  aferoadapter.New(fsys),
		})
	})
	conformance.RunToolsWith(t, h, conformance.ToolsOptions{Dir: "mem"})
}

// TestToolsMountedLocalOnly mounts local disk alone, so the namespace
// reports symlinks and special files and their scenarios run through the
// routing, in a directory below the mount.
func TestToolsMountedLocalOnly(t *testing.T) {
	h := newHostHarness("disk", func(t *testing.T, dir string) backend.Backend {
		return newMounted(t, map[string]backend.Backend{"disk": newLocal(t, dir)})
	})
	conformance.RunToolsWith(t, h, conformance.ToolsOptions{Dir: "disk/ws"})
}
