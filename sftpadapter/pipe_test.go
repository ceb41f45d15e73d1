package sftpadapter

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/pkg/sftp"
)

// These tests talk to pkg/sftp's in-memory request server over an
// in-process pipe. They cover what a real OpenSSH server cannot be made
// to do (return names with slashes) and the connection handling, quickly
// and without Docker; the suite in conformance/containers runs everything
// against a real sshd.

// pipeFS returns an FS rooted at "/" of a server with handlers h. dials
// counts the connections made.
func pipeFS(t testing.TB, h sftp.Handlers) (f *FS, dials *atomic.Int32) {
	t.Helper()
	dials = new(atomic.Int32)
	f = &FS{dialTO: time.Second, dialing: make(chan struct{}, 1), orphans: map[string]struct{}{}}
	f.dialSession = func(ctx context.Context) (*session, error) {
		dials.Add(1)
		c, s := net.Pipe()
		srv := sftp.NewRequestServer(s, h)
		go srv.Serve()
		t.Cleanup(func() { srv.Close() })
		return newSession(c, c, func() { c.Close() })
	}
	if err := f.start(context.Background(), "/"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, dials
}

// fakeInfo is a directory entry a hostile server makes up.
type fakeInfo struct {
	name string
	mode fs.FileMode
}

func (i fakeInfo) Name() string       { return i.name }
func (i fakeInfo) Size() int64        { return 1 }
func (i fakeInfo) Mode() fs.FileMode  { return i.mode }
func (i fakeInfo) ModTime() time.Time { return time.Unix(1, 0) }
func (i fakeInfo) IsDir() bool        { return i.mode.IsDir() }
func (i fakeInfo) Sys() any           { return nil }

// listerAt serves a fixed listing.
type listerAt []os.FileInfo

func (l listerAt) ListAt(out []os.FileInfo, off int64) (int, error) {
	if off >= int64(len(l)) {
		return 0, io.EOF
	}
	n := copy(out, l[off:])
	if n < len(out) {
		return n, io.EOF
	}
	return n, nil
}

// listerFunc lets a test intercept the lister of the in-memory server.
type listerFunc func(r *sftp.Request) (sftp.ListerAt, error)

func (f listerFunc) Filelist(r *sftp.Request) (sftp.ListerAt, error) { return f(r) }

func TestListSkipsHostileNames(t *testing.T) {
	h := sftp.InMemHandler()
	mem := h.FileList
	h.FileList = listerFunc(func(r *sftp.Request) (sftp.ListerAt, error) {
		if r.Method == "List" && r.Filepath == "/evil" {
			return listerAt{
				fakeInfo{"ok", 0o644},
				fakeInfo{"x/ok", 0o644}, // pkg/sftp alone would list it as "ok"
				fakeInfo{"../../etc/passwd", 0o644},
				fakeInfo{"sub/", fs.ModeDir | 0o755},
				fakeInfo{"/", fs.ModeDir | 0o755},
				fakeInfo{"a\x00b", 0o644},
				fakeInfo{"", 0o644},
				fakeInfo{"..", fs.ModeDir | 0o755},
				fakeInfo{"~home", 0o644},
				fakeInfo{`back\slash`, 0o644},
				fakeInfo{"new\nline", 0o644},
			}, nil
		}
		return mem.Filelist(r)
	})
	f, _ := pipeFS(t, h)
	ctx := context.Background()
	if err := f.MkdirAll(ctx, "evil"); err != nil {
		t.Fatal(err)
	}
	entries, err := f.List(ctx, "evil")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name)
	}
	slices.Sort(names)
	if want := []string{"new\nline", "ok"}; !slices.Equal(names, want) {
		t.Errorf("List = %q, want %q", names, want)
	}
	var walked []string
	err = f.Walk(ctx, ".", func(name string, _ backend.DirEntry) error {
		walked = append(walked, name)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"evil", "evil/new\nline", "evil/ok"}; !slices.Equal(walked, want) {
		t.Errorf("Walk = %q, want %q", walked, want)
	}
}

