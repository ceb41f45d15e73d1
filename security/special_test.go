package security

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/afero"
	"golang.org/x/sys/unix"

	"github.com/fencefs/fencefs/aferoadapter"
	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/tools"
)

// specialWant is the refusal each direct tool owes a FIFO, socket or
// device (tool-contract §8); walkers may answer either way but must skip
// the file.
var specialWant = map[string]string{
	readFile:        "File not found: ",
	editFile:        "File not found: ",
	fileInfo:        "is not a regular file or directory.",
	writeFile:       "exists and is not a regular file.",
	listDirectory:   "Not a directory: ",
	createDirectory: "exists and is not a directory.",
}

// watchdog bounds a call that could block in the kernel (a FIFO opened
// for reading without a writer): past it the test unblocks the call and
// fails.
const watchdog = 10 * time.Second

// boundedCall runs a tool call with a deadline of its own; when the call
// has not returned by the watchdog, unblock is called (it must make the
// call return) and the test fails.
func boundedCall(t *testing.T, s *tools.Set, tool string, args any, deadline time.Duration, unblock func()) (string, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := s.Call(ctx, tool, raw)
		done <- result{out, err}
	}()
	timer := time.NewTimer(deadline + watchdog)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.out, r.err
	case <-timer.C:
		t.Errorf("%s %s: no answer %s after its deadline of %s: it blocks or ignores its context", tool, raw, watchdog, deadline)
		unblock()
		r := <-done
		return r.out, r.err
	}
}

