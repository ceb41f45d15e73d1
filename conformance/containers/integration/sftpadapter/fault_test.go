package sftpadapter_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/sftpadapter"
)

// faultSlack is how long after its deadline a call may return before the
// test calls it hung.
const faultSlack = 3 * time.Second

// sftpFixture is a server of its own with one backend on a fresh root,
// for tests that break the server.
type sftpFixture struct {
	srv *containers.SFTPServer
	h   *containers.SFTPHarness
	b   *sftpadapter.FS
}

func newFixture(t *testing.T, fixedPort bool) *sftpFixture {
	t.Helper()
	ctx := t.Context()
	var srv *containers.SFTPServer
	if fixedPort {
		port, err := containers.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		srv = containers.StartSFTP(ctx, t, containers.WithFixedPort("22/tcp", port))
	} else {
		srv = containers.StartSFTP(ctx, t)
	}
	h := containers.NewSFTPHarness(srv)
	return &sftpFixture{srv: srv, h: h, b: newFS(t, h)}
}

// wantOnly fails unless the backend's storage holds exactly the file
// name with content want: no temporary file, no partial write.
func (x *sftpFixture) wantOnly(t *testing.T, name, want string) {
	t.Helper()
	ctx := t.Context()
	if got := readAll(t, ctx, x.b, name); got != want {
		t.Errorf("%s holds %q, want %q", name, got, want)
	}
	if raw := x.h.ListRaw(ctx, t, x.b); !slices.Equal(raw, []string{name}) {
		t.Errorf("storage holds %q, want only %q", raw, name)
	}
}

// byDeadline runs fn, which must fail with ctx's deadline, and fails t
// when fn returns later than that deadline plus faultSlack (it hung) or
// with another error.
func byDeadline(t *testing.T, ctx context.Context, what string, fn func() error) {
	t.Helper()
	dl, ok := ctx.Deadline()
	if !ok {
		t.Fatal("byDeadline needs a context with a deadline")
	}
	err := fn()
	if late := time.Since(dl); late > faultSlack {
		t.Errorf("%s returned %v after its deadline", what, late.Round(time.Millisecond))
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%s: error = %v, want the context's deadline", what, err)
	}
}

// TestSFTPPausedServer freezes the server mid-write: the calls fail by
// their deadline, the old target survives, and once the server is back the
// next call reconnects and clears the abandoned temporary file.
func TestSFTPPausedServer(t *testing.T) {
	x := newFixture(t, false)
	ctx := t.Context()
	if err := backend.WriteFile(ctx, x.b, "f", []byte("old"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 8*time.Second)
	defer cancel()
	w, err := x.b.OpenWrite(wctx, "f", backend.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Write([]byte("new, partly")); err != nil {
		t.Fatal(err)
	}

	if err := containers.Pause(ctx, x.srv.Container); err != nil {
		t.Fatalf("docker pause: %v", err)
	}
	paused := true
	t.Cleanup(func() {
		if paused {
			_ = containers.Unpause(context.WithoutCancel(ctx), x.srv.Container)
		}
	})

	byDeadline(t, wctx, "Write to a paused server", func() error {
		_, err := w.Write(bytes.Repeat([]byte("x"), 1<<20))
		return err
	})
	if err := w.Commit(); err == nil {
		t.Error("Commit after a failed write succeeded")
	}
	if err := w.Close(); err != nil {
		t.Errorf("Close of the abandoned write: %v", err)
	}
	// The connection is gone; dialling a new one must honour the deadline
	// too (the port still accepts, the handshake never ends).
	sctx, scancel := context.WithTimeout(ctx, 2*time.Second)
	defer scancel()
	byDeadline(t, sctx, "Stat on a paused server", func() error {
		_, err := x.b.Stat(sctx, "f")
		return err
	})

	if err := containers.Unpause(ctx, x.srv.Container); err != nil {
		t.Fatalf("docker unpause: %v", err)
	}
	paused = false
	if _, err := x.b.Stat(ctx, "f"); err != nil {
		t.Fatalf("Stat after the server came back: %v", err)
	}
	x.wantOnly(t, "f", "old")
}

// TestSFTPRestart restarts and kills the server under a live backend.
func TestSFTPRestart(t *testing.T) {
	x := newFixture(t, true)
	ctx := t.Context()
	if err := backend.WriteFile(ctx, x.b, "f", []byte("old"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Run("BetweenCalls", func(t *testing.T) {
		timeout := 5 * time.Second
		if err := x.srv.Container.Stop(ctx, &timeout); err != nil {
			t.Fatalf("stopping: %v", err)
		}
		if err := x.srv.Container.Start(ctx); err != nil {
			t.Fatalf("starting: %v", err)
		}
		// The old connection is dead; the next call of each kind redials.
		if got := readAll(t, ctx, x.b, "f"); got != "old" {
			t.Errorf("read after the restart = %q", got)
		}
		if err := backend.WriteFile(ctx, x.b, "f", []byte("after restart"), backend.WriteOptions{}); err != nil {
			t.Fatalf("write after the restart: %v", err)
		}
		x.wantOnly(t, "f", "after restart")
	})

	t.Run("PoolBetweenCalls", func(t *testing.T) {
		pool, err := sftpadapter.NewPool(x.srv.Config(""))
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		var fss []*sftpadapter.FS
		for i := range 2 {
			root, err := x.srv.NewRoot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			f, err := pool.Open(ctx, root)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := backend.WriteFile(ctx, f, "f", []byte{'0' + byte(i)}, backend.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			fss = append(fss, f)
		}
		timeout := 5 * time.Second
		if err := x.srv.Container.Stop(ctx, &timeout); err != nil {
			t.Fatalf("stopping: %v", err)
		}
		if err := x.srv.Container.Start(ctx); err != nil {
			t.Fatalf("starting: %v", err)
		}
		// Both backends go on over one new connection.
		for i, f := range fss {
			if got := readAll(t, ctx, f, "f"); got != string('0'+rune(i)) {
				t.Errorf("backend %d reads %q after the restart", i, got)
			}
		}
		if got := pool.Dials(); got != 2 {
			t.Errorf("Dials() = %d, want 2: one before the restart, one after", got)
		}
	})

	t.Run("KilledMidWrite", func(t *testing.T) {
		w, err := x.b.OpenWrite(ctx, "f", backend.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if _, err := w.Write([]byte("half of a new ")); err != nil {
			t.Fatal(err)
		}
		if err := containers.Kill(ctx, x.srv.Container); err != nil {
			t.Fatalf("killing: %v", err)
		}
		_, werr := w.Write([]byte("version"))
		cerr := w.Commit()
		if werr == nil && cerr == nil {
			t.Fatal("a write to a killed server committed")
		}
		w.Close()
		if err := x.srv.Container.Start(ctx); err != nil {
			t.Fatalf("starting: %v", err)
		}
		// The next call reconnects and removes the abandoned temporary
		// file; the old content is intact.
		if _, err := x.b.Stat(ctx, "f"); err != nil {
			t.Fatalf("Stat after the restart: %v", err)
		}
		x.wantOnly(t, "f", "after restart")
	})
}
