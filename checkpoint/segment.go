package checkpoint

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fencefs/fencefs/backend"
)

// On a store that can append in place (backend.LogOpener: a local
// directory) records are not objects of their own but frames appended to
// segment files, journal/<20-digit nanoseconds>-<16 hex>.log, one
// segment per writing journal at a time, so that journals sharing a store
// never write to the same file:
//
//	segment = magic frame*
//	frame   = length (4 bytes, big-endian) CRC-32C of payload (4 bytes) payload
//
// payload is a record as an object holds it (JSON). A segment is filled
// with zeros ahead of its frames (fillMin to fillMax bytes at a time,
// synced): a frame is written over those zeros and made durable by one
// data sync (fdatasync), and since the file's size and block map do not
// change, that sync carries no metadata (on ext4 it waits for no journal
// commit, which is what makes it cheap next to the edit's own syncs). The
// segment itself exists durably since its creation (created, synced with
// its directory, its magic and first zeros synced before its first frame).
// A crash during a write leaves at most one torn frame after the last
// whole one; readers stop at the first frame that is not whole (short,
// zero length, not matching its checksum) and ignore the rest, and the
// segment's journal never writes after a failed write or sync: it starts
// a new segment.
//
// Sequence numbers stay unique across journals through journal/seq.lock:
// a writer locks it (flock), reads the highest sequence number appended
// (8 bytes), reads the other segments when it is not its own last (or
// cannot be trusted: the lock file new to it, empty or behind), takes
// the next number, appends, writes the number back and unlocks; the data
// sync runs after the unlock. The number is a hint that is never synced:
// after a crash every journal reads every segment when it opens.

// segmentMagic opens every segment.
const segmentMagic = "fencefs journal segment 1\n"

// frameHeader is the bytes before a frame's payload.
const frameHeader = 8

// segmentBytes is the size past which a journal starts a new segment.
var segmentBytes int64 = 8 << 20

// A segment is filled with zeros fillMin bytes ahead at first, then as
// many bytes as it holds, up to fillMax at a time: a journal that records
// little leaves little unused.
const (
	fillMin = 4 << 10
	fillMax = 1 << 20
)

// readChunk is how much of a segment a reader reads at a time.
const readChunk = 64 << 10

// seqLockName is the lock file of the sequence numbers, in journal/.
const seqLockName = "seq.lock"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendFrame appends to dst the frame of payload.
func appendFrame(dst, payload []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(payload)))
	dst = binary.BigEndian.AppendUint32(dst, crc32.Checksum(payload, castagnoli))
	return append(dst, payload...)
}

// frame is one whole frame found in a segment: its payload and the
// payload's offset in data.
type frame struct {
	off     int
	payload []byte
}

// scanFrames returns the whole frames of data, which starts at a frame
// boundary (after the magic), and the offset just after the last one. It
// stops at the first frame that is not whole: short, empty, larger than a
// record may be, or not matching its checksum. need is, when data ended
// within a frame that may still be whole past it, how many bytes from
// end that frame needs (at least its header); 0 otherwise.
func scanFrames(data []byte) (frames []frame, end, need int) {
	for {
		rest := len(data) - end
		if rest < frameHeader {
			return frames, end, frameHeader
		}
		n := binary.BigEndian.Uint32(data[end:])
		sum := binary.BigEndian.Uint32(data[end+4:])
		if n == 0 || n > maxRecordBytes {
			return frames, end, 0
		}
		if uint64(rest-frameHeader) < uint64(n) {
			return frames, end, frameHeader + int(n)
		}
		p := data[end+frameHeader : end+frameHeader+int(n)]
		if crc32.Checksum(p, castagnoli) != sum {
			return frames, end, 0
		}
		frames = append(frames, frame{off: end + frameHeader, payload: p})
		end += frameHeader + int(n)
	}
}

// decodeLogRecord parses and validates a record read from a segment,
// which holds its own sequence number.
func decodeLogRecord(data []byte) (*record, error) {
	r, err := unmarshalRecord(data)
	if err != nil {
		return nil, err
	}
	if r.Seq == 0 {
		return nil, errors.New("record 0 in a segment")
	}
	if err := validateRecord(r, r.Seq); err != nil {
		return nil, err
	}
	return r, nil
}

