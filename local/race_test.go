//go:build linux

package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fencefs/fencefs/backend"
)

// Contents of the race fixture: the same names inside and outside the
// root, with different bytes and sizes, plus a name only outside.
const (
	insideData  = "inside bytes"
	canaryData  = "CANARY: this lives outside the root and must never be read"
	outsideOnly = "outside-only"
	raceOps     = 10000
	raceWorkers = 4
)

// TestSwapRace swaps a directory inside the root with a symlink to a
// directory outside it (RENAME_EXCHANGE, in a tight loop) while workers
// read, stat, list, walk, resolve, write and create directories through
// both names. No canary byte may come back, no outside name may be
// listed, and nothing outside may change.
func TestSwapRace(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		parent := memTempDir(t)
		root := filepath.Join(parent, "root")
		outside := filepath.Join(parent, "outside")
		makeTree(t, parent, tree{
			"outside/f": canaryData, "outside/sub/g": canaryData, "outside/" + outsideOnly: canaryData,
			"root/a/f": insideData, "root/a/sub/g": insideData, "root/b": "->" + outside,
		})
		before := snapshot(t, outside)
		f := openTestFS(t, o, root)

		var ops atomic.Int64
		done := make(chan struct{})
		var swaps atomic.Int64
		var wg sync.WaitGroup
		wg.Go(func() {
			a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
			for {
				select {
				case <-done:
					return
				default:
				}
				if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
					t.Errorf("exchange: %v", err)
					return
				}
				swaps.Add(1)
			}
		})
		errs := make(chan error, raceWorkers)
		var workers sync.WaitGroup
		for w := range raceWorkers {
			workers.Go(func() {
				for i := w; ops.Add(1) <= raceOps; i += raceWorkers {
					if err := raceOp(f, i); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		workers.Wait()
		close(done)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if got := snapshot(t, outside); !slices.Equal(got, before) {
			t.Errorf("outside directory changed:\n got %q\nwant %q", got, before)
		}
		if swaps.Load() == 0 {
			t.Error("the swapper never ran")
		}
		t.Logf("%d operations, %d swaps", min(ops.Load(), raceOps), swaps.Load())
	})
}

// raceOp performs operation number i through one of the swapped names and
// returns an error if it saw anything from outside the root or failed in
// an unexpected way.
func raceOp(f *FS, i int) error {
	ctx := context.Background()
	dir := []string{"a", "b"}[i/9%2]
	switch i % 9 {
	case 0, 1:
		return checkRead(f, dir+"/f")
	case 2:
		return checkRead(f, dir+"/sub/g")
	case 3:
		fi, err := f.Stat(ctx, dir+"/f")
		if err == nil && fi.Size != int64(len(insideData)) {
			return fmt.Errorf("stat %s/f: size %d is the canary's", dir, fi.Size)
		}
		return expected("stat", err)
	case 4:
		entries, err := f.List(ctx, dir)
		for _, e := range entries {
			if e.Name == outsideOnly || e.Size == int64(len(canaryData)) {
				return fmt.Errorf("list %s: saw %+v from outside", dir, e)
			}
		}
		return expected("list", err)
	case 5:
		err := f.Walk(ctx, dir, func(name string, e backend.DirEntry) error {
			if strings.Contains(name, outsideOnly) || e.Size == int64(len(canaryData)) {
				return fmt.Errorf("walk: saw %s %+v from outside", name, e)
			}
			return nil
		})
		return expected("walk", err)
	case 6:
		got, err := f.ResolveSymlinks(ctx, dir+"/sub/g")
		if err == nil && got != dir+"/sub/g" {
			return fmt.Errorf("resolve %s/sub/g = %q", dir, got)
		}
		if err == nil {
			return checkRead(f, got)
		}
		return expected("resolve", err)
	case 7:
		err := backend.WriteFile(ctx, f, fmt.Sprintf("%s/sub/w%d", dir, i%8), []byte(insideData), backend.WriteOptions{})
		return expected("write", err)
	default:
		return expected("mkdir", f.MkdirAll(ctx, fmt.Sprintf("%s/new%d/x", dir, i%8)))
	}
}

// checkRead reads name and fails if the canary comes back.
func checkRead(f *FS, name string) error {
	r, err := f.OpenRead(context.Background(), name)
	if err != nil {
		return expected("open", err)
	}
	defer r.Close()
	got, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, []byte(insideData)) {
		return fmt.Errorf("read %s: %q", name, got)
	}
	return nil
}

// expected returns err unless it is nil or one of the refusals a path
// swapped under the call may cause.
func expected(op string, err error) error {
	for _, ok := range []error{backend.ErrSymlink, backend.ErrOutside, backend.ErrNotDir, backend.ErrNotRegular, fs.ErrNotExist, fs.ErrExist} {
		if err == nil || errors.Is(err, ok) {
			return nil
		}
	}
	return fmt.Errorf("%s: unexpected error %w", op, err)
}

// memTempDir returns a temporary directory in memory (/dev/shm) where
// there is one, so that the many fsyncs of the race cost nothing, and a
// normal one otherwise.
func memTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "fencefs-local-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// snapshot lists every path below dir with its content.
func snapshot(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		data := ""
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			data = string(b)
		}
		out = append(out, fmt.Sprintf("%s %v %q", p, d.Type(), data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
