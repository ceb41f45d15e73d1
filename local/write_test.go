//go:build linux

package local

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fencefs/fencefs/backend"
)

// sum returns the lowercase hex SHA-256 of s.
func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// readHost returns the content of the host file root/name.
func readHost(t *testing.T, root, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// noTemps fails if any temporary file is left below root.
func noTemps(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".fencefs-") {
			t.Errorf("temporary file left behind: %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestWrite(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		outside := t.TempDir()
		makeTree(t, outside, tree{"secret": "canary"})
		tests := []struct {
			name string
			opts backend.WriteOptions
			err  error
		}{
			{"new.txt", backend.WriteOptions{}, nil},
			{"a.txt", backend.WriteOptions{}, nil},
			{"deep/new/dirs/file.txt", backend.WriteOptions{}, nil},
			{"dir/" + long(230), backend.WriteOptions{}, nil},
			{long(255), backend.WriteOptions{}, nil},
			{long(256), backend.WriteOptions{}, backend.ErrNameTooLong},
			{".", backend.WriteOptions{}, backend.ErrIsDir},
			{"dir", backend.WriteOptions{}, backend.ErrIsDir},
			{"link.txt", backend.WriteOptions{}, backend.ErrNotRegular},
			{"fifo", backend.WriteOptions{}, backend.ErrNotRegular},
			{"sock", backend.WriteOptions{}, backend.ErrNotRegular},
			{"escape", backend.WriteOptions{}, backend.ErrNotRegular},
			{"linkdir/x.txt", backend.WriteOptions{}, backend.ErrSymlink},
			{"escape/secret", backend.WriteOptions{}, backend.ErrSymlink},
			{"escape/new/x", backend.WriteOptions{}, backend.ErrSymlink},
			{"a.txt/x", backend.WriteOptions{}, backend.ErrNotDir},
			{"a.txt/x/y", backend.WriteOptions{}, backend.ErrNotDir},
			{"c.txt", backend.WriteOptions{Precondition: backend.Precondition{CreateOnly: true}}, nil},
			{"a.txt", backend.WriteOptions{Precondition: backend.Precondition{CreateOnly: true}}, fs.ErrExist},
			{"a.txt", backend.WriteOptions{Precondition: backend.Precondition{MatchHash: sum("hello")}}, nil},
			{"a.txt", backend.WriteOptions{Precondition: backend.Precondition{MatchHash: strings.ToUpper(sum("hello"))}}, nil},
			{"a.txt", backend.WriteOptions{Precondition: backend.Precondition{MatchHash: sum("other")}}, backend.ErrPrecondition},
			{"a.txt", backend.WriteOptions{Precondition: backend.Precondition{MatchHash: sum("hello")[:12]}}, backend.ErrPrecondition},
			{"c.txt", backend.WriteOptions{Precondition: backend.Precondition{MatchHash: sum("")}}, backend.ErrPrecondition},
			{"a.txt", backend.WriteOptions{Precondition: backend.Precondition{MatchVersion: "v1"}}, errors.ErrUnsupported},
		}
		for _, tt := range tests {
			t.Run(tt.name[:min(len(tt.name), 20)], func(t *testing.T) {
				f, root := newTestFS(t, o)
				makeTree(t, root, tree{"a.txt": "hello", "dir/": "", "link.txt": "->a.txt", "linkdir": "->dir",
					"fifo": "|fifo", "sock": "|sock", "escape": "->" + outside})
				err := backend.WriteFile(context.Background(), f, tt.name, []byte("new content"), tt.opts)
				wantErr(t, err, tt.err, tt.name, root)
				if err == nil {
					if got := readHost(t, root, tt.name); got != "new content" {
						t.Errorf("content %q after write", got)
					}
				} else if tt.name == "a.txt" {
					if got := readHost(t, root, "a.txt"); got != "hello" {
						t.Errorf("failed write changed the target to %q", got)
					}
				}
				noTemps(t, root)
				if got := readHost(t, outside, "secret"); got != "canary" {
					t.Errorf("outside file changed to %q", got)
				}
				if entries, _ := os.ReadDir(outside); len(entries) != 1 {
					t.Errorf("outside directory changed: %v", entries)
				}
			})
		}
	})
}

