package checkpoint

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fencefs/fencefs/backend"
)

// Options configure a Journal. The zero value keeps everything.
type Options struct {
	// Prefix is the directory of the store the journal lives in ("." or
	// empty for the store's root). Records are Prefix/journal/<seq>.json
	// (frames of Prefix/journal/*.log segments with Segments on a local
	// directory), content Prefix/blobs/<sha256>.
	Prefix string
	// KeepCount, when not 0, is how many changes (and restores) Prune
	// keeps: the oldest go first.
	KeepCount int
	// KeepAge, when not 0, is how long Prune keeps a change.
	KeepAge time.Duration
	// KeepBytes, when not 0, bounds the bytes Prune keeps in the store
	// (content and records): the oldest changes go until the rest fits.
	KeepBytes int64
	// Now returns the time records carry; time.Now when nil.
	Now func() time.Time
	// InlineBytes bounds the pre-images kept inside a change's own
	// record rather than as objects of their own (one object per change
	// instead of two): a record holds at most this many bytes of them;
	// 0 means 64 KiB, a negative value none.
	InlineBytes int64
	// Segments keeps the records in segment files where the store can
	// write a file in place (backend.LogOpener: a local directory): one
	// frame and one fdatasync per record instead of a file created,
	// synced and renamed and a directory synced (see docs/checkpoints.md).
	// A store that holds segments already keeps its records in them
	// whatever Segments says, so that every journal of one store numbers
	// its records the same way; every other store keeps one object per
	// record.
	Segments bool
	// Admit, when set, is asked before the journal adds an object to
	// its store (a pre-image's content, a record), with the context of
	// the call that makes it and the bytes it is about to add: a tenant's
	// quota counts the store this way. An error refuses the addition:
	// a change is then cancelled with the error's text (nothing of it is
	// committed), a restore fails before it changes anything.
	Admit func(ctx context.Context, bytes int64) error
}

// AdmitError is the error of what the host refused: a store addition
// (Options.Admit), a restore (RestoreOptions.BeforeApply).
type AdmitError struct{ Err error }

func (e *AdmitError) Error() string { return e.Err.Error() }

// Unwrap returns Admit's error.
func (e *AdmitError) Unwrap() error { return e.Err }

// admit asks Options.Admit for n more bytes in the store.
func (j *Journal) admit(ctx context.Context, n int64) error {
	if j.opts.Admit == nil {
		return nil
	}
	if err := j.opts.Admit(ctx, n); err != nil {
		return &AdmitError{Err: err}
	}
	return nil
}

// defaultInlineBytes is Options.InlineBytes when it is 0.
const defaultInlineBytes = 64 << 10

// Journal records the pre-images of every change a tool call makes to a
// namespace, in a store that is any writable backend, and restores the
// namespace to any checkpoint it holds. A Journal is safe for concurrent
// use. Several Journals (in several processes) may share one store where
// the store's preconditions are atomic (Capabilities.AtomicPreconditions):
// records are created create-only, or, on a local directory, numbered
// under a lock file, so two writers never take the same sequence number.
// A Journal on a local directory holds its segment and lock file open
// until Close (or the store's Close).
type Journal struct {
	ns, store backend.Backend
	caps      backend.Capabilities
	opts      Options

	mu      sync.Mutex
	recs    map[uint64]*record // the records kept, by sequence number
	order   []uint64           // their sequence numbers, ascending
	next    uint64             // the next sequence number to try
	cut     uint64             // records up to cut are pruned
	blobs   map[string]int64   // content stored as objects, by hash: size
	inlined map[string]uint64  // content stored inside a record: hash -> its record
	sizes   map[uint64]int64   // bytes of each record kept
	done    map[uint64]bool    // restores applied completely
	// used is what blobs and sizes add up to, kept as they change and
	// read without mu (Usage), since a quota may ask for it from inside
	// Options.Admit.
	used    struct{ content, blobs, records, recordCount atomic.Int64 }
	unsaved []afterState // after-states not yet in a record
	label   string
	calls   uint64
	// log is the state of a store whose records are kept in segments
	// (see segment.go), nil on a store of one object per record.
	log *segLog
}