// segmentName returns a new segment's name: its creation time, so that
// names sort by age, and 64 random bits, so that no two writers pick the
// same.
func segmentName(now time.Time) string {
	return fmt.Sprintf("%020d-%016x.log", now.UnixNano(), rand.Uint64())
}

// isSegmentName reports whether name has the shape segmentName gives.
func isSegmentName(name string) bool {
	base, ok := strings.CutSuffix(name, ".log")
	if !ok || len(base) != 20+1+16 || base[20] != '-' {
		return false
	}
	for i := 0; i < len(base); i++ {
		c := base[i]
		switch {
		case i == 20:
		case i < 20 && '0' <= c && c <= '9':
		case i > 20 && ('0' <= c && c <= '9' || 'a' <= c && c <= 'f'):
		default:
			return false
		}
	}
	return true
}

// segLog is the journal's state of a store kept in segments. The
// journal's mu guards it.
type segLog struct {
	opener backend.LogOpener
	seqf   backend.LogFile      // journal/seq.lock; nil until the first append
	own    *segFile             // the segment this journal appends to; nil until one is needed
	owned  string               // its name
	ownCap int64                // its size: zeros from own.end() on
	read   map[string]int64     // bytes of each segment read (whole frames and magic)
	segs   map[string]*segStats // what each segment read holds
	locs   map[uint64]recLoc    // where each record kept lies
}

// segFile is a segment the journal writes to, with its sync state,
// which the sync functions of its records share (they outlive the
// journal's use of the segment). Every data sync of the segment goes
// through sync: the kernel reports a failed write-back once per open file
// description, so after one sync of the descriptor failed, a later one
// may succeed although the data it was to make durable is lost. A failed
// sync is therefore sticky: every record not known durable by then fails,
// and the journal writes to the segment no more.
type segFile struct {
	f       backend.LogFile
	written atomic.Int64 // end of the frames written, where the next goes (set under the journal's mu)

	mu     sync.Mutex // guards what follows; taken after the journal's mu, never before
	synced int64      // the frames up to here are durable
	err    error      // why the segment's records past synced are not durable
}

// errGivenUp is the sync error of a record in a segment the journal gave
// up (after a failed write, or the file removed) before it was synced.
var errGivenUp = errors.New("its segment was given up before it was synced")

// sync makes the frames up to end durable: at once when a sync covered
// them already, with an error when a sync failed (now or before) or the
// segment was given up first, by a data sync otherwise, which covers
// every frame written when it starts (those written meanwhile by other
// calls too: their syncs then return at once).
func (s *segFile) sync(end int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if end <= s.synced {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	upTo := s.written.Load()
	if err := s.f.Sync(); err != nil {
		s.err = err
		return err
	}
	s.synced = max(s.synced, upTo)
	return nil
}

// close closes the segment's file, after a last sync of all its frames
// with sync; without, the frames not synced yet are given up.
func (s *segFile) close(sync bool) {
	if sync {
		s.sync(s.written.Load()) // a failure is kept in s.err
	}
	s.mu.Lock()
	if s.err == nil && s.synced < s.written.Load() {
		s.err = errGivenUp
	}
	s.f.Close()
	s.mu.Unlock()
}

// segStats is what one segment holds, as far as it was read.
type segStats struct {
	count int       // records
	max   uint64    // highest sequence number
	mod   time.Time // the file's modification time at the last look
}

// abandonedAge is how long after its last change a segment that holds no
// record (no magic, or no frame: its creation was cut short by a crash)
// is left before a prune removes it, when no journal holds its lock. A
// journal locks its segment within moments of creating it, so a segment
// that old and unlocked has no writer.
const abandonedAge = time.Hour

// recLoc is where a record's payload lies.
type recLoc struct {
	seg string
	off int64
	n   int
}

func newSegLog(o backend.LogOpener) *segLog {
	return &segLog{opener: o, read: map[string]int64{}, segs: map[string]*segStats{}, locs: map[uint64]recLoc{}}
}

// loaded is a record read from a segment, not yet taken into the journal.
type loaded struct {
	r    *record
	size int64
	loc  recLoc
}

// readSegment reads what segment name holds past what was read before,
// up to the end of its last whole frame; size is its size.
func (j *Journal) readSegment(ctx context.Context, name string, size int64) ([]loaded, error) {
	l := j.log
	pos := l.read[name]
	if size <= pos || name == l.owned && l.own != nil {
		return nil, nil // nothing new, or the journal's own
	}
	f, err := l.opener.OpenLog(ctx, j.storePath("journal/"+name), false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // pruned meanwhile
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: opening segment %s: %w", name, err)
	}
	defer f.Close()
	st := l.segs[name]
	if st == nil {
		st = &segStats{}
		l.segs[name] = st
	}
	var out []loaded
	want := int64(readChunk)
	for pos < size {
		data := make([]byte, min(size-pos, want))
		n, err := f.ReadAt(data, pos)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("checkpoint: reading segment %s: %w", name, err)
		}
		data = data[:n]
		start := 0
		if pos == 0 {
			if !strings.HasPrefix(string(data[:min(len(data), len(segmentMagic))]), segmentMagic) {
				// Not a segment, or one whose creation a crash
				// cut short: nothing in it was ever a record.
				return nil, nil
			}
			start = len(segmentMagic)
		}
		frames, end, need := scanFrames(data[start:])
		for _, fr := range frames {
			r, err := decodeLogRecord(fr.payload)
			if err != nil {
				return nil, fmt.Errorf("checkpoint: segment %s at %d: %w", name, pos+int64(start+fr.off), err)
			}
			st.count++
			st.max = max(st.max, r.Seq)
			out = append(out, loaded{r: r, size: int64(len(fr.payload)), loc: recLoc{seg: name, off: pos + int64(start+fr.off), n: len(fr.payload)}})
		}
		pos += int64(start + end)
		l.read[name] = pos
		if need == 0 || n < len(data) || pos+int64(need) > size {
			break
		}
		want = max(readChunk, int64(need))
	}
	return out, nil
}

