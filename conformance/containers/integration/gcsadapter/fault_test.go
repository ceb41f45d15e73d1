package gcsadapter_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/gcsadapter"
)

// TestFaults injects server faults into writes on an emulator of its own
// that keeps its objects on disk: a paused server (SIGSTOP: the call
// fails by its deadline) and a killed and restarted one; either way the
// old object survives and nothing staged becomes visible.
func TestFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: fault tests start a server of their own")
	}
	ctx := t.Context()
	srv := containers.StartGCSWith(ctx, t, containers.GCSConfig{Dir: t.TempDir()})
	client := rawClient(t, srv)
	bucket := containers.DefaultGCSBucket

	setup := func(t *testing.T, prefix string) *gcsadapter.FS {
		t.Helper()
		f := open(t, config(srv, bucket, prefix))
		mustWrite(t, f, "target", "old")
		return f
	}
	pause := func(t *testing.T) {
		t.Helper()
		if err := srv.Pause(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Resume() })
	}
	resume := func(t *testing.T) {
		t.Helper()
		if err := srv.Resume(); err != nil {
			t.Fatal(err)
		}
	}
	// byDeadline checks that a call on a paused server failed with the
	// deadline's error, close to the deadline.
	byDeadline := func(t *testing.T, what string, err error, deadline time.Time) {
		t.Helper()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s on a paused server: error = %v, want context.DeadlineExceeded", what, err)
		}
		if late := time.Since(deadline); late > 3*time.Second {
			t.Errorf("%s returned %v after its deadline", what, late.Round(time.Millisecond))
		}
	}
	restart := func(t *testing.T) {
		t.Helper()
		if err := srv.Restart(ctx); err != nil {
			t.Fatalf("restarting the emulator: %v", err)
		}
	}

	t.Run("PausedStat", func(t *testing.T) {
		f := setup(t, "paused-stat")
		pause(t)
		dctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		deadline, _ := dctx.Deadline()
		_, err := f.Stat(dctx, "target")
		byDeadline(t, "Stat", err, deadline)
		resume(t)
	})

	t.Run("PausedCommit", func(t *testing.T) {
		f := setup(t, "paused-put")
		dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		deadline, _ := dctx.Deadline()
		w, err := f.OpenWrite(dctx, "target", backend.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if _, err := w.Write([]byte("new")); err != nil {
			t.Fatal(err)
		}
		pause(t)
		byDeadline(t, "Commit", w.Commit(), deadline)
		resume(t)
		if err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		// The whole request may have reached the frozen server before the
		// client gave up, so the server may still apply it once it thaws:
		// the target is the old or the new content, never a mix.
		got, err := backend.ReadFile(ctx, f, "target")
		if err != nil || (string(got) != "old" && string(got) != "new") {
			t.Errorf("target = %q, %v; want \"old\" or \"new\"", got, err)
		}
		if raw, err := rawNames(ctx, client, bucket, "paused-put/"); err != nil || len(raw) != 1 || raw[0] != "target" {
			t.Errorf("raw storage = %q, %v; want [target]", raw, err)
		}
	})

	t.Run("PausedMidResumable", func(t *testing.T) {
		f := setup(t, "paused-resumable")
		dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		deadline, _ := dctx.Deadline()
		w, err := f.OpenWrite(dctx, "target", backend.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		// The upload is under way, its first chunk sent, when the server
		// freezes.
		if _, err := w.Write(pattern(2*gcsadapter.MinChunkSize + 1)); err != nil {
			t.Fatal(err)
		}
		pause(t)
		_, werr := w.Write(pattern(2 * gcsadapter.MinChunkSize))
		cerr := w.Commit()
		if werr != nil {
			byDeadline(t, "Write", werr, deadline)
		} else {
			byDeadline(t, "Commit", cerr, deadline)
		}
		resume(t)
		if err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		wantState(t, f, client, bucket, "paused-resumable/", "old")
	})

	t.Run("KilledBeforeCommit", func(t *testing.T) {
		f := setup(t, "killed-put")
		dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		w, err := f.OpenWrite(dctx, "target", backend.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if _, err := w.Write(pattern(100_000)); err != nil {
			t.Fatal(err)
		}
		if err := srv.Kill(); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(); err == nil {
			t.Error("Commit succeeded on a killed server")
		}
		restart(t)
		if err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		wantState(t, f, client, bucket, "killed-put/", "old")
	})

	t.Run("KilledMidResumable", func(t *testing.T) {
		f := setup(t, "killed-resumable")
		dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		// A conditional write, which the SDK retries until its deadline
		// while the server is down.
		fi, err := f.Stat(ctx, "target")
		if err != nil {
			t.Fatal(err)
		}
		w, err := f.OpenWrite(dctx, "target", backend.WriteOptions{Precondition: backend.Precondition{MatchVersion: fi.Version}})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if _, err := w.Write(pattern(2*gcsadapter.MinChunkSize + 1)); err != nil {
			t.Fatal(err)
		}
		if err := srv.Kill(); err != nil {
			t.Fatal(err)
		}
		_, werr := w.Write(pattern(gcsadapter.MinChunkSize))
		if cerr := w.Commit(); werr == nil && cerr == nil {
			t.Fatal("Write and Commit succeeded on a killed server")
		}
		restart(t)
		if err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		wantState(t, f, client, bucket, "killed-resumable/", "old")
	})
}
