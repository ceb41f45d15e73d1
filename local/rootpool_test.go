//go:build linux

package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/tools"
)

// TestIdleRootsHoldNoDescriptor opens more backends than the pool keeps
// roots and uses each: the process holds no more root descriptors than
// the pool's bound, and every backend still reads.
func TestIdleRootsHoldNoDescriptor(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		n := roots.limit() + 50
		base := t.TempDir()
		before := openDescriptors(t)
		fss := make([]*FS, n)
		for i := range fss {
			dir := filepath.Join(base, strconv.Itoa(i))
			makeTree(t, dir, tree{"a.txt": strconv.Itoa(i)})
			fss[i] = openTestFS(t, o, dir)
		}
		for i, f := range fss {
			if got, err := backend.ReadFile(context.Background(), f, "a.txt"); err != nil || string(got) != strconv.Itoa(i) {
				t.Fatalf("backend %d: %q, %v", i, got, err)
			}
		}
		perRoot := 1
		if o.forceRoot {
			perRoot = 2 // the O_PATH descriptor and the os.Root
		}
		if grown, bound := openDescriptors(t)-before, roots.limit()*perRoot; grown > bound {
			t.Fatalf("%d backends hold %d more descriptors, want at most the pool's %d", n, grown, bound)
		}
	})
}

// TestRootReopenedMustBeSame lets the pool give a root back, then
// replaces the root path: the backend refuses to serve the other
// directory.
func TestRootReopenedMustBeSame(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		parent := t.TempDir()
		root := filepath.Join(parent, "root")
		makeTree(t, parent, tree{"root/a.txt": "inside", "other/a.txt": "other"})
		f := openTestFS(t, o, root)
		roots.shed()
		if err := os.Rename(root, filepath.Join(parent, "moved")); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(parent, "other"), root); err != nil {
			t.Fatal(err)
		}
		got, err := backend.ReadFile(context.Background(), f, "a.txt")
		if !errors.Is(err, errRootMoved) {
			t.Fatalf("read %q, %v; want %v", got, err, errRootMoved)
		}
	})
}

// openDescriptors counts the process's open descriptors.
func openDescriptors(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestDescriptorLimit runs a process with a limit of 64 descriptors and
// 300 backends, takes every descriptor left, and gives them back: the
// backends work under the limit (the pool bounds its roots), degrade
// (an idle root given back makes room for a call), fail with a true
// error when nothing is left, and recover once descriptors are free.
func TestDescriptorLimit(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		base := t.TempDir()
		for i := range fdLimitBackends {
			makeTree(t, filepath.Join(base, strconv.Itoa(i)), tree{"a.txt": strconv.Itoa(i)})
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"=fdlimit", "HELPER_ROOT="+base, fmt.Sprintf("HELPER_FALLBACK=%v", o.forceRoot))
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.HasSuffix(string(out), "ok\n") {
			t.Fatalf("helper: %v\n%s", err, out)
		}
		t.Logf("%s", out)
	})
}

// fdLimitBackends is how many backends TestDescriptorLimit's process opens.
const fdLimitBackends = 300

// runFDLimitHelper is the "fdlimit" role of TestDescriptorLimit.
func runFDLimitHelper() error {
	rl := unix.Rlimit{Cur: 64, Max: 64}
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return err
	}
	ctx := context.Background()
	base := os.Getenv("HELPER_ROOT")
	fss := make([]*FS, fdLimitBackends)
	read := func(i int) error {
		got, err := backend.ReadFile(ctx, fss[i], "a.txt")
		if err == nil && string(got) != strconv.Itoa(i) {
			err = fmt.Errorf("backend %d read %q", i, got)
		}
		return err
	}
	for i := range fss {
		f, err := newFS(filepath.Join(base, strconv.Itoa(i)), os.Getenv("HELPER_FALLBACK") == "true")
		if err != nil {
			return fmt.Errorf("opening backend %d under the limit: %w", i, err)
		}
		fss[i] = f
	}
	for i := range fss {
		if err := read(i); err != nil {
			return fmt.Errorf("under the limit: %w", err)
		}
	}
	fmt.Printf("%d backends read with a limit of 64 descriptors, the pool keeps %d roots\n", len(fss), roots.limit())
	var hog []int
	fill := func() {
		for {
			fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				return
			}
			hog = append(hog, fd)
		}
	}
	fill()
	if err := read(0); err != nil {
		return fmt.Errorf("with every descriptor taken, a read did not get an idle root's: %w", err)
	}
	fill()
	err := read(1)
	if !errors.Is(err, unix.EMFILE) || !strings.Contains(err.Error(), "no file descriptor left") {
		return fmt.Errorf("with no descriptor left: %v, want EMFILE saying so", err)
	}
	fmt.Printf("no descriptor left: %v\n", err)
	set, terr := tools.New(fss[2], tools.Options{})
	if terr != nil {
		return terr
	}
	args, _ := json.Marshal(map[string]string{"path": "a.txt"})
	_, err = set.Call(ctx, "read_file", args)
	if err == nil || strings.Contains(err.Error(), "could not be reached") {
		return fmt.Errorf("read_file with no descriptor left: %v", err)
	}
	fmt.Printf("read_file: %v\n", err)
	for _, fd := range hog {
		unix.Close(fd)
	}
	for i := range fss {
		if err := read(i); err != nil {
			return fmt.Errorf("after the descriptors were given back: %w", err)
		}
	}
	fmt.Println("ok")
	return nil
}