// readLogRecord reads record seq back from its segment.
func (j *Journal) readLogRecord(ctx context.Context, seq uint64) (*record, error) {
	loc, ok := j.log.locs[seq]
	if !ok {
		return nil, fmt.Errorf("record %d: not in any segment", seq)
	}
	var f backend.LogFile
	if loc.seg == j.log.owned && j.log.own != nil {
		f = j.log.own.f
	} else {
		var err error
		f, err = j.log.opener.OpenLog(ctx, j.storePath("journal/"+loc.seg), false)
		if err != nil {
			return nil, err
		}
		defer f.Close()
	}
	data := make([]byte, loc.n)
	if _, err := f.ReadAt(data, loc.off); err != nil {
		return nil, fmt.Errorf("record %d: %w", seq, err)
	}
	r, err := decodeLogRecord(data)
	if err == nil && r.Seq != seq {
		err = fmt.Errorf("record %d: holds sequence number %d", seq, r.Seq)
	}
	return r, err
}

// openSeqLock opens journal/seq.lock, creating it when missing.
func (j *Journal) openSeqLock(ctx context.Context) (backend.LogFile, error) {
	name := j.storePath("journal/" + seqLockName)
	for range 3 {
		f, err := j.log.opener.OpenLog(ctx, name, false)
		if errors.Is(err, fs.ErrNotExist) {
			f, err = j.log.opener.OpenLog(ctx, name, true)
			if errors.Is(err, fs.ErrExist) {
				continue // created meanwhile by another journal
			}
		}
		return f, err
	}
	return nil, fmt.Errorf("checkpoint: opening %s: created and removed again and again", name)
}

// lockSeq opens (when need be) and locks journal/seq.lock, and returns the
// highest sequence number appended it holds. A lock file removed since it
// was opened (the store's journal directory replaced) is opened again.
// fresh tells that the number is not to be trusted: the lock file was
// (re)opened by this call, so it may be new while the store holds records
// past it, or it holds no number yet.
func (j *Journal) lockSeq(ctx context.Context) (last uint64, fresh bool, err error) {
	l := j.log
	for range 3 {
		if l.seqf == nil {
			fresh = true
			f, err := j.openSeqLock(ctx)
			if err != nil {
				return 0, false, err
			}
			l.seqf = f
		}
		if err := lockBounded(ctx, l.seqf); err != nil {
			return 0, false, err
		}
		gone, err := l.seqf.Removed()
		if err == nil && !gone {
			var b [8]byte
			n, err := l.seqf.ReadAt(b[:], 0)
			if err != nil && !errors.Is(err, io.EOF) {
				l.seqf.Unlock()
				return 0, false, err
			}
			if n < len(b) {
				return 0, true, nil
			}
			return binary.BigEndian.Uint64(b[:]), fresh, nil
		}
		l.seqf.Close()
		l.seqf = nil
		if err != nil {
			return 0, false, err
		}
	}
	return 0, false, errors.New("checkpoint: the journal's lock file keeps being removed")
}

