package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/tools"
)

// segEnv is a namespace and a store on local disk, the store's records
// kept in segments.
type segEnv struct {
	t                *testing.T
	ns               *local.FS
	nsDir, storeDir  string
	set              *tools.Set
	j                *Journal
	openStores       []*local.FS
	editsFrom, edits int
}

func newSegEnv(t *testing.T) *segEnv {
	t.Helper()
	e := &segEnv{t: t, nsDir: t.TempDir(), storeDir: t.TempDir()}
	ns, err := local.New(e.nsDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Close() })
	e.ns = ns
	if err := backend.WriteFile(t.Context(), ns, "f.txt", []byte("value: v0\n"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if e.set, err = tools.New(ns, tools.Options{}); err != nil {
		t.Fatal(err)
	}
	e.j = e.open(Options{})
	if e.j.log == nil {
		t.Fatal("a journal on a local store keeps no segments")
	}
	return e
}

// open opens another journal of the namespace on a new handle of the
// store, as another process would, keeping records in segments.
func (e *segEnv) open(opts Options) *Journal {
	e.t.Helper()
	store, err := local.New(e.storeDir)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { store.Close() })
	opts.Segments = true
	j, err := Open(e.t.Context(), e.ns, store, opts)
	if err != nil {
		e.t.Fatal(err)
	}
	return j
}

// edit changes f.txt from "value: v<n>" to "value: v<n+1>" through j.
func (e *segEnv) edit(j *Journal, n int) error {
	args, _ := json.Marshal(map[string]string{"path": "f.txt", "old_text": fmt.Sprintf("v%d", n), "new_text": fmt.Sprintf("v%d", n+1)})
	_, err := e.set.Call(j.Bind(e.t.Context()), "edit_file", args)
	return err
}

func (e *segEnv) file() string {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(e.nsDir, "f.txt"))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(data)
}

// segments returns the paths of the store's segments, oldest first.
func (e *segEnv) segments() []string {
	e.t.Helper()
	entries, err := os.ReadDir(filepath.Join(e.storeDir, "journal"))
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, d := range entries {
		if isSegmentName(d.Name()) {
			out = append(out, filepath.Join(e.storeDir, "journal", d.Name()))
		}
	}
	return out
}

// changes returns the sequence numbers of j's changes.
func changes(j *Journal) []uint64 {
	var out []uint64
	for _, c := range j.Checkpoints() {
		out = append(out, c.Seq)
	}
	return out
}

