package checkpoint_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/memfs"
	"github.com/fencefs/fencefs/mounted"
)

func TestScenariosMemfs(t *testing.T) {
	runScenarios(t, func(t *testing.T) env {
		ns := memfs.New()
		return env{ns: ns, store: memfs.New(), seed: func(t *testing.T, name string, data []byte, mode fs.FileMode) {
			if err := backend.WriteFile(t.Context(), ns, name, data, backend.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := ns.Chmod(t.Context(), name, mode); err != nil {
				t.Fatal(err)
			}
		}}
	})
}

// localEnv is an env over two directories of local disk, the store
// outside the namespace's root.
func localEnv(t *testing.T) (env, string) {
	root, storeDir := t.TempDir(), t.TempDir()
	ns, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Close() })
	store, err := local.New(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return env{ns: ns, store: store, seed: hostSeed(root)}, root
}

// hostSeed writes files on the disk under root directly.
func hostSeed(root string) func(t *testing.T, name string, data []byte, mode fs.FileMode) {
	return func(t *testing.T, name string, data []byte, mode fs.FileMode) {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
}

func TestScenariosLocal(t *testing.T) {
	runScenarios(t, func(t *testing.T) env {
		e, _ := localEnv(t)
		return e
	})
}

// TestScenariosLocalSegments: the scenarios on local disk with the
// records in segment files (and none as objects).
func TestScenariosLocalSegments(t *testing.T) {
	runScenarios(t, func(t *testing.T) env {
		e, _ := localEnv(t)
		e.segments = true
		t.Cleanup(func() { wantSegments(t, e.store) })
		return e
	})
}

// wantSegments fails t unless the journal in store, if it holds
// anything, keeps its records in segments only.
func wantSegments(t *testing.T, store backend.Backend) {
	entries, err := store.List(context.Background(), "journal")
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	segs := 0
	for _, e := range entries {
		switch {
		case strings.HasSuffix(e.Name, ".log"):
			segs++
		case strings.HasSuffix(e.Name, ".json"):
			t.Errorf("a record as an object: %s", e.Name)
		}
	}
	if segs == 0 && len(entries) > 0 {
		t.Errorf("no segment in %v", entries)
	}
}

// TestScenariosMounted: the scenarios on a mounted namespace over local
// disk, the records in segment files.
func TestScenariosMounted(t *testing.T) {
	runScenarios(t, func(t *testing.T) env {
		e, root := localEnv(t)
		ns, err := mounted.New(map[string]backend.Backend{"w": e.ns})
		if err != nil {
			t.Fatal(err)
		}
		seed := hostSeed(root)
		return env{ns: ns, store: e.store, prefix: "/w/", seed: func(t *testing.T, name string, data []byte, mode fs.FileMode) {
			seed(t, name[len("w/"):], data, mode)
		}, segments: true}
	})
}