// TestSpecialFiles aims every tool at FIFOs, a socket and device nodes
// inside the root, directly and through walks: direct tools refuse them
// with a retryable error and never block, nothing is ever written into a
// FIFO, and walkers skip them.
func TestSpecialFiles(t *testing.T) {
	mk := func(s secrets) layout {
		l := baseLayout(s)
		l["ws/fifo"] = fifo()
		l["ws/sub/fifo2"] = fifo()
		return l
	}
	forWorlds(t, linkKinds, mk, func(t *testing.T, w *world) {
		names := []string{"fifo", "sub/fifo2"}
		var reader *os.File
		if w.hostRoot != "" {
			names = append(names, makeSocket(t, w.hostRoot))
			names = append(names, makeDevices(t, w.hostRoot)...)
			// A reader on the FIFO would receive anything a tool wrote
			// into it.
			var err error
			reader, err = os.OpenFile(filepath.Join(w.hostRoot, "fifo"), os.O_RDONLY|syscall.O_NONBLOCK, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer reader.Close()
		}
		unblock := func() {
			if w.hostRoot == "" {
				return
			}
			for _, n := range []string{"fifo", "sub/fifo2"} {
				if f, err := os.OpenFile(filepath.Join(w.hostRoot, n), os.O_RDWR, 0); err == nil {
					defer f.Close()
				}
			}
		}
		t.Logf("special files: %q", names)
		s := w.set(t, tools.Options{})
		state := w.snap(t)
		for _, name := range names {
			for _, tool := range tools.AllTools() {
				out, err := boundedCall(t, s, tool, pathArgs(tool, name), callTimeout, unblock)
				label := w.kind + " " + tool + " " + name
				want, direct := specialWant[tool]
				switch {
				case err != nil && !tools.IsRetry(err):
					t.Errorf("%s: fatal error %v", label, err)
				case direct && err == nil:
					t.Errorf("%s: succeeded with %q; want a refusal", label, clip(out))
				case direct && !strings.Contains(err.Error(), want):
					t.Errorf("%s: refusal %q does not say %q", label, err, want)
				case !direct && err == nil && out != "No matches found." && out != "No files found.":
					t.Errorf("%s: %q; want nothing found", label, clip(out))
				}
			}
		}
		for _, tool := range walkers {
			out, err := boundedCall(t, s, tool, pathArgs(tool, "."), callTimeout, unblock)
			if err != nil {
				t.Errorf("%s %s .: %v", w.kind, tool, err)
			}
			for _, n := range names {
				if _, base := backend.Split(n); strings.Contains(out, base) {
					t.Errorf("%s %s . lists the special file %s:\n%s", w.kind, tool, n, clip(out))
				}
			}
		}
		after := w.snap(t)
		w.checkChanges(t, w.kind+" special files", state, after, true)
		if reader != nil {
			buf := make([]byte, 64)
			if n, _ := reader.Read(buf); n > 0 {
				t.Errorf("a tool wrote %q into the FIFO", buf[:n])
			}
		}
	})
}

// makeSocket binds a Unix socket in dir and returns its name.
func makeSocket(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "sock")
	ln, err := net.Listen("unix", p)
	if err != nil {
		t.Fatalf("unix socket: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	return "sock"
}

// makeDevices creates device nodes in dir like /dev/null and /dev/zero
// (character) and a loop device (block), and returns their names. Where
// mknod is not permitted (no CAP_MKNOD), it logs why and returns none.
func makeDevices(t *testing.T, dir string) []string {
	t.Helper()
	devs := []struct {
		name         string
		mode         uint32
		major, minor uint32
	}{
		{"null", unix.S_IFCHR, 1, 3},
		{"zero", unix.S_IFCHR, 1, 5},
		{"loop", unix.S_IFBLK, 7, 0},
	}
	var names []string
	for _, d := range devs {
		err := unix.Mknod(filepath.Join(dir, d.name), d.mode|0o666, int(unix.Mkdev(d.major, d.minor)))
		if errors.Is(err, syscall.EPERM) {
			t.Logf("device nodes not tested: mknod %s: %v (needs CAP_MKNOD)", d.name, err)
			return names
		}
		if err != nil {
			t.Fatalf("mknod %s: %v", d.name, err)
		}
		names = append(names, d.name)
	}
	return names
}

// endless is a stream that never ends: it repeats chunk until stop is
// closed (then it fails), ignoring any context, as a hung or hostile
// storage stream would. withCtx makes it end with ctx's error instead,
// as a well-behaved backend stream does.
type endless struct {
	chunk   []byte
	ctx     context.Context
	withCtx bool
	stop    <-chan struct{}
}

var errStopped = errors.New("endless stream stopped by the test")

func (e *endless) Read(p []byte) (int, error) {
	select {
	case <-e.stop:
		return 0, errStopped
	default:
	}
	if e.withCtx && e.ctx.Err() != nil {
		return 0, e.ctx.Err()
	}
	n := 0
	for n < len(p) {
		n += copy(p[n:], e.chunk)
	}
	return n, nil
}

func (e *endless) Close() error { return nil }

// streamSpec describes an endless file.
type streamSpec struct {
	chunk   string
	withCtx bool
}

// streamFS serves files of an afero backend, except that the files named
// in streams (which exist as empty files, so they are listed and stat-ed
// with size 0) open as endless streams. Streams opened before a call to
// stopStreams end then.
type streamFS struct {
	*aferoadapter.FS
	streams map[string]streamSpec
	mu      sync.Mutex
	stop    chan struct{}
}

func (f *streamFS) OpenRead(ctx context.Context, name string) (backend.FileReader, error) {
	spec, ok := f.streams[name]
	if !ok {
		return f.FS.OpenRead(ctx, name)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stop == nil {
		f.stop = make(chan struct{})
	}
	return backend.NewFileReader(&endless{chunk: []byte(spec.chunk), ctx: ctx, withCtx: spec.withCtx, stop: f.stop}, backend.FileInfo{Name: name, Size: -1}), nil
}

// stopStreams ends every stream opened so far.
func (f *streamFS) stopStreams() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stop != nil {
		close(f.stop)
		f.stop = nil
	}
}

// newStreamSet returns a tool set over endless files made from specs.
func newStreamSet(t *testing.T, specs map[string]streamSpec) (*tools.Set, *streamFS, afero.Fs) {
	t.Helper()
	mem := afero.NewMemMapFs()
	for name := range specs {
		if err := afero.WriteFile(mem, "/"+name, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b := &streamFS{FS: aferoadapter.New(mem), streams: specs}
	t.Cleanup(b.stopStreams)
	s, err := tools.New(b, tools.Options{Tools: tools.AllTools(), MaxReadChars: 100_000, RequireRead: true})
	if err != nil {
		t.Fatal(err)
	}
	return s, b, mem
}

// TestEndlessStreams gives every tool files that report size 0 but stream
// forever (like a FUSE or proc file): as lines, as one endless line and
// as binary. Every call answers by its deadline (or with the deadline's
// error), no answer exceeds the caps, and nothing is written.
func TestEndlessStreams(t *testing.T) {
	endlessStreams(t, map[string]streamSpec{
		"lines.txt":   {"y\n", true},
		"oneline.txt": {"yyyyyyyy", true},
		"binary.bin":  {"\x00\x00", true},
	})
}

// endlessStreams runs the endless-stream attack on the files specs.
func endlessStreams(t *testing.T, specs map[string]streamSpec) {
	t.Helper()
	s, b, mem := newStreamSet(t, specs)
	const deadline = 300 * time.Millisecond
	const maxOut = 1 << 20
	check := func(label string, out string, err error) {
		t.Helper()
		if err != nil && !tools.IsRetry(err) && !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: %v; want an answer, a refusal or the deadline", label, err)
		}
		if len(out) > maxOut {
			t.Errorf("%s: %d bytes of output", label, len(out))
		}
	}
	for name := range specs {
		for _, tool := range tools.AllTools() {
			args := pathArgs(tool, name)
			switch tool {
			case readFile:
				args["limit"] = 10
			case writeFile:
				args["expected_hash"] = strings.Repeat("0", 12)
			case searchFiles, grepTool:
				args["pattern"] = "y"
			}
			out, err := boundedCall(t, s, tool, args, deadline, b.stopStreams)
			check(tool+" "+name, out, err)
		}
	}
	for _, tool := range walkers {
		args := pathArgs(tool, ".")
		if tool == searchFiles || tool == grepTool {
			args["pattern"] = "y"
		}
		out, err := boundedCall(t, s, tool, args, deadline, b.stopStreams)
		check(tool+" .", out, err)
	}
	for name := range specs {
		if fi, err := mem.Stat("/" + name); err != nil || fi.Size() != 0 {
			t.Errorf("%s was changed: %v", name, err)
		}
	}
}
