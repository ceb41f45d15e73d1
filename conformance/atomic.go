package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

func (s *suite) atomicityTests() []testCase {
	return []testCase{
		{"AbandonKeepsOld", s.testAbandonKeepsOld},
		{"AbandonNewLeavesNothing", s.testAbandonNew},
		{"AbandonNewInNewDirectory", s.testAbandonNewDir},
		{"AbandonWithoutWriting", s.testAbandonUnwritten},
		{"InvisibleBeforeCommit", s.testInvisibleBeforeCommit},
		{"PendingWriteNotListed", s.testPendingNotListed},
		{"NoTempFilesAfterCommit", s.testNoTempAfterCommit},
		{"CloseAfterCommit", s.testCloseAfterCommit},
		{"DirectoryAppearsBeforeCommit", s.testDirAppearsBeforeCommit},
		{"ConcurrentReadersSeeWholeContent", s.testConcurrentReaders},
		{"ConcurrentWritersLastWins", s.testConcurrentWriters},
	}
}

// openWrite opens the storage path name for writing, failing on error.
func (e *env) openWrite(w backend.Writer, name string, opts backend.WriteOptions) backend.FileWriter {
	e.t.Helper()
	fw, err := w.OpenWrite(e.ctx, name, opts)
	if err != nil {
		e.t.Fatalf("OpenWrite(%q): %v", name, err)
	}
	e.t.Cleanup(func() { fw.Close() })
	return fw
}

// mustWrite writes data to fw, failing on error.
func (e *env) mustWrite(fw backend.FileWriter, data []byte) {
	e.t.Helper()
	if n, err := fw.Write(data); err != nil || n != len(data) {
		e.t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(data))
	}
}

// testAbandonKeepsOld checks that Close without Commit leaves the old
// content and no temporary file.
func (s *suite) testAbandonKeepsOld(t *testing.T) {
	e := s.setup(t)
	w := e.writer()
	e.put("f", []byte("old"))
	fw := e.openWrite(w, e.p("f"), backend.WriteOptions{})
	e.mustWrite(fw, bytes.Repeat([]byte("new"), 10000))
	if err := fw.Close(); err != nil {
		t.Errorf("Close without Commit: %v", err)
	}
	e.wantContent(e.p("f"), []byte("old"))
	e.wantNames(e.p("."), "f")
	e.wantRaw(e.p("f"))
}

// testAbandonNew checks that an abandoned write of a new file leaves
// nothing behind.
func (s *suite) testAbandonNew(t *testing.T) {
	e := s.setup(t)
	w := e.writer()
	e.put("other", []byte("x"))
	fw := e.openWrite(w, e.p("new"), backend.WriteOptions{})
	e.mustWrite(fw, []byte("never committed"))
	if err := fw.Close(); err != nil {
		t.Errorf("Close without Commit: %v", err)
	}
	e.wantMissing(e.p("new"))
	e.wantNames(e.p("."), "other")
	e.wantRaw(e.p("other"))
}

// testAbandonNewDir checks that an abandoned write into missing
// directories leaves no file behind (the directories themselves may
// stay).
func (s *suite) testAbandonNewDir(t *testing.T) {
	e := s.setup(t)
	w := e.writer()
	fw := e.openWrite(w, e.p("n1/n2/new"), backend.WriteOptions{})
	e.mustWrite(fw, []byte("never committed"))
	if err := fw.Close(); err != nil {
		t.Errorf("Close without Commit: %v", err)
	}
	e.wantMissing(e.p("n1/n2/new"))
	if names := e.listOrEmpty(e.p("n1/n2")); len(names) != 0 {
		t.Errorf("List(%q) = %q after the abandoned write, want nothing", e.p("n1/n2"), names)
	}
	e.wantRaw()
}

// testAbandonUnwritten checks that a handle closed without any Write
// changes nothing, which also covers a backend creating its temporary
// file lazily.
func (s *suite) testAbandonUnwritten(t *testing.T) {
	e := s.setup(t)
	w := e.writer()
	e.put("f", []byte("old"))
	for _, name := range []string{"f", "g"} {
		fw := e.openWrite(w, e.p(name), backend.WriteOptions{})
		if err := fw.Close(); err != nil {
			t.Errorf("Close of %q without Commit: %v", name, err)
		}
	}
	e.wantContent(e.p("f"), []byte("old"))
	e.wantMissing(e.p("g"))
	e.wantNames(e.p("."), "f")
	e.wantRaw(e.p("f"))
}