// retire stops writing to the journal's segment (it is full, to be
// collected, or a write or sync failed): the next record starts a new one.
// With sync, the segment is synced first, so that the records written to
// it whose sync the tools have not run yet are durable: their sync then
// succeeds on the closed file. Without (a sync failed, the file was
// removed), theirs fail.
func (l *segLog) retire(sync bool) {
	if l.own == nil {
		return
	}
	l.own.close(sync)
	l.own, l.owned, l.ownCap = nil, "", 0
}

// ensureSegment makes sure the journal has a segment of its own with n
// bytes of zeros where its next frame goes: a new segment is created when there is none,
// it was removed, or it is full, and zeros are added (and synced) when too
// few are left. The journal holds the segment's lock for as long as it
// writes to it, which keeps a prune from collecting it.
func (j *Journal) ensureSegment(ctx context.Context, n int) error {
	l := j.log
	if l.own != nil {
		gone, err := l.own.f.Removed()
		end := l.own.written.Load()
		switch {
		case err != nil || gone:
			l.retire(false)
		case end+int64(n) > segmentBytes && end > int64(len(segmentMagic)):
			l.retire(true)
		}
	}
	if l.own == nil {
		if err := j.newSegment(ctx); err != nil {
			return err
		}
	}
	if l.own.written.Load()+int64(n) <= l.ownCap {
		return nil
	}
	fill := max(int64(n), min(max(l.ownCap, fillMin), fillMax))
	if _, err := l.own.f.WriteAt(make([]byte, fill), l.ownCap); err != nil {
		l.retire(true)
		return fmt.Errorf("checkpoint: extending a segment: %w", err)
	}
	// Through the segment's sync state: a failure also fails the
	// records written before whose sync is still to come.
	if err := l.own.sync(math.MaxInt64); err != nil {
		l.retire(false)
		return fmt.Errorf("checkpoint: extending a segment: %w", err)
	}
	l.ownCap += fill
	return nil
}

// newSegment creates the journal's segment: its magic and the first
// zeros, synced with its directory.
func (j *Journal) newSegment(ctx context.Context) error {
	l := j.log
	for range 3 {
		name := segmentName(j.opts.Now())
		f, err := l.opener.OpenLog(ctx, j.storePath("journal/"+name), true)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("checkpoint: creating a segment: %w", err)
		}
		ok, err := f.TryLock()
		if err == nil && !ok {
			err = fmt.Errorf("locked by another journal")
		}
		head := make([]byte, len(segmentMagic)+fillMin)
		copy(head, segmentMagic)
		if err == nil {
			_, err = f.WriteAt(head, 0)
		}
		if err == nil {
			err = f.Sync()
		}
		if err != nil {
			f.Close()
			// Nothing in it was ever a record: left, every journal
			// would read it at every look, and no prune collects it.
			if rerr := j.removeObject(ctx, j.storePath("journal/"+name)); rerr != nil {
				err = errors.Join(err, rerr)
			}
			return fmt.Errorf("checkpoint: creating segment %s: %w", name, err)
		}
		l.own, l.owned = &segFile{f: f}, name
		l.own.written.Store(int64(len(segmentMagic)))
		l.own.synced = int64(len(segmentMagic))
		l.ownCap = int64(len(head))
		l.read[name] = int64(len(segmentMagic))
		l.segs[name] = &segStats{}
		return nil
	}
	return errors.New("checkpoint: creating a segment: every name tried exists")
}

// putLogRecord stores r, encoded as data, as the next frame of the
// journal's segment, takes it into the journal and returns once it is
// durable. The caller holds mu.
func (j *Journal) putLogRecord(ctx context.Context, r *record, data []byte) error {
	sync, err := j.writeLogRecord(ctx, r, data, false)
	if err != nil {
		return err
	}
	if err := sync(true); err != nil {
		return err
	}
	j.unsaved = nil
	j.add(r, int64(j.log.locs[r.Seq].n))
	return nil
}