// TestSegmentTornTail: a segment whose last frame a crash cut short (the
// file ends inside the frame, or the frame's bytes are zeros or garbage
// from some point on) is read up to its last whole frame: the journal
// reopens, lists the changes before, restores exactly, and records on.
func TestSegmentTornTail(t *testing.T) {
	for _, tc := range []struct {
		name string
		tear func(data []byte, start, end int) []byte // start, end: the last frame's bounds
	}{
		{"cut in header", func(d []byte, s, _ int) []byte { return d[:s+3] }},
		{"cut after header", func(d []byte, s, _ int) []byte { return d[:s+frameHeader] }},
		{"cut in payload", func(d []byte, s, e int) []byte { return d[:(s+e)/2] }},
		{"cut before last byte", func(d []byte, _, e int) []byte { return d[:e-1] }},
		{"zeros from the middle", func(d []byte, s, e int) []byte {
			clear(d[(s+e)/2 : e])
			return d
		}},
		{"garbage in payload", func(d []byte, s, e int) []byte {
			d[e-2] ^= 0xff
			return d
		}},
		{"zero length", func(d []byte, s, e int) []byte {
			clear(d[s : s+4])
			return d
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newSegEnv(t)
			for i := range 3 {
				if err := e.edit(e.j, i); err != nil {
					t.Fatal(err)
				}
			}
			if err := e.j.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			want := changes(e.j)
			if len(want) != 3 {
				t.Fatalf("changes recorded: %v", want)
			}
			segs := e.segments()
			if len(segs) != 1 {
				t.Fatalf("segments: %v", segs)
			}
			data, err := os.ReadFile(segs[0])
			if err != nil {
				t.Fatal(err)
			}
			frames, end, _ := scanFrames(data[len(segmentMagic):])
			if len(frames) != 4 {
				t.Fatalf("%d frames, want 4 (3 changes, 1 after-state)", len(frames))
			}
			if tail := data[len(segmentMagic)+end:]; len(tail) == 0 || strings.Trim(string(tail), "\x00") != "" {
				t.Fatalf("the segment is not filled with zeros after its frames (%d bytes after)", len(tail))
			}
			last := frames[3]
			start := len(segmentMagic) + last.off - frameHeader
			if err := os.WriteFile(segs[0], tc.tear(data, start, len(segmentMagic)+last.off+len(last.payload)), 0o644); err != nil {
				t.Fatal(err)
			}
			j2 := e.open(Options{})
			if got := changes(j2); !slices.Equal(got, want) {
				t.Errorf("changes after the tear: %v, want %v", got, want)
			}
			// The torn record held the last change's after-state: the
			// change is expected in its state before, so the file
			// (now v3) is a conflict unless forced.
			if _, err := j2.Restore(t.Context(), 0, RestoreOptions{Force: true}); err != nil {
				t.Fatal(err)
			}
			if got := e.file(); got != "value: v0\n" {
				t.Errorf("f.txt after restoring to 0: %q", got)
			}
			// The reopened journal records on, in a segment of its own.
			if err := e.edit(j2, 0); err != nil {
				t.Fatal(err)
			}
			if n := len(e.segments()); n != 2 {
				t.Errorf("%d segments, want 2", n)
			}
			if err := j2.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			j3 := e.open(Options{})
			if got, want := changes(j3), changes(j2); !slices.Equal(got, want) || len(got) != 5 {
				t.Errorf("a third journal reads %v, the second has %v (want 3 changes, a restore, a change)", got, want)
			}
			if _, err := j3.Restore(t.Context(), want[2], RestoreOptions{}); err != nil {
				t.Fatal(err)
			}
			if got := e.file(); got != "value: v3\n" {
				t.Errorf("f.txt after restoring to %d: %q", want[2], got)
			}
		})
	}
}