// testInvisibleBeforeCommit checks that written bytes are not visible
// under the target's name before Commit, neither replacing an old file
// nor as a new one.
func (s *suite) testInvisibleBeforeCommit(t *testing.T) {
	e := s.setup(t)
	w := e.writer()
	e.put("f", []byte("old"))
	fwOld := e.openWrite(w, e.p("f"), backend.WriteOptions{})
	e.mustWrite(fwOld, []byte("pending"))
	fwNew := e.openWrite(w, e.p("g"), backend.WriteOptions{})
	e.mustWrite(fwNew, []byte("pending"))
	e.wantContent(e.p("f"), []byte("old"))
	e.wantMissing(e.p("g"))
	if err := fwOld.Commit(); err != nil {
		t.Fatalf("Commit(f): %v", err)
	}
	if err := fwNew.Commit(); err != nil {
		t.Fatalf("Commit(g): %v", err)
	}
	e.wantContent(e.p("f"), []byte("pending"))
	e.wantContent(e.p("g"), []byte("pending"))
}

// testPendingNotListed checks that a write in progress shows nothing in
// listings and walks: a temporary file a backend needs must stay out of
// them, or a model listing the directory meanwhile would see it.
func (s *suite) testPendingNotListed(t *testing.T) {
	e := s.setup(t)
	w := e.writer()
	e.put("f", []byte("old"))
	for _, name := range []string{"f", "g"} {
		fw := e.openWrite(w, e.p(name), backend.WriteOptions{})
		e.mustWrite(fw, []byte("pending"))
	}
	e.wantNames(e.p("."), "f")
	e.checkStagedNames(e.p("f"))
	got := e.walk(e.b, e.p("."))
	if len(got.order) != 1 || got.order[0] != "f" {
		t.Errorf("Walk(%q) during pending writes reported %q, want only \"f\"", e.p("."), got.order)
	}
}

// testNoTempAfterCommit checks that creating and replacing files leaves
// exactly the targets in storage.
func (s *suite) testNoTempAfterCommit(t *testing.T) {
	e := s.setup(t)
	e.writer()
	e.put("f", []byte("1"))
	e.put("f", []byte("2"))
	e.put("d/g", []byte("3"))
	e.put("d/g", []byte("4"))
	e.wantNames(e.p("."), "d", "f")
	e.wantNames(e.p("d"), "g")
	e.wantRaw(e.p("f"), e.p("d/g"))
}

// testCloseAfterCommit checks that Close after a successful Commit is a
// no-op returning nil.
func (s *suite) testCloseAfterCommit(t *testing.T) {
	e := s.setup(t)
	w := e.writer()
	fw := e.openWrite(w, e.p("f"), backend.WriteOptions{})
	e.mustWrite(fw, []byte("kept"))
	if err := fw.Commit(); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	for i := range 2 {
		if err := fw.Close(); err != nil {
			t.Errorf("Close #%d after Commit = %v, want nil", i+1, err)
		}
	}
	e.wantContent(e.p("f"), []byte("kept"))
	e.wantRaw(e.p("f"))
}

// alternating are two contents of different lengths, so a reader that
// sees a mix or a prefix of either is caught.
func alternating() [2][]byte {
	return [2][]byte{
		bytes.Repeat([]byte("A"), 64<<10),
		bytes.Repeat([]byte("bb"), 48<<10+3),
	}
}

// testConcurrentReaders runs readers against two writers that replace a
// file with two full contents in turn, RunOptions.ConcurrentRounds times.
// Every read must see one of them whole, every Stat one of their sizes,
// and every listing the file exactly once: a replacement that removes the
// old file before the new one is in place shows up as a missing file. A
// backend that says Capabilities.NonAtomicReplace may show the file
// missing for a moment, and only that: never partial, resized or listed
// twice.
func (s *suite) testConcurrentReaders(t *testing.T) {
	e := s.setup(t)
	w := e.writer()
	contents := alternating()
	name := e.p("f")
	e.put("f", contents[0])

	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	var observed atomic.Int64
	var readers sync.WaitGroup
	observers := replaceObservers()
	errs := make(chan error, len(observers))
	for _, observe := range observers {
		readers.Go(func() {
			for ctx.Err() == nil {
				if err := observe(ctx, e, name, contents); err != nil {
					if ctx.Err() == nil {
						errs <- err
					}
					return
				}
				observed.Add(1)
			}
		})
	}
	rounds := s.opts.ConcurrentRounds
	var writers sync.WaitGroup
	writeErrs := make([]error, 2)
	for k := range 2 {
		writers.Go(func() {
			for i := range rounds / 2 {
				if err := writeOnce(e.ctx, w, name, contents[(i+k+1)%2], backend.WriteOptions{}); err != nil {
					writeErrs[k] = fmt.Errorf("writer %d, write #%d: %w", k, i, err)
					return
				}
			}
		})
	}
	writers.Wait()
	cancel()
	readers.Wait()
	close(errs)
	if err := errors.Join(writeErrs...); err != nil {
		t.Error(err)
	}
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d whole observations during %d replacements", observed.Load(), rounds)
	got := e.read(name)
	if !bytes.Equal(got, contents[0]) && !bytes.Equal(got, contents[1]) {
		t.Errorf("after the writers finished %q holds %s, which is neither full content", name, describe(got))
	}
	e.wantRaw(name)
}

