//go:build linux

package local

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fencefs/fencefs/backend"
)

// waitersOf returns how many writers of this process wait for the
// directory lock of dir: the one whose turn it is, when it waits for the
// flock, and those queued behind it.
func waitersOf(t *testing.T, dir string) int {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	dirLocks.mu.Lock()
	defer dirLocks.mu.Unlock()
	if l := dirLocks.locks[dirKey{uint64(st.Dev), st.Ino}]; l != nil {
		n := len(l.waiters)
		if l.pending != nil && l.pending.waiting {
			n++
		}
		return n
	}
	return 0
}

// lockedEntries returns how many directories the process's lock table
// holds.
func lockedEntries() int {
	dirLocks.mu.Lock()
	defer dirLocks.mu.Unlock()
	return len(dirLocks.locks)
}

// waitFor polls cond until it holds, failing after lockDeadline; it
// guards against a hang and measures nothing.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(lockDeadline); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s did not happen within %v", what, lockDeadline)
		}
	}
}

// holdLock starts a helper process that takes the flock of dir, as a
// fencefs writer in another process does, and returns a function that
// makes it let go and exit.
func holdLock(t *testing.T, dir string) (release func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=hold", "HELPER_ROOT="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "locked\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("lock holder: %q, %v", line, err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			stdin.Close()
			if err := cmd.Wait(); err != nil {
				t.Errorf("lock holder: %v", err)
			}
		})
	}
	t.Cleanup(release)
	return release
}

// runHoldHelper is the "hold" role: it takes the exclusive flock of the
// directory HELPER_ROOT, says so, and keeps it until stdin closes.
func runHoldHelper() int {
	fd, err := unix.Open(os.Getenv("HELPER_ROOT"), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := unix.Flock(fd, unix.LOCK_EX); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("locked")
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// TestCommitLockEndsByDeadline holds a directory's lock in another
// process while writers of this one commit into it with a deadline: each
// commit ends with its deadline, commits nothing and leaves no temporary
// file; once the other process lets go, a write goes through and the
// process keeps no lock state (no flock left pending).
func TestCommitLockEndsByDeadline(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		f, root := newTestFS(t, o)
		makeTree(t, root, tree{"d/a.txt": "old"})
		release := holdLock(t, filepath.Join(root, "d"))
		const writers = 4
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for i := range writers {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(20*(i+1))*time.Millisecond)
				defer cancel()
				w, err := f.OpenWrite(ctx, "d/a.txt", backend.WriteOptions{})
				if err != nil {
					errs[i] = err
					return
				}
				defer w.Close()
				fmt.Fprintf(w, "writer %d", i)
				errs[i] = w.Commit()
			})
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(lockDeadline):
			t.Fatalf("commits still wait %v after their deadlines", lockDeadline)
		}
		for i, err := range errs {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("writer %d: %v, want its deadline", i, err)
			}
		}
		if got := readHost(t, root, "d/a.txt"); got != "old" {
			t.Fatalf("a commit past its deadline changed the target: %q", got)
		}
		noTemps(t, root)
		release()
		w, err := f.OpenWrite(context.Background(), "d/a.txt", backend.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, "later")
		if err := w.Commit(); err != nil {
			t.Fatalf("a write after the other process let go: %v", err)
		}
		if got := readHost(t, root, "d/a.txt"); got != "later" {
			t.Fatalf("content %q after a later write", got)
		}
		if n := lockedEntries(); n != 0 {
			t.Fatalf("%d directories still in the lock table after every write ended", n)
		}
	})
}

// TestCommitLockFIFO queues writers one after another behind a lock held
// by another process; each presents the hash of the previous writer's
// content, so all of them commit only if they take their turns in the
// order they came.
func TestCommitLockFIFO(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		f, root := newTestFS(t, o)
		makeTree(t, root, tree{"d/a.txt": "v0"})
		dir := filepath.Join(root, "d")
		release := holdLock(t, dir)
		const writers = 8
		errs := make(chan error, writers)
		prev := "v0"
		for i := range writers {
			content := fmt.Sprintf("writer %d", i)
			w, err := f.OpenWrite(context.Background(), "d/a.txt", backend.WriteOptions{Precondition: backend.Precondition{MatchHash: sum(prev)}})
			if err != nil {
				t.Fatal(err)
			}
			io.WriteString(w, content)
			go func() {
				defer w.Close()
				if err := w.Commit(); err != nil {
					errs <- fmt.Errorf("%s: %w", content, err)
					return
				}
				errs <- nil
			}()
			// The first writer waits for the flock; each later one
			// queues behind it.
			waitFor(t, fmt.Sprintf("writer %d queueing", i), func() bool { return waitersOf(t, dir) == i+1 })
			prev = content
		}
		release()
		for range writers {
			select {
			case err := <-errs:
				if err != nil {
					t.Errorf("out of turn: %v", err)
				}
			case <-time.After(lockDeadline):
				t.Fatalf("writers still wait %v after the lock was let go", lockDeadline)
			}
		}
		if got := readHost(t, root, "d/a.txt"); got != prev {
			t.Fatalf("content %q, want %q", got, prev)
		}
		if n := lockedEntries(); n != 0 {
			t.Fatalf("%d directories still in the lock table", n)
		}
	})
}

// BenchmarkCommitContended commits small writes from 16 goroutines, all
// into one directory and spread over 16, and reports the commit latency
// percentiles: the tail of the one-directory case is what the lock's
// fairness decides.
func BenchmarkCommitContended(b *testing.B) {
	for _, spread := range []int{1, 16} {
		b.Run(fmt.Sprintf("dirs=%d", spread), func(b *testing.B) {
			root := b.TempDir()
			f := openTestFS(b, opener{"openat2", false}, root)
			const workers = 16
			var mu sync.Mutex
			var lat []time.Duration
			var wg sync.WaitGroup
			var next sync.Mutex
			n := 0
			b.ResetTimer()
			for w := range workers {
				wg.Go(func() {
					name := fmt.Sprintf("d%d/f%d", w%spread, w)
					ctx := context.Background()
					var mine []time.Duration
					for {
						next.Lock()
						if n >= b.N {
							next.Unlock()
							break
						}
						n++
						next.Unlock()
						start := time.Now()
						fw, err := f.OpenWrite(ctx, name, backend.WriteOptions{})
						if err != nil {
							b.Error(err)
							return
						}
						io.WriteString(fw, "content")
						if err := fw.Commit(); err != nil {
							b.Error(err)
							return
						}
						mine = append(mine, time.Since(start))
					}
					mu.Lock()
					lat = append(lat, mine...)
					mu.Unlock()
				})
			}
			wg.Wait()
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			if len(lat) == 0 {
				return
			}
			q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
			b.ReportMetric(q(0.5), "p50-ms")
			b.ReportMetric(q(0.99), "p99-ms")
			b.ReportMetric(float64(slices.Max(lat).Microseconds())/1000, "max-ms")
		})
	}
}