// TestSegmentsShared: journals sharing a store (two processes) append to
// segments of their own and never take the same sequence number; each
// reads the other's records as it goes, and a third reads them all.
func TestSegmentsShared(t *testing.T) {
	e := newSegEnv(t)
	j2 := e.open(Options{})
	for i := range 6 {
		j := e.j
		if i%2 == 1 {
			j = j2
		}
		if err := e.edit(j, i); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(e.segments()); n != 2 {
		t.Errorf("%d segments, want one per journal", n)
	}
	for _, j := range []*Journal{e.j, j2} {
		if err := j.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	j3 := e.open(Options{})
	got := changes(j3)
	if len(got) != 6 || got[5] != 6 {
		t.Fatalf("changes read by a third journal: %v", got)
	}
	if _, err := j3.Restore(t.Context(), 0, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := e.file(); got != "value: v0\n" {
		t.Errorf("f.txt after restoring to 0: %q", got)
	}
	// The first journal, behind, learns of the others' records before
	// taking a number.
	if err := e.edit(e.j, 0); err != nil {
		t.Fatal(err)
	}
	if l, want := e.j.Latest(), j3.Latest()+1; l != want {
		t.Errorf("the first journal's latest record %d, want %d", l, want)
	}
}

// TestSegmentsCollected: a prune drops the records through its cut and
// removes the segments all of whose records it dropped, the journal's
// own included; what is kept restores, and a reopened journal sees the
// same.
func TestSegmentsCollected(t *testing.T) {
	defer func(n int64) { segmentBytes = n }(segmentBytes)
	segmentBytes = 1 // one record per segment
	e := newSegEnv(t)
	e.j.opts.KeepCount = 2
	for i := range 6 {
		if err := e.edit(e.j, i); err != nil {
			t.Fatal(err)
		}
	}
	before := len(e.segments())
	if before != 6 {
		t.Fatalf("%d segments, want 6", before)
	}
	res, err := e.j.Prune(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// The prune's record of the last after-state and its own record take
	// a segment each; the four changes dropped go with theirs.
	if res.Records != 4 || res.Segments != 4 {
		t.Errorf("pruned %+v, want 4 records in 4 segments", res)
	}
	if n := len(e.segments()); n != before+2-4 {
		t.Errorf("%d segments after the prune, want %d", n, before+2-4)
	}
	kept := changes(e.j)
	if len(kept) != 2 {
		t.Fatalf("changes kept: %v", kept)
	}
	j2 := e.open(Options{})
	if got := changes(j2); !slices.Equal(got, kept) || j2.Oldest() != e.j.Oldest() {
		t.Errorf("reopened: %v oldest %d, want %v oldest %d", got, j2.Oldest(), kept, e.j.Oldest())
	}
	if _, err := j2.Restore(t.Context(), j2.Oldest(), RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := e.file(); got != "value: v4\n" {
		t.Errorf("f.txt after restoring to the oldest kept: %q", got)
	}
}

// objectStore is a local store without OpenLog: its records are one
// object each, as on every store that cannot append.
type objectStore struct{ *local.FS }

// OpenLog hides the local backend's: objectStore is no backend.LogOpener.
func (objectStore) OpenLog() {}

// TestSegmentsAfterObjects: a store holding records as objects (written
// where the store could not append, or by an earlier version) is read
// with the segments a journal then appends: sequence numbers go on, and
// restores reach through both.
func TestSegmentsAfterObjects(t *testing.T) {
	e := newSegEnv(t)
	store, err := local.New(e.storeDir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	jo, err := Open(t.Context(), e.ns, objectStore{store}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if jo.log != nil {
		t.Fatal("objectStore keeps segments")
	}
	for i := range 2 {
		if err := e.edit(jo, i); err != nil {
			t.Fatal(err)
		}
	}
	if err := jo.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	j := e.open(Options{})
	if err := e.edit(j, 2); err != nil {
		t.Fatal(err)
	}
	if err := j.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := len(e.segments()); n != 1 {
		t.Errorf("%d segments, want 1", n)
	}
	j2 := e.open(Options{})
	if got := changes(j2); len(got) != 3 || got[2] != 4 {
		t.Errorf("changes: %v, want 1, 2 as objects, after-states 3, then 4", got)
	}
	if _, err := j2.Restore(t.Context(), 0, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := e.file(); got != "value: v0\n" {
		t.Errorf("f.txt after restoring to 0: %q", got)
	}
}

// TestSegmentRetiredSync: a record whose sync the tool has not run yet
// when its segment is retired (full, collected, the journal closed) is
// synced with the segment, and its own sync then succeeds; one whose
// segment was given up after a failure fails.
func TestSegmentRetiredSync(t *testing.T) {
	defer func(n int64) { segmentBytes = n }(segmentBytes)
	segmentBytes = 1 // one record per segment
	e := newSegEnv(t)
	j := e.j
	write := func() func(bool) error { return writeAfterRecord(t, j) }
	j.mu.Lock()
	first := write()
	second := write() // the first segment is full: a new one
	j.mu.Unlock()
	if err := first(false); err != nil {
		t.Errorf("the sync of a record in a segment retired full: %v", err)
	}
	if err := second(false); err != nil {
		t.Errorf("the sync of a record in the current segment: %v", err)
	}
	j.mu.Lock()
	third := write()
	j.log.retire(false) // as after a failed write
	j.mu.Unlock()
	if err := third(false); err == nil {
		t.Error("the sync of a record in a segment given up after a failure succeeded")
	}
	j.mu.Lock()
	fourth := write()
	j.mu.Unlock()
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fourth(false); err != nil {
		t.Errorf("the sync of a record whose journal closed: %v", err)
	}
	if n := len(e.segments()); n != 4 {
		t.Errorf("%d segments, want 4", n)
	}
}

// TestSegmentsAdopted: a journal opened without Options.Segments on a
// store that holds segments, or that another journal starts keeping in
// segments while it is open, keeps its records in segments too, so that
// sequence numbers stay unique; none is written as an object.
func TestSegmentsAdopted(t *testing.T) {
	e := newSegEnv(t)
	store, err := local.New(e.storeDir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	plain, err := Open(t.Context(), e.ns, store, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if plain.log != nil {
		t.Fatal("a journal without Segments on an empty store keeps segments")
	}
	if err := e.edit(e.j, 0); err != nil {
		t.Fatal(err)
	}
	if err := e.edit(plain, 1); err != nil {
		t.Fatal(err)
	}
	if plain.log == nil {
		t.Error("the journal without Segments did not switch to the store's segments")
	}
	objects, err := filepath.Glob(filepath.Join(e.storeDir, "journal", "*.json"))
	if err != nil || len(objects) != 0 {
		t.Errorf("records as objects: %v, %v", objects, err)
	}
	for _, j := range []*Journal{e.j, plain} {
		if err := j.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	store2, err := local.New(e.storeDir)
	if err != nil {
		t.Fatal(err)
	}
	defer store2.Close()
	third, err := Open(t.Context(), e.ns, store2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if third.log == nil || !slices.Equal(changes(third), []uint64{1, 2}) {
		t.Errorf("a journal opened without Segments: segments %v, changes %v", third.log != nil, changes(third))
	}
	if _, err := third.Restore(t.Context(), 0, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := e.file(); got != "value: v0\n" {
		t.Errorf("f.txt after restoring to 0: %q", got)
	}
}

// failingOpener opens the store's log files through a local.FS and, once
// armed, makes the next Sync of a segment fail: the way the kernel reports
// a failed write-back, once per open file description, later syncs of the
// same descriptor succeeding although the data they were to make durable
// is lost. EIO cannot be had from a real disk without root, hence this.
type failingOpener struct {
	backend.LogOpener
	fail   atomic.Bool
	failed chan struct{} // closed when the armed sync has failed
}

func (o *failingOpener) OpenLog(ctx context.Context, name string, create bool) (backend.LogFile, error) {
	f, err := o.LogOpener.OpenLog(ctx, name, create)
	if err != nil || !strings.HasSuffix(name, ".log") {
		return f, err
	}
	return &failingLog{LogFile: f, o: o}, nil
}

type failingLog struct {
	backend.LogFile
	o *failingOpener
}

func (f *failingLog) Sync() error {
	if f.o.fail.CompareAndSwap(true, false) {
		f.LogFile.Sync()
		close(f.o.failed)
		return &fs.PathError{Op: "sync", Path: "segment", Err: syscall.EIO}
	}
	return f.LogFile.Sync()
}

// TestSegmentSyncFailureSticky: once a sync of a segment failed, no
// record written to it before is reported durable, though the descriptor's
// next sync succeeds (here: one by a call whose sync runs while the
// failed one's call has not yet taken the journal's lock to retire the
// segment), and the journal writes its next record to a new segment.
func TestSegmentSyncFailureSticky(t *testing.T) {
	e := newSegEnv(t)
	j := e.j
	o := &failingOpener{LogOpener: j.log.opener, failed: make(chan struct{})}
	j.log.opener = o
	write := func() func(bool) error { return writeAfterRecord(t, j) }
	j.mu.Lock()
	a, b := write(), write()
	seg := j.log.owned
	o.fail.Store(true)
	aErr := make(chan error)
	go func() { aErr <- a(false) }()
	<-o.failed
	if err := b(true); err == nil { // this goroutine holds mu
		t.Error("a record written before a failed sync of its segment was reported durable")
	}
	j.mu.Unlock()
	if err := <-aErr; err == nil {
		t.Fatal("the failing sync succeeded")
	}
	j.mu.Lock()
	c := write()
	if j.log.owned == seg {
		t.Error("the journal wrote on to a segment whose sync failed")
	}
	j.mu.Unlock()
	if err := c(false); err != nil {
		t.Errorf("a record in the next segment: %v", err)
	}
}

// TestSegmentSeqLockRecreated: a journal that finds journal/seq.lock
// made again (removed meanwhile) numbers its next record past every
// record in the store, not from the new lock file's empty count.
func TestSegmentSeqLockRecreated(t *testing.T) {
	e := newSegEnv(t)
	j2 := e.open(Options{})
	if err := e.edit(e.j, 0); err != nil {
		t.Fatal(err)
	}
	if err := e.edit(j2, 1); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(e.storeDir, "journal", seqLockName)); err != nil {
		t.Fatal(err)
	}
	if err := e.edit(e.j, 2); err != nil {
		t.Fatal(err)
	}
	if got := changes(e.open(Options{})); !slices.Equal(got, []uint64{1, 2, 3}) {
		t.Errorf("a journal opened afterwards finds changes %v, want [1 2 3]", got)
	}
}

// TestSegmentDuplicateSeq: two records of one sequence number in the
// store (journals that numbered without one lock) fail the journal's
// open with an error naming both, rather than one being dropped.
func TestSegmentDuplicateSeq(t *testing.T) {
	e := newSegEnv(t)
	if err := e.edit(e.j, 0); err != nil {
		t.Fatal(err)
	}
	// Another journal's record 1, as an object.
	r := &record{Seq: 1, Type: typeAfter, Time: time.Now().UTC()}
	data, err := encodeRecord(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.storeDir, "journal", recordName(1)), data, 0o600); err != nil {
		t.Fatal(err)
	}
	store, err := local.New(e.storeDir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	_, err = Open(t.Context(), e.ns, store, Options{Segments: true})
	if err == nil || !strings.Contains(err.Error(), "record 1 is in the store twice") {
		t.Fatalf("open with record 1 twice: %v", err)
	}
}

// racingStore is a local store that runs before once, just before the
// first record written as an object.
type racingStore struct {
	*local.FS
	before func()
}

func (s *racingStore) OpenWrite(ctx context.Context, name string, opts backend.WriteOptions) (backend.FileWriter, error) {
	if f := s.before; f != nil && strings.HasPrefix(name, "journal/") && strings.HasSuffix(name, ".json") {
		s.before = nil
		f()
	}
	return s.FS.OpenWrite(ctx, name, opts)
}

// TestSegmentsAdoptedRace: a journal keeping records as objects (the
// CLI's) that finds no journal/seq.lock, and one keeping segments that
// creates it and writes its first record between that look and the
// object's creation, end with two records of two sequence numbers.
func TestSegmentsAdoptedRace(t *testing.T) {
	e := newSegEnv(t)
	fsys, err := local.New(e.storeDir)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	store := &racingStore{FS: fsys}
	plain, err := Open(t.Context(), e.ns, store, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if plain.log != nil {
		t.Fatal("a journal without Segments on an empty store keeps segments")
	}
	put := func(j *Journal) {
		t.Helper()
		j.mu.Lock()
		defer j.mu.Unlock()
		if err := j.write(t.Context(), &record{Type: typeAfter}); err != nil {
			t.Fatal(err)
		}
	}
	store.before = func() { put(e.j) }
	put(plain)
	if store.before != nil {
		t.Fatal("the object journal wrote no object")
	}
	third := e.open(Options{})
	if got := third.order; !slices.Equal(got, []uint64{1, 2}) {
		t.Errorf("records %v, want [1 2]", got)
	}
}

// TestSegmentSyncFailureForgotten: an edit refused because its record's
// sync failed leaves no checkpoint behind in the journal, and the
// after-states its record was to carry go with the next record.
func TestSegmentSyncFailureForgotten(t *testing.T) {
	e := newSegEnv(t)
	j := e.j
	o := &failingOpener{LogOpener: j.log.opener, failed: make(chan struct{})}
	j.log.opener = o
	if err := e.edit(j, 0); err != nil {
		t.Fatal(err)
	}
	o.fail.Store(true)
	if err := e.edit(j, 1); err == nil || o.fail.Load() {
		t.Fatalf("an edit whose record's sync failed: %v (sync armed still: %v)", err, o.fail.Load())
	}
	if got := e.file(); got != "value: v1\n" {
		t.Fatalf("f.txt after the refused edit: %q", got)
	}
	if got := changes(j); !slices.Equal(got, []uint64{1}) {
		t.Errorf("changes after a refused edit: %v, want [1]", got)
	}
	if err := e.edit(j, 1); err != nil {
		t.Fatal(err)
	}
	j.mu.Lock()
	last := j.order[len(j.order)-1]
	r, err := j.readRecord(t.Context(), last)
	j.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(r.Afters, func(a afterState) bool { return a.Seq == 1 }) {
		t.Errorf("record %d carries after-states %+v, none of change 1", last, r.Afters)
	}
}

// TestSegmentSeqLockBounded: a record waiting for journal/seq.lock, which
// another holder keeps (a stopped process sharing the store), fails when
// its call's context ends instead of waiting for ever.
func TestSegmentSeqLockBounded(t *testing.T) {
	e := newSegEnv(t)
	if err := e.edit(e.j, 0); err != nil {
		t.Fatal(err)
	}
	other, err := local.New(e.storeDir)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	holder, err := other.OpenLog(t.Context(), "journal/"+seqLockName, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Lock(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		e.j.mu.Lock()
		defer e.j.mu.Unlock()
		done <- e.j.write(ctx, &record{Type: typeAfter})
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("a record whose call ended waiting for the lock: %v", err)
		}
	case <-time.After(time.Minute):
		holder.Unlock()
		t.Fatal("a record waited for the lock past its call's end")
	}
	if got := changes(e.j); !slices.Equal(got, []uint64{1}) {
		t.Errorf("changes: %v, want [1]", got)
	}
}

// TestSegmentCreationFailureRemoved: a segment whose creation failed (its
// head's sync) is removed, not left for every journal to read again.
func TestSegmentCreationFailureRemoved(t *testing.T) {
	e := newSegEnv(t)
	o := &failingOpener{LogOpener: e.j.log.opener, failed: make(chan struct{})}
	e.j.log.opener = o
	o.fail.Store(true)
	e.j.mu.Lock()
	err := e.j.write(t.Context(), &record{Type: typeAfter})
	e.j.mu.Unlock()
	if err == nil {
		t.Fatal("a record whose segment's creation failed was written")
	}
	if segs := e.segments(); len(segs) != 0 {
		t.Errorf("segments left after a failed creation: %v", segs)
	}
	if err := e.edit(e.j, 0); err != nil {
		t.Fatal(err)
	}
	if got := changes(e.open(Options{})); !slices.Equal(got, []uint64{1}) {
		t.Errorf("changes: %v, want [1]", got)
	}
}

// TestSegmentAbandonedCollected: a prune removes a segment file that
// holds no record (no magic, or the magic and zeros only: a creation a
// crash cut short), has not changed for abandonedAge and is locked by no
// journal; a younger one is kept.
func TestSegmentAbandonedCollected(t *testing.T) {
	e := newSegEnv(t)
	if err := e.edit(e.j, 0); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(e.storeDir, "journal")
	old := time.Now().Add(-2 * abandonedAge)
	put := func(name string, data []byte, mod time.Time) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
		return p
	}
	zeros := make([]byte, fillMin)
	magicOnly := append([]byte(segmentMagic), zeros...)
	oldZeros := put(segmentName(old), zeros, old)
	oldMagic := put(segmentName(old.Add(time.Second)), magicOnly, old)
	young := put(segmentName(time.Now()), zeros, time.Now())
	j2 := e.open(Options{})
	res, err := j2.Prune(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if res.Segments != 2 {
		t.Errorf("prune removed %d segments, want 2", res.Segments)
	}
	for _, p := range []string{oldZeros, oldMagic} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("abandoned %s: %v", filepath.Base(p), err)
		}
	}
	if _, err := os.Stat(young); err != nil {
		t.Errorf("a young empty segment: %v", err)
	}
	if got := changes(e.open(Options{})); !slices.Equal(got, []uint64{1}) {
		t.Errorf("changes: %v, want [1]", got)
	}
}

// writeAfterRecord writes a record to j's segment (the caller holds j.mu)
// and returns the wait for its sync.
func writeAfterRecord(t *testing.T, j *Journal) func(bool) error {
	t.Helper()
	r := &record{Type: typeAfter}
	data, err := j.prepare(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	sync, err := j.writeLogRecord(t.Context(), r, data, true)
	if err != nil {
		t.Fatal(err)
	}
	return sync
}