// blockingHandlers returns in-memory handlers whose Stat of "/slow"
// waits until release is closed.
func blockingHandlers(release <-chan struct{}) sftp.Handlers {
	h := sftp.InMemHandler()
	mem := h.FileList
	h.FileList = listerFunc(func(r *sftp.Request) (sftp.ListerAt, error) {
		if r.Filepath == "/slow" {
			<-release
		}
		return mem.Filelist(r)
	})
	return h
}

func TestDeadlineAbortsAndNextCallRedials(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	f, dials := pipeFS(t, blockingHandlers(release))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := f.Stat(ctx, "slow")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stat on a stuck server = %v, want the deadline", err)
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != "slow" {
		t.Errorf("error %v does not name the storage path", err)
	}
	if err := f.MkdirAll(context.Background(), "after"); err != nil {
		t.Fatalf("call after the abort: %v", err)
	}
	if got := dials.Load(); got != 2 {
		t.Errorf("%d dials, want 2 (the abort drops the connection)", got)
	}
}

func TestOpTimeoutBoundsEveryCall(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	f, _ := pipeFS(t, blockingHandlers(release))
	f.opTO = 50 * time.Millisecond
	if _, err := f.Stat(context.Background(), "slow"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stat = %v, want the operation timeout", err)
	}
}

func TestBrokenConnectionRedialsAndRetriesReads(t *testing.T) {
	f, dials := pipeFS(t, sftp.InMemHandler())
	ctx := context.Background()
	if err := backend.WriteFile(ctx, f, "a.txt", []byte("x"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Break the transport behind the FS's back, as a server restart does.
	f.mu.Lock()
	s := f.cur
	f.mu.Unlock()
	s.abort()
	<-s.dead
	if _, err := f.Stat(ctx, "a.txt"); err != nil {
		t.Fatalf("Stat after the connection broke: %v", err)
	}
	if got := dials.Load(); got != 2 {
		t.Errorf("%d dials, want 2", got)
	}
}

func TestClosedFS(t *testing.T) {
	f, _ := pipeFS(t, sftp.InMemHandler())
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Stat(context.Background(), "."); !errors.Is(err, errClosed) {
		t.Errorf("Stat after Close = %v", err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

func TestEndedContextKeepsConnection(t *testing.T) {
	f, dials := pipeFS(t, sftp.InMemHandler())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.Stat(ctx, "."); !errors.Is(err, context.Canceled) {
		t.Fatalf("Stat with an ended context = %v", err)
	}
	if _, err := f.Stat(context.Background(), "."); err != nil {
		t.Fatal(err)
	}
	if got := dials.Load(); got != 1 {
		t.Errorf("%d dials: a call that never started must not drop the connection", got)
	}
}

// readerFunc lets a test intercept the reads of the in-memory server.
type readerFunc func(r *sftp.Request) (io.ReaderAt, error)

func (f readerFunc) Fileread(r *sftp.Request) (io.ReaderAt, error) { return f(r) }

// stallingReaderAt serves the first limit bytes of data and then waits
// for release, like a server that hangs mid-transfer.
type stallingReaderAt struct {
	data    []byte
	limit   int64
	release <-chan struct{}
}

func (s stallingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= s.limit {
		<-s.release
		return 0, io.ErrUnexpectedEOF
	}
	return bytes.NewReader(s.data[:s.limit]).ReadAt(p, off)
}

func TestOpTimeoutIsIdleTimeoutForCopies(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	h := sftp.InMemHandler()
	mem := h.FileGet
	h.FileGet = readerFunc(func(r *sftp.Request) (io.ReaderAt, error) {
		if r.Filepath == "/big" {
			return stallingReaderAt{data: data, limit: 256 << 10, release: release}, nil
		}
		return mem.Fileread(r)
	})
	f, _ := pipeFS(t, h)
	ctx := context.Background()
	if err := backend.WriteFile(ctx, f, "big", data, backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.opTO = 300 * time.Millisecond
	r, err := f.OpenRead(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n, err := io.Copy(io.Discard, r)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("copy from a stalled server = %d bytes, %v; want the idle timeout", n, err)
	}
	if n == 0 {
		t.Errorf("nothing was copied before the stall")
	}
}
