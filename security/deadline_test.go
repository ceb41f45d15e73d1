package security

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/mounted"
	"github.com/fencefs/fencefs/tools"
)

// lockedWriteDeadline is the deadline of the writes TestLockedWriteEnds
// makes wait for a lock that is never released.
const lockedWriteDeadline = 300 * time.Millisecond

// TestLockedWriteEnds holds the lock another fencefs writer (in another
// process) takes on the target's directory while it commits, and calls
// every changing tool, directly and through a mount: each call ends by its
// deadline, and the target and the directory are exactly as before, so a
// write that ends while it waits commits nothing later.
func TestLockedWriteEnds(t *testing.T) {
	cases := []struct {
		tool string
		args func(prefix string) map[string]any
	}{
		{"write_file", func(p string) map[string]any { return map[string]any{"path": p + "d/a.txt", "content": "new\n"} }},
		{"write_file", func(p string) map[string]any { return map[string]any{"path": p + "d/b.txt", "content": "created\n"} }},
		{"edit_file", func(p string) map[string]any {
			return map[string]any{"path": p + "d/a.txt", "old_text": "old", "new_text": "new"}
		}},
	}
	for _, ns := range []string{"local", "mounted"} {
		t.Run(ns, func(t *testing.T) {
			root := t.TempDir()
			if err := os.MkdirAll(filepath.Join(root, "d"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "d", "a.txt"), []byte("old\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			fs, err := local.New(root)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { fs.Close() })
			var b backend.Backend = fs
			prefix := ""
			if ns == "mounted" {
				if b, err = mounted.New(map[string]backend.Backend{"ws": fs}); err != nil {
					t.Fatal(err)
				}
				prefix = "/ws/"
			}
			s, err := tools.New(b, tools.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cases {
				before := statDir(t, filepath.Join(root, "d"))
				lock := lockDir(t, filepath.Join(root, "d"))
				args := c.args(prefix)
				start := time.Now()
				out, err := boundedCall(t, s, c.tool, args, lockedWriteDeadline, func() { unix.Flock(lock, unix.LOCK_UN) })
				if err == nil {
					t.Errorf("%s %v succeeded while the lock was held: %q", c.tool, args, out)
				}
				t.Logf("%s %v ended after %v: %v", c.tool, args, time.Since(start).Round(time.Millisecond), err)
				unix.Flock(lock, unix.LOCK_UN)
				unix.Close(lock)
				if d := before.diff(statDir(t, filepath.Join(root, "d"))); len(d) > 0 {
					t.Errorf("%s %v ended by its deadline but changed %q", c.tool, args, d)
				}
			}
		})
	}
}

// lockDir takes the exclusive lock a fencefs writer takes on dir while it
// commits, as another process would hold it.
func lockDir(t *testing.T, dir string) int {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(fd, unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	return fd
}