// TestWriteTargetChangesBeforeCommit replaces the target with something
// that is not a regular file between OpenWrite and Commit.
func TestWriteTargetChangesBeforeCommit(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		tests := []struct {
			name    string
			replace func(p string) error
			err     error
		}{
			{"directory", func(p string) error { os.Remove(p); return os.Mkdir(p, 0o755) }, backend.ErrIsDir},
			{"symlink", func(p string) error { os.Remove(p); return os.Symlink("/etc/passwd", p) }, backend.ErrNotRegular},
			{"fifo", func(p string) error { os.Remove(p); return unix.Mkfifo(p, 0o644) }, backend.ErrNotRegular},
			{"created", func(p string) error { return os.WriteFile(p, []byte("other"), 0o644) }, fs.ErrExist},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				f, root := newTestFS(t, o)
				opts := backend.WriteOptions{}
				if tt.name == "created" {
					opts.Precondition.CreateOnly = true
				} else {
					makeTree(t, root, tree{"t.txt": "old"})
				}
				w, err := f.OpenWrite(context.Background(), "t.txt", opts)
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
				if _, err := io.WriteString(w, "new"); err != nil {
					t.Fatal(err)
				}
				if err := tt.replace(filepath.Join(root, "t.txt")); err != nil {
					t.Fatal(err)
				}
				wantErr(t, w.Commit(), tt.err, "t.txt", root)
				noTemps(t, root)
			})
		}
	})
}

func TestWriteKeepsMode(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		for _, perm := range []fs.FileMode{0o600, 0o640, 0o755, 0o444, 0o700} {
			f, root := newTestFS(t, o)
			p := filepath.Join(root, "f")
			makeTree(t, root, tree{"f": "old"})
			if err := os.Chmod(p, perm); err != nil {
				t.Fatal(err)
			}
			w, err := f.OpenWrite(context.Background(), "f", backend.WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// The temporary file has the target's mode before any byte lands.
			if got := tempModes(t, root); len(got) != 1 || got[0] != perm {
				t.Errorf("temporary file modes %v, want [%v]", got, perm)
			}
			if _, err := io.WriteString(w, "new"); err != nil {
				t.Fatal(err)
			}
			if err := w.Commit(); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(p)
			if err != nil || fi.Mode().Perm() != perm {
				t.Errorf("mode after write %v (%v), want %v", fi.Mode(), err, perm)
			}
		}
	})
}

// tempModes returns the permissions of the temporary files in root.
func tempModes(t *testing.T, root string) []fs.FileMode {
	t.Helper()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var modes []fs.FileMode
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".fencefs-") {
			fi, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			modes = append(modes, fi.Mode().Perm())
		}
	}
	return modes
}

// TestWriteUmask changes the process umask, so it must not run in
// parallel with tests that create files.
func TestWriteUmask(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		for _, mask := range []int{0o022, 0o077, 0o002, 0} {
			f, root := newTestFS(t, o)
			old := unix.Umask(mask)
			err := backend.WriteFile(context.Background(), f, "sub/new.txt", []byte("x"), backend.WriteOptions{})
			unix.Umask(old)
			if err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(filepath.Join(root, "sub/new.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if want := fs.FileMode(0o666 &^ mask); fi.Mode().Perm() != want {
				t.Errorf("umask %03o: file mode %v, want %v", mask, fi.Mode().Perm(), want)
			}
			di, err := os.Stat(filepath.Join(root, "sub"))
			if err != nil {
				t.Fatal(err)
			}
			if want := fs.FileMode(0o777 &^ mask); di.Mode().Perm() != want {
				t.Errorf("umask %03o: directory mode %v, want %v", mask, di.Mode().Perm(), want)
			}
		}
	})
}

