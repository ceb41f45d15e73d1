package azureadapter_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/fencefs/fencefs/azureadapter"
	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance/containers"
)

// pattern returns n bytes of a repeating pattern.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}

// mustWrite writes content to name, failing t on error.
func mustWrite(t testing.TB, f *azureadapter.FS, name, content string) {
	t.Helper()
	if err := backend.WriteFile(t.Context(), f, name, []byte(content), backend.WriteOptions{}); err != nil {
		t.Fatalf("WriteFile(%q): %v", name, err)
	}
}

// TestFaults injects emulator faults into writes on an Azurite of its
// own: a paused process (SIGSTOP: the call fails by its deadline) and a
// killed and restarted one (SIGKILL). Each leaves the old blob, and no
// listing or read shows anything of the new one: its blocks, staged or
// not, were never committed.
func TestFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: fault tests start an emulator of their own")
	}
	ctx := t.Context()
	srv := containers.StartAzurite(ctx, t)
	cont := newContainer(t, srv)
	cc := serviceClient(t, srv, nil).NewContainerClient(cont)

	openTarget := func(t *testing.T, prefix string) *azureadapter.FS {
		t.Helper()
		f := open(t, config(srv, cont, prefix))
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
	// kill crashes the emulator once it has saved what was written so
	// far (see containers.AzuriteServer.WaitSaved).
	kill := func(t *testing.T) {
		t.Helper()
		if err := srv.WaitSaved(ctx); err != nil {
			t.Fatal(err)
		}
		if err := srv.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	restart := func(t *testing.T) {
		t.Helper()
		if err := srv.Start(ctx); err != nil {
			t.Fatalf("restarting Azurite: %v", err)
		}
	}
	byDeadline := func(t *testing.T, what string, err error, deadline time.Time) {
		t.Helper()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s on a paused emulator: error = %v, want context.DeadlineExceeded", what, err)
		}
		if late := time.Since(deadline); late > 3*time.Second {
			t.Errorf("%s returned %v after its deadline", what, late.Round(time.Millisecond))
		}
	}

	t.Run("PausedStat", func(t *testing.T) {
		f := openTarget(t, "paused-stat")
		pause(t)
		dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		deadline, _ := dctx.Deadline()
		_, err := f.Stat(dctx, "target")
		byDeadline(t, "Stat", err, deadline)
		resume(t)
	})

	t.Run("PausedCommit", func(t *testing.T) {
		f := openTarget(t, "paused-put")
		dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
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
		// The whole request reached the frozen emulator before the
		// client gave up, so it may still apply it once it thaws: the
		// target is the old or the new content, never a mix.
		got, err := backend.ReadFile(ctx, f, "target")
		if err != nil || (string(got) != "old" && string(got) != "new") {
			t.Errorf("target = %q, %v; want \"old\" or \"new\"", got, err)
		}
		wantOnly(t, cc, "paused-put/", "target")
	})

	t.Run("PausedMidBlocks", func(t *testing.T) {
		f := openTarget(t, "paused-blocks")
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		deadline, _ := dctx.Deadline()
		w, err := f.OpenWrite(dctx, "target", backend.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		// The first block is on its way when the emulator freezes.
		if _, err := w.Write(pattern(testBlockSize + 1)); err != nil {
			t.Fatal(err)
		}
		pause(t)
		_, werr := w.Write(pattern(testBlockSize))
		cerr := w.Commit()
		if werr == nil {
			byDeadline(t, "Commit", cerr, deadline)
		} else {
			byDeadline(t, "Write", werr, deadline)
		}
		resume(t)
		if err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		wantOld(t, f, cc, "paused-blocks/")
	})

	t.Run("KilledBeforeCommit", func(t *testing.T) {
		f := openTarget(t, "killed-put")
		w, err := f.OpenWrite(ctx, "target", backend.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if _, err := w.Write(pattern(testBlockSize / 2)); err != nil {
			t.Fatal(err)
		}
		kill(t)
		if err := w.Commit(); err == nil {
			t.Error("Commit succeeded on a killed emulator")
		}
		restart(t)
		if err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		wantOld(t, f, cc, "killed-put/")
	})

	t.Run("KilledMidBlocks", func(t *testing.T) {
		f := openTarget(t, "killed-blocks")
		w, err := f.OpenWrite(ctx, "target", backend.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		// Two blocks are staged or on their way when the emulator dies.
		if _, err := w.Write(pattern(2*testBlockSize + 1)); err != nil {
			t.Fatal(err)
		}
		if n := uncommittedBlocks(t, cc, "killed-blocks/target"); n == 0 {
			t.Fatal("no block staged before the kill")
		}
		kill(t)
		if err := w.Commit(); err == nil {
			t.Fatal("Commit succeeded on a killed emulator")
		}
		restart(t)
		if err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		wantOld(t, f, cc, "killed-blocks/")
	})
}

// wantOnly checks that the committed blobs below prefix are exactly
// names.
func wantOnly(t *testing.T, cc *container.Client, prefix string, names ...string) {
	t.Helper()
	raw, err := rawBlobs(t.Context(), cc, prefix, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(raw, names) {
		t.Errorf("blobs below %s = %q, want %q", prefix, raw, names)
	}
}

// wantOld checks that target below prefix still holds "old", through the
// backend and through a listing, and that nothing else is committed.
func wantOld(t *testing.T, f *azureadapter.FS, cc *container.Client, prefix string) {
	t.Helper()
	got, err := backend.ReadFile(t.Context(), f, "target")
	if err != nil || !bytes.Equal(got, []byte("old")) {
		t.Errorf("target = %.20q, %v; want \"old\"", got, err)
	}
	fi, err := f.Stat(t.Context(), "target")
	if err != nil || fi.Size != 3 {
		t.Errorf("Stat(target) = %+v, %v; want 3 bytes", fi, err)
	}
	wantOnly(t, cc, prefix, "target")
}

// uncommittedBlocks returns how many uncommitted blocks the blob name has.
func uncommittedBlocks(t *testing.T, cc *container.Client, name string) int {
	t.Helper()
	out, err := cc.NewBlockBlobClient(name).GetBlockList(t.Context(), blockblob.BlockListTypeUncommitted, nil)
	if err != nil {
		t.Fatalf("GetBlockList(%s): %v", name, err)
	}
	return len(out.UncommittedBlocks)
}
