package checkpoint_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/checkpoint"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/memfs"
	"github.com/fencefs/fencefs/tools"
)

// TestRecordFailsAfterOverlap: an edit's record is stored while the
// edit stages its own bytes and waited for just before the edit's
// commit (tools.WaitBeforeCommit); a record the store then
// cannot take fails the edit with nothing committed: the file keeps its
// content, no staging file is left and the journal gains no record. On
// local disk the wait is along with the temporary file's sync, before its
// rename; on memfs (no backend.CommitHooker) at the start of Commit. With
// records in segments the frame is written when the change is announced,
// and it is that write that fails (the lock file and segment are gone
// with their directory), before the edit stages anything.
func TestRecordFailsAfterOverlap(t *testing.T) {
	ctx := context.Background()
	localNS := func(t *testing.T) (backend.Backend, string) {
		dir := t.TempDir()
		ns, err := local.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ns.Close() })
		return ns, dir
	}
	for _, tc := range []struct {
		name     string
		ns       func(t *testing.T) (backend.Backend, string)
		segments bool // records in segments (checkpoint.Options.Segments)
	}{
		{"local", localNS, false},
		{"local segments", localNS, true},
		{"memfs", func(t *testing.T) (backend.Backend, string) { return memfs.New(), "" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns, nsDir := tc.ns(t)
			storeDir := t.TempDir()
			store, err := local.New(storeDir)
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			if err := backend.WriteFile(ctx, ns, "f.txt", []byte("value: v0\n"), backend.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			j, err := checkpoint.Open(ctx, ns, store, checkpoint.Options{Segments: tc.segments})
			if err != nil {
				t.Fatal(err)
			}
			set, err := tools.New(ns, tools.Options{})
			if err != nil {
				t.Fatal(err)
			}
			edit := func(from, to string) (string, error) {
				args, _ := json.Marshal(map[string]string{"path": "f.txt", "old_text": from, "new_text": to})
				return set.Call(j.Bind(ctx), "edit_file", args)
			}
			if _, err := edit("v0", "v1"); err != nil {
				t.Fatal(err)
			}
			if u := j.Usage(); u.RecordCount != 1 {
				t.Fatalf("records after the first edit: %d", u.RecordCount)
			}
			// The store's record directory becomes a file: the next
			// record's write fails, after the edit started staging.
			journalDir := filepath.Join(storeDir, "journal")
			if err := os.RemoveAll(journalDir); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(journalDir, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := edit("v1", "v2")
			if err == nil || !strings.Contains(err.Error(), "not made") {
				t.Fatalf("edit whose record failed: %q, %v", out, err)
			}
			if data, err := backend.ReadFile(ctx, ns, "f.txt"); err != nil || string(data) != "value: v1\n" {
				t.Errorf("f.txt after the refused edit: %q, %v", data, err)
			}
			if u := j.Usage(); u.RecordCount != 1 {
				t.Errorf("records after the refused edit: %d", u.RecordCount)
			}
			if nsDir != "" {
				entries, err := os.ReadDir(nsDir)
				if err != nil {
					t.Fatal(err)
				}
				if len(entries) != 1 || entries[0].Name() != "f.txt" {
					t.Errorf("namespace after the refused edit holds %v", entries)
				}
			}
			// The store is whole again: the edit goes through and is
			// journaled.
			if err := os.Remove(journalDir); err != nil {
				t.Fatal(err)
			}
			if _, err := edit("v1", "v2"); err != nil {
				t.Fatal(err)
			}
			if data, _ := backend.ReadFile(ctx, ns, "f.txt"); string(data) != "value: v2\n" {
				t.Errorf("f.txt after the edit: %q", data)
			}
			if u := j.Usage(); u.RecordCount != 2 {
				t.Errorf("records after the edit: %d", u.RecordCount)
			}
		})
	}
}

// TestRecordFailsInSegment: on a local store, where records are frames
// of a segment file, a record the segment cannot take (here the process's
// file size limit stops the zeros a large record needs ahead of it: the
// disk full, as far as the journal can tell) refuses the edit with
// nothing committed; the journal then starts a new segment, and a
// reopened journal reads both and restores exactly.
func TestRecordFailsInSegment(t *testing.T) {
	ctx := context.Background()
	nsDir, storeDir := t.TempDir(), t.TempDir()
	ns, err := local.New(nsDir)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	store, err := local.New(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	big := "value: v0\n" + strings.Repeat("x", 3490) + "\n"
	for name, data := range map[string]string{"f.txt": "value: v0\n", "big.txt": big, "plain/big.txt": big} {
		if err := backend.WriteFile(ctx, ns, name, []byte(data), backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	j, err := checkpoint.Open(ctx, ns, store, checkpoint.Options{Segments: true})
	if err != nil {
		t.Fatal(err)
	}
	set, err := tools.New(ns, tools.Options{})
	if err != nil {
		t.Fatal(err)
	}
	edit := func(path, from, to string) (string, error) {
		args, _ := json.Marshal(map[string]string{"path": path, "old_text": from, "new_text": to})
		return set.Call(j.Bind(ctx), "edit_file", args)
	}
	if _, err := edit("f.txt", "v0", "v1"); err != nil {
		t.Fatal(err)
	}
	segs, err := filepath.Glob(filepath.Join(storeDir, "journal", "*.log"))
	if err != nil || len(segs) != 1 {
		t.Fatalf("segments: %v, %v", segs, err)
	}
	fi, err := os.Stat(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	// The edit of big.txt records its pre-image inline (in base64): more
	// than the whole segment holds, so the segment must grow. A limit at
	// the segment's size lets the edit's own temporary file (the size of
	// big.txt) be written, not the segment grow.
	if fi.Size() < int64(len(big))+100 || fi.Size() >= int64(len(big))*4/3 {
		t.Fatalf("the segment's size %d does not lie between big.txt's %d and its base64's", fi.Size(), len(big))
	}
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur != unix.RLIM_INFINITY && lim.Cur < uint64(fi.Size()) {
		t.Fatalf("the file size limit %d is below the segment's size %d", lim.Cur, fi.Size())
	}
	small := lim
	small.Cur = uint64(fi.Size())
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &small); err != nil {
		t.Fatal(err)
	}
	// The same edit unjournaled goes through: only the segment is held.
	plainOut, plainErr := set.Call(ctx, "edit_file", json.RawMessage(`{"path": "plain/big.txt", "old_text": "v0", "new_text": "v1"}`))
	out, err := edit("big.txt", "v0", "v1")
	if rerr := unix.Setrlimit(unix.RLIMIT_FSIZE, &lim); rerr != nil {
		t.Fatal(rerr)
	}
	if plainErr != nil {
		t.Fatalf("the unjournaled edit under the limit: %q, %v", plainOut, plainErr)
	}
	if err == nil || !strings.Contains(err.Error(), "not made") {
		t.Fatalf("edit whose record failed: %q, %v", out, err)
	}
	if data, err := os.ReadFile(filepath.Join(nsDir, "big.txt")); err != nil || string(data) != big {
		t.Errorf("big.txt after the refused edit: %d bytes, %v", len(data), err)
	}
	if entries, err := os.ReadDir(nsDir); err != nil || len(entries) != 3 {
		t.Errorf("namespace after the refused edit holds %v, %v", entries, err)
	}
	if u := j.Usage(); u.RecordCount != 1 {
		t.Errorf("records after the refused edit: %d", u.RecordCount)
	}
	// Without the limit the edit goes through, in a new segment.
	if _, err := edit("big.txt", "v0", "v1"); err != nil {
		t.Fatal(err)
	}
	if err := j.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if segs, _ := filepath.Glob(filepath.Join(storeDir, "journal", "*.log")); len(segs) != 2 {
		t.Errorf("segments after the failure: %v, want 2", segs)
	}
	store2, err := local.New(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	defer store2.Close()
	j2, err := checkpoint.Open(ctx, ns, store2, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(j2.Checkpoints()); n != 2 {
		t.Errorf("a reopened journal reads %d changes, want 2", n)
	}
	if _, err := j2.Restore(ctx, 0, checkpoint.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"f.txt": "value: v0\n", "big.txt": big} {
		if data, err := os.ReadFile(filepath.Join(nsDir, name)); err != nil || string(data) != want {
			t.Errorf("%s after restoring to 0: %d bytes, %v", name, len(data), err)
		}
	}
}