func TestWriteAbandoned(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		f, root := newTestFS(t, o)
		makeTree(t, root, tree{"a.txt": "old"})
		w, err := f.OpenWrite(context.Background(), "a.txt", backend.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, "new"); err != nil {
			t.Fatal(err)
		}
		if len(tempModes(t, root)) != 1 {
			t.Fatal("no temporary file while writing")
		}
		if got := readHost(t, root, "a.txt"); got != "old" {
			t.Fatalf("target changed before Commit: %q", got)
		}
		assertNoPendingListed(t, f)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		if got := readHost(t, root, "a.txt"); got != "old" {
			t.Fatalf("abandoned write changed the target: %q", got)
		}
		noTemps(t, root)
		wantErr(t, w.Commit(), fs.ErrClosed, "a.txt", root)
		_, err = w.Write([]byte("x"))
		wantErr(t, err, fs.ErrClosed, "a.txt", root)
	})
}

func TestWriteCommitTwice(t *testing.T) {
	f, root := newTestFS(t, openers()[0])
	w, err := f.OpenWrite(context.Background(), "a.txt", backend.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	wantErr(t, w.Commit(), fs.ErrClosed, "a.txt", root)
	if err := w.Close(); err != nil {
		t.Fatalf("Close after Commit: %v", err)
	}
	if got := readHost(t, root, "a.txt"); got != "" {
		t.Fatalf("content %q, want empty", got)
	}
}

func TestWriteCancelledBeforeCommit(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		f, root := newTestFS(t, o)
		makeTree(t, root, tree{"a.txt": "old"})
		ctx, cancel := context.WithCancel(context.Background())
		w, err := f.OpenWrite(ctx, "a.txt", backend.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if _, err := io.WriteString(w, "new"); err != nil {
			t.Fatal(err)
		}
		cancel()
		_, err = w.Write([]byte("more"))
		wantErr(t, err, context.Canceled, "a.txt", root)
		wantErr(t, w.Commit(), context.Canceled, "a.txt", root)
		if got := readHost(t, root, "a.txt"); got != "old" {
			t.Fatalf("cancelled write changed the target: %q", got)
		}
		noTemps(t, root)
	})
}

// doneWatch is a context that reports the first time its Done channel is
// asked for: a commit asks only once it waits for the directory lock.
type doneWatch struct {
	context.Context
	once  sync.Once
	asked chan struct{}
}

func (c *doneWatch) Done() <-chan struct{} {
	c.once.Do(func() { close(c.asked) })
	return c.Context.Done()
}

// TestCommitWaitsForLockWithContext holds the directory lock another
// writer (another process) would hold, and cancels a commit waiting for
// it: the commit ends, and the target and the directory are as before.
func TestCommitWaitsForLockWithContext(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		f, root := newTestFS(t, o)
		makeTree(t, root, tree{"d/a.txt": "old"})
		lock, err := unix.Open(filepath.Join(root, "d"), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(lock)
		if err := unix.Flock(lock, unix.LOCK_EX); err != nil {
			t.Fatal(err)
		}
		parent, cancel := context.WithCancel(context.Background())
		defer cancel()
		ctx := &doneWatch{Context: parent, asked: make(chan struct{})}
		w, err := f.OpenWrite(ctx, "d/a.txt", backend.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if _, err := io.WriteString(w, "new"); err != nil {
			t.Fatal(err)
		}
		committed := make(chan error, 1)
		go func() { committed <- w.Commit() }()
		select {
		case <-ctx.asked:
		case err := <-committed:
			t.Fatalf("Commit returned %v while another writer held the lock", err)
		case <-time.After(lockDeadline):
			t.Fatalf("Commit did not wait for the lock with its context within %v", lockDeadline)
		}
		cancel()
		select {
		case err := <-committed:
			wantErr(t, err, context.Canceled, "d/a.txt", root)
		case <-time.After(lockDeadline):
			t.Fatalf("Commit still waits for the lock %v after its context ended", lockDeadline)
		}
		if got := readHost(t, root, "d/a.txt"); got != "old" {
			t.Fatalf("the cancelled commit changed the target: %q", got)
		}
		noTemps(t, root)
		unix.Flock(lock, unix.LOCK_UN)
		w2, err := f.OpenWrite(context.Background(), "d/a.txt", backend.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w2, "later")
		if err := w2.Commit(); err != nil {
			t.Fatalf("a write after the lock was released: %v", err)
		}
		if got := readHost(t, root, "d/a.txt"); got != "later" {
			t.Fatalf("content %q after a later write", got)
		}
	})
}