// Open opens the journal of the namespace ns kept in store, reading the
// records and the content index already there. store must be writable and
// must not be reachable by the namespace's tools (a directory outside its
// root, another bucket or prefix).
func Open(ctx context.Context, ns, store backend.Backend, opts Options) (*Journal, error) {
	if ns == nil || store == nil {
		return nil, errors.New("checkpoint: nil backend")
	}
	if backend.CapabilitiesOf(store).ReadOnly {
		return nil, fmt.Errorf("checkpoint: the store is read-only")
	}
	if _, ok := store.(backend.Writer); !ok {
		return nil, fmt.Errorf("checkpoint: the store cannot write")
	}
	if opts.Prefix == "" {
		opts.Prefix = "."
	}
	if !backend.ValidPath(opts.Prefix) {
		return nil, fmt.Errorf("checkpoint: invalid store prefix %q", opts.Prefix)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.InlineBytes == 0 {
		opts.InlineBytes = defaultInlineBytes
	}
	j := &Journal{
		ns: ns, store: store, caps: backend.CapabilitiesOf(ns), opts: opts,
		recs: map[uint64]*record{}, blobs: map[string]int64{}, sizes: map[uint64]int64{}, done: map[uint64]bool{},
		inlined: map[string]uint64{},
		next:    1,
	}
	if o, ok := store.(backend.LogOpener); ok && opts.Segments {
		j.log = newSegLog(o)
	}
	if err := j.loadBlobs(ctx); err != nil {
		return nil, err
	}
	if err := j.refresh(ctx); err != nil {
		return nil, err
	}
	return j, nil
}

// setBlob records the size of the stored content hash, -1 for content
// removed. The caller holds mu or owns j.
func (j *Journal) setBlob(hash string, size int64) {
	if old, ok := j.blobs[hash]; ok {
		j.used.content.Add(-old)
		j.used.blobs.Add(-1)
		delete(j.blobs, hash)
	}
	if size >= 0 {
		j.blobs[hash] = size
		j.used.content.Add(size)
		j.used.blobs.Add(1)
	}
}

// setSize records the size of record seq, -1 for a record dropped. The
// caller holds mu or owns j.
func (j *Journal) setSize(seq uint64, size int64) {
	if old, ok := j.sizes[seq]; ok {
		j.used.records.Add(-old)
		j.used.recordCount.Add(-1)
		delete(j.sizes, seq)
	}
	if size >= 0 {
		j.sizes[seq] = size
		j.used.records.Add(size)
		j.used.recordCount.Add(1)
	}
}

// storePath returns the store path of rel under the journal's prefix.
func (j *Journal) storePath(rel string) string {
	if j.opts.Prefix == "." {
		return rel
	}
	return j.opts.Prefix + "/" + rel
}

func (j *Journal) blobPath(hash string) string { return j.storePath("blobs/" + hash) }

// loadBlobs reads the index of the content stored.
func (j *Journal) loadBlobs(ctx context.Context) error {
	entries, err := j.store.List(ctx, j.storePath("blobs"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checkpoint: listing the store's content: %w", err)
	}
	for _, e := range entries {
		if validHash(e.Name) && e.IsRegular() {
			j.setBlob(e.Name, e.Size)
		}
	}
	return nil
}

// refresh reads the records written since the last look (by this journal
// or another sharing its store): objects, and frames appended to
// segments. The caller holds mu or owns j.
func (j *Journal) refresh(ctx context.Context) error {
	entries, err := j.store.List(ctx, j.storePath("journal"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checkpoint: listing the journal: %w", err)
	}
	var seqs []uint64
	var found []loaded
	for _, e := range entries {
		if seq, ok := parseRecordName(e.Name); ok && e.IsRegular() {
			if _, have := j.recs[seq]; !have && seq > j.cut {
				seqs = append(seqs, seq)
			}
			if seq >= j.next {
				j.next = seq + 1
			}
		}
		if j.log == nil && (isSegmentName(e.Name) || e.Name == seqLockName) {
			// Another journal keeps this store's records in
			// segments: so does this one from now on.
			if o, ok := j.store.(backend.LogOpener); ok {
				j.log = newSegLog(o)
			}
		}
		if j.log != nil && isSegmentName(e.Name) && e.IsRegular() {
			st := j.log.segs[e.Name]
			if st == nil {
				st = &segStats{}
				j.log.segs[e.Name] = st
			}
			st.mod = e.ModTime
			recs, err := j.readSegment(ctx, e.Name, e.Size)
			if err != nil {
				return err
			}
			found = append(found, recs...)
		}
	}
	for _, seq := range seqs {
		data, err := backend.ReadFile(ctx, j.store, j.storePath("journal/"+recordName(seq)))
		if errors.Is(err, fs.ErrNotExist) {
			continue // pruned meanwhile
		}
		if err != nil {
			return fmt.Errorf("checkpoint: reading record %d: %w", seq, err)
		}
		r, err := decodeRecord(data, seq)
		if err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		found = append(found, loaded{r: r, size: int64(len(data))})
	}
	return j.take(found)
}

// take adds the records found in the store to the journal, in order. Two
// records of one sequence number (in two places) are an error, and the
// journal takes none of the records found: they are not the same change,
// and keeping either would silently drop the other's pre-images.
func (j *Journal) take(found []loaded) error {
	slices.SortFunc(found, func(a, b loaded) int { return cmp.Compare(a.r.Seq, b.r.Seq) })
	for i, f := range found {
		if f.r.Seq <= j.cut {
			continue
		}
		if i > 0 && found[i-1].r.Seq == f.r.Seq {
			return duplicateError(f.r.Seq, found[i-1].loc, f.loc)
		}
		if _, have := j.recs[f.r.Seq]; have {
			var at recLoc
			if j.log != nil {
				at = j.log.locs[f.r.Seq]
			}
			if at != f.loc {
				return duplicateError(f.r.Seq, at, f.loc)
			}
		}
	}
	for _, f := range found {
		if f.r.Seq >= j.next {
			j.next = f.r.Seq + 1
		}
		if _, have := j.recs[f.r.Seq]; have || f.r.Seq <= j.cut {
			continue
		}
		if f.loc.seg != "" {
			j.log.locs[f.r.Seq] = f.loc
		}
		j.add(f.r, f.size)
	}
	return nil
}

// duplicateError is the error of record seq found at a and at b.
func duplicateError(seq uint64, a, b recLoc) error {
	where := func(l recLoc) string {
		if l.seg == "" {
			return "journal/" + recordName(seq)
		}
		return fmt.Sprintf("segment %s at %d", l.seg, l.off)
	}
	return fmt.Errorf("checkpoint: record %d is in the store twice (%s and %s): journals sharing the store took one sequence number; "+
		"move the newer aside (out of journal/) to open the journal again", seq, where(a), where(b))
}

// add takes the record r into the in-memory journal.
func (j *Journal) add(r *record, size int64) {
	switch r.Type {
	case typePrune:
		j.dropThrough(r.Ref)
	case typeDone:
		j.done[r.Ref] = true
	}
	for h := range r.Inline {
		if _, ok := j.inlined[h]; !ok {
			j.inlined[h] = r.Seq
		}
	}
	r.Inline = nil // read again from the record when needed
	j.recs[r.Seq] = r
	j.setSize(r.Seq, size)
	i, _ := slices.BinarySearch(j.order, r.Seq)
	j.order = slices.Insert(j.order, i, r.Seq)
	for _, a := range r.Afters {
		if e := j.recs[a.Seq]; e != nil {
			for i := range e.Paths {
				if e.Paths[i].Path == a.Path {
					st := a.State
					e.Paths[i].After = &st
				}
			}
		}
	}
	if r.Seq >= j.next {
		j.next = r.Seq + 1
	}
}

// dropThrough forgets the records up to cut.
func (j *Journal) dropThrough(cut uint64) {
	if cut <= j.cut {
		return
	}
	j.cut = cut
	for h, seq := range j.inlined {
		if seq <= cut {
			delete(j.inlined, h)
		}
	}
	if j.log != nil {
		for seq := range j.log.locs {
			if seq <= cut {
				delete(j.log.locs, seq)
			}
		}
	}
	keep := j.order[:0]
	for _, seq := range j.order {
		if seq <= cut {
			delete(j.recs, seq)
			j.setSize(seq, -1)
			delete(j.done, seq)
			continue
		}
		keep = append(keep, seq)
	}
	j.order = keep
}

// write stores r as the next record, carrying the after-states not yet
// saved, and takes it into the journal. It retries with a later sequence
// number when another writer took r's. The caller holds mu.
func (j *Journal) write(ctx context.Context, r *record) error {
	data, err := j.prepare(ctx, r)
	if err != nil {
		return err
	}
	return j.putRecord(ctx, r, data)
}

// prepare numbers r as the next record, carrying the after-states not
// yet saved, encodes it and asks Options.Admit for its bytes; putRecord then
// stores it. The caller holds mu from prepare to the end of putRecord.
func (j *Journal) prepare(ctx context.Context, r *record) ([]byte, error) {
	r.Afters = j.unsaved
	r.Time = j.opts.Now().UTC()
	r.Seq = j.next
	data, err := encodeRecord(r)
	if err != nil {
		return nil, err
	}
	if err := j.admit(ctx, int64(len(data))); err != nil {
		return nil, err
	}
	return data, nil
}

// putRecord stores r, encoded by prepare as data, and takes it into the
// journal: as a frame of the journal's segment on a store kept in
// segments, as an object of its own otherwise, in which case it retries
// with a later sequence number when another writer took r's. The caller
// holds mu.
func (j *Journal) putRecord(ctx context.Context, r *record, data []byte) error {
	if j.log == nil && j.segmented(ctx) {
		if err := j.refresh(ctx); err != nil {
			return err
		}
	}
	if j.log != nil {
		return j.putLogRecord(ctx, r, data)
	}
	for try := range 8 {
		if try > 0 {
			r.Seq = j.next
			var err error
			if data, err = encodeRecord(r); err != nil {
				return err
			}
		}
		err := backend.WriteFile(ctx, j.store, j.storePath("journal/"+recordName(r.Seq)), data,
			backend.WriteOptions{Precondition: backend.Precondition{CreateOnly: true}})
		if errors.Is(err, fs.ErrExist) {
			if err := j.refresh(ctx); err != nil {
				return err
			}
			if j.next <= r.Seq {
				j.next = r.Seq + 1
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("checkpoint: writing record %d: %w", r.Seq, err)
		}
		if j.segmented(ctx) {
			// journal/seq.lock appeared while the record was written:
			// a journal keeping segments may have numbered a frame
			// without seeing it (a journal that creates the lock file
			// reads the store first, so one created after this look
			// sees the object). Take the object back and write the
			// record as a frame, numbered under the lock.
			if err := j.removeObject(ctx, j.storePath("journal/"+recordName(r.Seq))); err != nil {
				return fmt.Errorf("checkpoint: writing record %d: %w", r.Seq, err)
			}
			if err := j.refresh(ctx); err != nil {
				return err
			}
			if j.log != nil {
				return j.putLogRecord(ctx, r, data)
			}
			continue
		}
		j.unsaved = nil
		j.add(r, int64(len(data)))
		return nil
	}
	return fmt.Errorf("checkpoint: writing a record: other writers took every sequence number tried")
}

// segmented reports whether a journal keeping records as objects in a
// store that can hold segments finds that another journal started
// keeping them in segments (journal/seq.lock exists): it must then too.
func (j *Journal) segmented(ctx context.Context) bool {
	if _, ok := j.store.(backend.LogOpener); !ok {
		return false
	}
	_, err := backend.Stat(ctx, j.store, j.storePath("journal/"+seqLockName))
	return err == nil
}

// storeContent keeps the content of the file name on src under its
// hash, unless the store holds it already: in inline (the record about to
// be written) when it is at most InlineBytes long, as an object of its
// own otherwise. want, when not empty, is the hash the content must have:
// a file holding anything else (it changed under the caller) fails with
// backend.ErrPrecondition and keeps nothing. size is the content's size
// when known, -1 otherwise. It returns the content's hash and size.
func (j *Journal) storeContent(ctx context.Context, src backend.Backend, name, want string, size int64, inline map[string][]byte) (string, int64, error) {
	if want != "" && j.hasBlob(want) {
		return want, size, nil
	}
	if _, ok := inline[want]; ok && want != "" {
		return want, size, nil
	}
	if size >= 0 && size+inlineBytes(inline) <= j.opts.InlineBytes {
		r, err := src.OpenRead(ctx, name)
		if err != nil {
			return "", 0, err
		}
		data, err := io.ReadAll(io.LimitReader(r, j.opts.InlineBytes-inlineBytes(inline)+1))
		r.Close()
		if err != nil {
			return "", 0, backend.PathError("read", name, err)
		}
		if int64(len(data))+inlineBytes(inline) <= j.opts.InlineBytes {
			h := sha256Hex(data)
			if want != "" && h != want {
				return "", 0, &fs.PathError{Op: "read", Path: name, Err: backend.ErrPrecondition}
			}
			if !j.hasBlob(h) {
				inline[h] = data
			}
			return h, int64(len(data)), nil
		}
		// It grew past the bound since its size was read: store it apart.
	}
	if want == "" {
		h, n, err := hashFile(ctx, src, name)
		if err != nil {
			return "", 0, err
		}
		if j.hasBlob(h) {
			fi, err := backend.Stat(ctx, src, name)
			return h, fi.Size, err
		}
		want, size = h, n
	}
	if size < 0 {
		fi, err := backend.Stat(ctx, src, name)
		if err != nil {
			return "", 0, err
		}
		size = fi.Size
	}
	if err := j.admit(ctx, size); err != nil {
		return "", 0, err
	}
	n := &countingReader{src: src}
	err := backend.CopyStream(ctx, n, name, j.store, j.blobPath(want), backend.CopyOptions{
		Precondition: backend.Precondition{CreateOnly: true},
		Source:       backend.Precondition{MatchHash: want},
	})
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return "", 0, err
	}
	if errors.Is(err, fs.ErrExist) {
		fi, serr := backend.Stat(ctx, j.store, j.blobPath(want))
		if serr != nil {
			return "", 0, serr
		}
		n.n = fi.Size
	}
	j.setBlob(want, n.n)
	return want, n.n, nil
}

// inlineBytes is the content a record holds inline so far.
func inlineBytes(inline map[string][]byte) int64 {
	var n int64
	for _, c := range inline {
		n += int64(len(c))
	}
	return n
}

// hasBlob reports whether content hash is stored (as an object or inside
// a record).
func (j *Journal) hasBlob(hash string) bool {
	if _, ok := j.blobs[hash]; ok {
		return true
	}
	_, ok := j.inlined[hash]
	return ok
}

// openContent opens the stored content hash.
func (j *Journal) openContent(ctx context.Context, hash string) (io.ReadCloser, error) {
	if _, ok := j.blobs[hash]; !ok {
		if seq, ok := j.inlined[hash]; ok {
			r, err := j.readRecord(ctx, seq)
			if err != nil {
				return nil, err
			}
			if c, ok := r.Inline[hash]; ok {
				return io.NopCloser(bytes.NewReader(c)), nil
			}
			return nil, fmt.Errorf("checkpoint: record %d lost content %s", seq, hash)
		}
	}
	return j.store.OpenRead(ctx, j.blobPath(hash))
}

// readRecord reads record seq back from the store.
func (j *Journal) readRecord(ctx context.Context, seq uint64) (*record, error) {
	if j.log != nil {
		if _, ok := j.log.locs[seq]; ok {
			return j.readLogRecord(ctx, seq)
		}
	}
	data, err := backend.ReadFile(ctx, j.store, j.storePath("journal/"+recordName(seq)))
	if err != nil {
		return nil, err
	}
	return decodeRecord(data, seq)
}

// Close releases what the journal holds open in its store (on a local
// directory, its segment and lock file; closing the store releases them
// too). A journal used after Close opens them again.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.log == nil {
		return nil
	}
	j.log.retire(true)
	if j.log.seqf != nil {
		err := j.log.seqf.Close()
		j.log.seqf = nil
		return err
	}
	return nil
}

// hashFile returns the SHA-256 and size of the file name on b.
func hashFile(ctx context.Context, b backend.Reader, name string) (string, int64, error) {
	r, err := b.OpenRead(ctx, name)
	if err != nil {
		return "", 0, err
	}
	defer r.Close()
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return "", 0, backend.PathError("read", name, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// countingReader counts the bytes read from the streams it opens.
type countingReader struct {
	n   int64
	src backend.Reader
}

func (c *countingReader) OpenRead(ctx context.Context, name string) (backend.FileReader, error) {
	r, err := c.src.OpenRead(ctx, name)
	if err != nil {
		return nil, err
	}
	return backend.NewFileReader(&counted{r, &c.n}, r.Info()), nil
}

type counted struct {
	io.ReadCloser
	n *int64
}

func (c *counted) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	*c.n += int64(n)
	return n, err
}

// ReadBlob returns the content stored under hash (a pre-image a
// checkpoint holds), for showing or comparing it.
func (j *Journal) ReadBlob(ctx context.Context, hash string) ([]byte, error) {
	if !validHash(hash) {
		return nil, fmt.Errorf("checkpoint: invalid hash %q", hash)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	r, err := j.openContent(ctx, hash)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// stateOf reads the current state of the storage path name on the
// namespace, hashing a regular file. version is the file's version token
// where the backend has one.
func (j *Journal) stateOf(ctx context.Context, name string) (st State, version string, err error) {
	fi, err := backend.Stat(ctx, j.ns, name)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, backend.ErrNotDir) {
		return State{Kind: Missing}, "", nil
	}
	if err != nil {
		return State{}, "", err
	}
	switch {
	case fi.IsDir():
		return State{Kind: Dir}, "", nil
	case fi.IsSymlink():
		link, err := backend.Readlink(ctx, j.ns, name)
		if err != nil {
			return State{}, "", err
		}
		return State{Kind: Symlink, Link: link}, "", nil
	case !fi.IsRegular():
		return State{Kind: Other}, "", nil
	}
	r, err := j.ns.OpenRead(ctx, name)
	if errors.Is(err, fs.ErrNotExist) {
		return State{Kind: Missing}, "", nil
	}
	if err != nil {
		return State{}, "", err
	}
	defer r.Close()
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return State{}, "", backend.PathError("read", name, err)
	}
	st = State{Kind: File, Hash: hex.EncodeToString(h.Sum(nil)), Size: n}
	if j.caps.ModeBits {
		st.Mode = fi.Mode.Perm()
	}
	return st, r.Info().Version, nil
}

// storagePath turns a path of the tools (rooted "/m/x" in a rooted
// namespace, relative otherwise) into the namespace's storage path.
func (j *Journal) storagePath(p string) string {
	if strings.HasPrefix(p, "/") {
		return backend.VirtualToStorage(p)
	}
	return p
}
