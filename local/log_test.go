//go:build linux

package local

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fencefs/fencefs/backend"
)

// TestOpenLog: OpenLog creates a file exclusively with its missing
// parents, reopens it in place, reads and writes at offsets, reports its
// size and its removal, and resolves names as every other method does
// (no symlink followed, pending writes' names reserved).
func TestOpenLog(t *testing.T) {
	for _, o := range openers() {
		t.Run(o.name, func(t *testing.T) {
			f, root := newTestFS(t, o)
			ctx := t.Context()
			l, err := f.OpenLog(ctx, "j/k/seg.log", true)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if _, err := f.OpenLog(ctx, "j/k/seg.log", true); !errors.Is(err, fs.ErrExist) {
				t.Errorf("creating it again: %v, want fs.ErrExist", err)
			}
			if _, err := l.WriteAt([]byte("hello, log"), 0); err != nil {
				t.Fatal(err)
			}
			if _, err := l.WriteAt([]byte("LOG"), 7); err != nil {
				t.Fatal(err)
			}
			if err := l.Sync(); err != nil {
				t.Fatal(err)
			}
			if data, err := os.ReadFile(filepath.Join(root, "j/k/seg.log")); err != nil || string(data) != "hello, LOG" {
				t.Errorf("on disk: %q, %v", data, err)
			}
			if n, err := l.Size(); err != nil || n != 10 {
				t.Errorf("size %d, %v", n, err)
			}
			l2, err := f.OpenLog(ctx, "j/k/seg.log", false)
			if err != nil {
				t.Fatal(err)
			}
			defer l2.Close()
			buf := make([]byte, 6)
			if n, err := l2.ReadAt(buf, 7); n != 3 || !errors.Is(err, io.EOF) || !bytes.Equal(buf[:n], []byte("LOG")) {
				t.Errorf("reading past the end: %d %q %v", n, buf[:n], err)
			}
			if gone, err := l2.Removed(); gone || err != nil {
				t.Errorf("removed before removal: %v, %v", gone, err)
			}
			if err := os.Remove(filepath.Join(root, "j/k/seg.log")); err != nil {
				t.Fatal(err)
			}
			if gone, err := l2.Removed(); !gone || err != nil {
				t.Errorf("removed after removal: %v, %v", gone, err)
			}
			if _, err := f.OpenLog(ctx, "j/k/seg.log", false); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("opening a missing log: %v", err)
			}
			// Names resolve as everywhere else.
			if err := os.Symlink(filepath.Join(root, "j"), filepath.Join(root, "via")); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "j/real.log"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("real.log", filepath.Join(root, "j/link.log")); err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				name   string
				create bool
				want   error
			}{
				{"via/x.log", true, backend.ErrSymlink},
				{"via/real.log", false, backend.ErrSymlink},
				{"j/link.log", false, backend.ErrNotRegular},
				{"j/link.log", true, fs.ErrExist},
				{"j/k", false, backend.ErrIsDir},
				{".", true, backend.ErrIsDir},
				{"j/.fencefs-0123abcd.tmp", true, fs.ErrInvalid},
				{"../x.log", true, fs.ErrInvalid},
			} {
				l, err := f.OpenLog(ctx, tc.name, tc.create)
				if err == nil {
					l.Close()
				}
				if !errors.Is(err, tc.want) {
					t.Errorf("OpenLog(%q, %v): %v, want %v", tc.name, tc.create, err, tc.want)
				}
			}
			if _, err := os.Stat(filepath.Join(root, "j/x.log")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a log created through a symlink: %v", err)
			}
		})
	}
}

// TestLogLock: the lock of a log is exclusive between two opens of the
// file (two processes' as much as one's), taken again once released or
// closed.
func TestLogLock(t *testing.T) {
	f, _ := newTestFS(t, openers()[0])
	ctx := t.Context()
	a, err := f.OpenLog(ctx, "seq.lock", true)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := f.OpenLog(ctx, "seq.lock", false)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := a.Lock(); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.TryLock(); ok || err != nil {
		t.Errorf("TryLock while another holds it: %v, %v", ok, err)
	}
	if err := a.Unlock(); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.TryLock(); !ok || err != nil {
		t.Errorf("TryLock once released: %v, %v", ok, err)
	}
	if ok, err := a.TryLock(); ok || err != nil {
		t.Errorf("TryLock while the other holds it: %v, %v", ok, err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if ok, err := a.TryLock(); !ok || err != nil {
		t.Errorf("TryLock once the holder closed: %v, %v", ok, err)
	}
}

// TestCloseClosesLogs: closing the FS closes the logs it opened; their
// methods then fail with fs.ErrClosed rather than reach a descriptor
// number reused meanwhile, and no log opens any more.
func TestCloseClosesLogs(t *testing.T) {
	root := t.TempDir()
	f, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	l, err := f.OpenLog(ctx, "a.log", true)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	other, err := os.Create(filepath.Join(root, "other"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := l.WriteAt([]byte("x"), 0); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("WriteAt after the FS closed: %v", err)
	}
	if err := l.Sync(); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Sync after the FS closed: %v", err)
	}
	if fi, err := other.Stat(); err != nil || fi.Size() != 0 {
		t.Errorf("another file got the write: %v, %v", fi.Size(), err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("Close after the FS closed: %v", err)
	}
	if _, err := f.OpenLog(ctx, "b.log", true); err == nil {
		t.Error("OpenLog after Close succeeded")
	}
}

// TestLogLockClose: closing the FS while a Lock waits for another holder
// returns without waiting for the lock, and the waiting Lock then fails
// with fs.ErrClosed, holding nothing.
func TestLogLockClose(t *testing.T) {
	f, _ := newTestFS(t, openers()[0])
	ctx := t.Context()
	holder, err := f.OpenLog(ctx, "seq.lock", true)
	if err != nil {
		t.Fatal(err)
	}
	waiter, err := f.OpenLog(ctx, "seq.lock", false)
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Lock(); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	locked := make(chan error, 1)
	go func() {
		close(started)
		locked <- waiter.Lock()
	}()
	<-started
	closed := make(chan error, 1)
	go func() { closed <- waiter.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		holder.Unlock()
		t.Fatal("Close waited for a Lock that waits for another holder")
	}
	if err := holder.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := <-locked; !errors.Is(err, fs.ErrClosed) {
		t.Errorf("a Lock whose file closed while it waited: %v", err)
	}
	if ok, err := holder.TryLock(); !ok || err != nil {
		t.Errorf("TryLock after the waiter's file closed: %v, %v", ok, err)
	}
}