// lockDeadline bounds the waits of TestCommitWaitsForLockWithContext; it
// guards against a hang and measures nothing.
const lockDeadline = 10 * time.Second

// TestCASGoroutines starts writers presenting the same MatchHash at once:
// exactly one may commit.
func TestCASGoroutines(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		f, root := newTestFS(t, o)
		for round := range 4 {
			// A large target makes the hash check slow, which widens the
			// window an unlocked check-then-rename would lose.
			old := strings.Repeat(fmt.Sprint(round), 2<<20)
			makeTree(t, root, tree{"c.txt": old})
			casRound(t, f, root, "c.txt", sum(old))
		}
	})
}

// casRound lets 16 writers holding hash commit name at once and checks
// that exactly one did.
func casRound(t *testing.T, f *FS, root, name, hash string) {
	t.Helper()
	const writers = 16
	opts := backend.WriteOptions{Precondition: backend.Precondition{MatchHash: hash}}
	ws := make([]backend.FileWriter, writers)
	for i := range ws {
		w, err := f.OpenWrite(context.Background(), name, opts)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(w, "writer %d", i)
		ws[i] = w
	}
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Go(func() { errs[i] = w.Commit() })
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("writers %d and %d both committed", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, backend.ErrPrecondition):
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer committed")
	}
	if got, want := readHost(t, root, name), fmt.Sprintf("writer %d", winner); got != want {
		t.Fatalf("content %q, want %q", got, want)
	}
	noTemps(t, root)
}

// TestCASProcesses runs the compare-and-swap race across processes: each
// helper opens its write, reports ready, and commits when its stdin
// closes, so all commits start together.
func TestCASProcesses(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		const writers = 6
		_, root := newTestFS(t, o)
		makeTree(t, root, tree{"c.txt": "v0"})
		type helper struct {
			cmd   *exec.Cmd
			stdin io.WriteCloser
			out   *bufio.Reader
		}
		hs := make([]helper, writers)
		for i := range hs {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), helperEnv+"=cas", "HELPER_ROOT="+root,
				fmt.Sprintf("HELPER_ID=%d", i), fmt.Sprintf("HELPER_FALLBACK=%v", o.forceRoot), "HELPER_HASH="+sum("v0"))
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
			hs[i] = helper{cmd, stdin, bufio.NewReader(stdout)}
		}
		for i, h := range hs {
			if line, err := h.out.ReadString('\n'); line != "ready\n" {
				t.Fatalf("helper %d: %q, %v", i, line, err)
			}
		}
		for _, h := range hs {
			h.stdin.Close()
		}
		wins := 0
		for i, h := range hs {
			line, _ := h.out.ReadString('\n')
			if err := h.cmd.Wait(); err != nil {
				t.Fatalf("helper %d: %v", i, err)
			}
			switch line {
			case "committed\n":
				wins++
			case "precondition\n":
			default:
				t.Fatalf("helper %d: %q", i, line)
			}
		}
		if wins != 1 {
			t.Fatalf("%d processes committed, want exactly 1", wins)
		}
		if got := readHost(t, root, "c.txt"); !strings.HasPrefix(got, "process ") {
			t.Fatalf("content %q", got)
		}
		noTemps(t, root)
	})
}