// writeLogRecord writes r, encoded as data, as the next frame of the
// journal's segment; its sequence number is the next one no journal
// sharing the store took. The record is durable once sync returns nil;
// sync's argument tells whether its caller holds mu. With early, the
// record is taken into the journal at once (so that the next record, which
// may be written before this one's sync, carries the after-states not in
// this one), and a failed sync takes it out again and gives its
// after-states back to the next record: the journal never shows a change
// that was refused. Without, the caller takes it in once sync succeeded.
// The caller holds mu.
func (j *Journal) writeLogRecord(ctx context.Context, r *record, data []byte, early bool) (sync func(locked bool) error, err error) {
	l := j.log
	last, fresh, err := j.lockSeq(ctx)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: writing record %d: %w", r.Seq, err)
	}
	locked := true
	defer func() {
		if locked {
			l.seqf.Unlock()
		}
	}()
	if fresh || last+1 != j.next {
		// Another journal appended since this one last looked (last
		// is ahead), or the lock file cannot tell: it is new, empty or
		// behind what this journal knows was taken (the lock file was
		// removed and made again). The store itself tells then.
		if err := j.refresh(ctx); err != nil {
			return nil, err
		}
		j.next = max(j.next, last+1)
	}
	if r.Seq != j.next {
		r.Seq = j.next
		if data, err = encodeRecord(r); err != nil {
			return nil, err
		}
	}
	fr := appendFrame(make([]byte, 0, frameHeader+len(data)), data)
	if err := j.ensureSegment(ctx, len(fr)); err != nil {
		return nil, err
	}
	off := l.own.written.Load()
	if _, err := l.own.f.WriteAt(fr, off); err != nil {
		l.retire(true)
		return nil, fmt.Errorf("checkpoint: writing record %d: %w", r.Seq, err)
	}
	s, seg, seq, end := l.own, l.owned, r.Seq, off+int64(len(fr))
	s.written.Store(end)
	l.read[seg] = end
	j.next = r.Seq + 1
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], r.Seq)
	_, werr := l.seqf.WriteAt(b[:], 0)
	locked = false
	l.seqf.Unlock()
	if werr != nil {
		l.retire(true)
		return nil, fmt.Errorf("checkpoint: writing record %d: %w", r.Seq, werr)
	}
	st := l.segs[seg]
	st.count++
	st.max = max(st.max, r.Seq)
	l.locs[r.Seq] = recLoc{seg: seg, off: off + frameHeader, n: len(data)}
	if early {
		j.unsaved = nil
		j.add(r, int64(len(data)))
	}
	return func(locked bool) error {
		err := s.sync(end)
		if err == nil {
			return nil
		}
		if !locked {
			j.mu.Lock()
			defer j.mu.Unlock()
		}
		if l.own == s {
			// What the failed sync left is unknown: the segment
			// takes nothing more.
			l.retire(false)
		}
		if early {
			j.unadd(r)
		} else if loc, ok := l.locs[seq]; ok && loc.seg == seg {
			delete(l.locs, seq)
		}
		return fmt.Errorf("checkpoint: syncing record %d: %w", seq, err)
	}, nil
}

// unadd takes back out of the in-memory journal the record r, taken in
// early (writeLogRecord) and not durable after all, and gives the
// after-states it carried back to the next record. The caller holds mu.
func (j *Journal) unadd(r *record) {
	if j.recs[r.Seq] != r {
		return // dropped meanwhile (pruned)
	}
	delete(j.recs, r.Seq)
	j.setSize(r.Seq, -1)
	if i, ok := slices.BinarySearch(j.order, r.Seq); ok {
		j.order = slices.Delete(j.order, i, i+1)
	}
	for h, seq := range j.inlined {
		if seq == r.Seq {
			delete(j.inlined, h)
		}
	}
	delete(j.log.locs, r.Seq)
	j.unsaved = append(slices.Clone(r.Afters), j.unsaved...)
}

// lockBounded takes f's lock, waiting no longer than ctx allows: another
// holder that never lets go (a stopped process sharing the store) fails
// the call by its deadline instead of holding it, and the journal's mu,
// for ever.
func lockBounded(ctx context.Context, f backend.LogFile) error {
	wait := 100 * time.Microsecond
	for {
		ok, err := f.TryLock()
		if err != nil || ok {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("checkpoint: waiting for %s: %w", seqLockName, context.Cause(ctx))
		case <-t.C:
		}
		wait = min(2*wait, 20*time.Millisecond)
	}
}