// replaceObservers look at a file while it is being replaced, each
// returning an error when what it saw is neither content whole. Two read,
// since a torn read is the likeliest gap.
func replaceObservers() []func(ctx context.Context, e *env, name string, contents [2][]byte) error {
	return []func(ctx context.Context, e *env, name string, contents [2][]byte) error{
		observeRead, observeRead, observeStat, observeList,
	}
}

// replaceGap reports whether err is the missing file a backend with
// Capabilities.NonAtomicReplace may show while it replaces one.
func (e *env) replaceGap(err error) bool {
	return e.caps.NonAtomicReplace && errors.Is(err, fs.ErrNotExist)
}

func observeRead(ctx context.Context, e *env, name string, contents [2][]byte) error {
	data, err := backend.ReadFile(ctx, e.b, name)
	if e.replaceGap(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading while a writer replaces the file: %w", err)
	}
	if !bytes.Equal(data, contents[0]) && !bytes.Equal(data, contents[1]) {
		return fmt.Errorf("a reader saw %s, which is neither full content", describe(data))
	}
	return nil
}

func observeStat(ctx context.Context, e *env, name string, contents [2][]byte) error {
	fi, err := backend.Stat(ctx, e.b, name)
	if e.replaceGap(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("Stat while a writer replaces the file: %w", err)
	}
	if !fi.IsRegular() || (fi.Size != int64(len(contents[0])) && fi.Size != int64(len(contents[1]))) {
		return fmt.Errorf("Stat while a writer replaces the file = %+v, want a regular file of %d or %d bytes", fi, len(contents[0]), len(contents[1]))
	}
	return nil
}

// observeList checks that the file stays listed exactly once (at most
// once with Capabilities.NonAtomicReplace). Other names
// are not judged here: a server may link its own temporary name for an
// instant while it commits (versitygw does), and what a pending write may
// show is PendingWriteNotListed's to check.
func observeList(ctx context.Context, e *env, name string, contents [2][]byte) error {
	dir, base := backend.Split(name)
	entries, err := e.b.List(ctx, dir)
	if err != nil {
		return fmt.Errorf("List while a writer replaces a file in it: %w", err)
	}
	n := 0
	for _, en := range entries {
		if en.Name == base {
			n++
		}
	}
	if n > 1 || n == 0 && !e.caps.NonAtomicReplace {
		return fmt.Errorf("List(%q) while a writer replaces %q listed it %d times, want once", dir, base, n)
	}
	return nil
}

// testConcurrentWriters runs writers without preconditions that replace
// the same file at once; the result must be one writer's content whole
// and no temporary file may remain.
func (s *suite) testConcurrentWriters(t *testing.T) {
	e := s.setup(t)
	w := e.writer()
	name := e.p("f")
	n := s.opts.ConcurrentWriters
	contents := make([][]byte, n)
	for i := range contents {
		contents[i] = bytes.Repeat([]byte{byte('a' + i%26)}, 32<<10+i)
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			for range max(s.opts.ConcurrentRounds/n, 1) {
				if err := writeOnce(e.ctx, w, name, contents[i], backend.WriteOptions{}); err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Errorf("concurrent writes without preconditions failed: %v", err)
	}
	got := e.read(name)
	whole := false
	for _, c := range contents {
		whole = whole || bytes.Equal(got, c)
	}
	if !whole {
		t.Errorf("after concurrent writes %q holds %s, which is no writer's content", name, describe(got))
	}
	e.wantNames(e.p("."), "f")
	e.wantRaw(name)
}