// runHelper runs the subprocess role of a test and returns its exit code.
func runHelper(role string) int {
	switch role {
	case "cas":
	case "hold":
		return runHoldHelper()
	case "fdlimit":
		if err := runFDLimitHelper(); err != nil {
			fmt.Println(err)
			return 1
		}
		return 0
	default:
		fmt.Fprintln(os.Stderr, "unknown helper role", role)
		return 2
	}
	f, err := newFS(os.Getenv("HELPER_ROOT"), os.Getenv("HELPER_FALLBACK") == "true")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer f.Close()
	opts := backend.WriteOptions{Precondition: backend.Precondition{MatchHash: os.Getenv("HELPER_HASH")}}
	w, err := f.OpenWrite(context.Background(), "c.txt", opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer w.Close()
	fmt.Fprintf(w, "process %s", os.Getenv("HELPER_ID"))
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin) // returns when the test closes stdin
	switch err := w.Commit(); {
	case err == nil:
		fmt.Println("committed")
	case errors.Is(err, backend.ErrPrecondition):
		fmt.Println("precondition")
	default:
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func TestMkdirAll(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		outside := t.TempDir()
		tests := []struct {
			dir string
			err error
		}{
			{".", nil},
			{"dir", nil},
			{"dir/sub", nil},
			{"new", nil},
			{"new/a/b/c", nil},
			{long(255) + "/x", nil},
			{long(256), backend.ErrNameTooLong},
			{"file", fs.ErrExist},
			{"file/x", backend.ErrNotDir},
			{"linkdir", fs.ErrExist},
			{"linkdir/x", backend.ErrSymlink},
			{"escape/x", backend.ErrSymlink},
			{"dir/linkdir/x", backend.ErrSymlink},
			{"fifo/x", backend.ErrNotDir},
		}
		for _, tt := range tests {
			f, root := newTestFS(t, o)
			makeTree(t, root, tree{"dir/sub/": "", "file": "x", "linkdir": "->dir", "dir/linkdir": "->../dir",
				"escape": "->" + outside, "fifo": "|fifo"})
			err := f.MkdirAll(context.Background(), tt.dir)
			wantErr(t, err, tt.err, tt.dir, root)
			if err == nil {
				if fi, err := os.Lstat(filepath.Join(root, tt.dir)); err != nil || !fi.IsDir() {
					t.Errorf("MkdirAll(%q): no directory afterwards (%v)", tt.dir, err)
				}
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Fatalf("MkdirAll(%q) created %v outside the root", tt.dir, entries)
			}
		}
	})
}

// assertNoPendingListed fails if List or Walk of the root shows a pending
// write's temporary file.
func assertNoPendingListed(t *testing.T, f *FS) {
	t.Helper()
	ctx := context.Background()
	entries, err := f.List(ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if isPendingName(e.Name) {
			t.Errorf("List shows pending write %q", e.Name)
		}
	}
	err = f.Walk(ctx, ".", func(name string, _ backend.DirEntry) error {
		if isPendingName(name) {
			t.Errorf("Walk shows pending write %q", name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestIsPendingName(t *testing.T) {
	for name, want := range map[string]bool{
		".fencefs-0123abcd.tmp":  true,
		".fencefs-0123ABCD.tmp":  false,
		".fencefs-0123abc.tmp":   false,
		".fencefs-0123abcde.tmp": false,
		".fencefs-0123abcd.tmpx": false,
		"fencefs-0123abcd.tmp":   false,
		"notes.tmp":              false,
	} {
		if got := isPendingName(name); got != want {
			t.Errorf("isPendingName(%q) = %v, want %v", name, got, want)
		}
		// The declared pattern says the same.
		if got := regexp.MustCompile(stagingPattern).MatchString(name); got != want {
			t.Errorf("stagingPattern matches %q: %v, want %v", name, got, want)
		}
	}
}
