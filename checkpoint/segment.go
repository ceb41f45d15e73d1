package checkpoint

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math/rand/v2"
	"strings"
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
// payload is a record as an object holds it (JSON). A record is durable
// once its frame is written and the segment's data synced: the segment
// exists durably since its creation (created, synced with its directory,
// before its first frame), so the data sync of an append carries the new
// size with it and no directory changes. A crash during an append leaves
// at most one torn frame at the segment's end (short, or not matching
// its checksum); readers stop at the first frame that is not whole and
// ignore the rest, and the segment's journal never appends after a
// failed write: it starts a new segment.
//
// Sequence numbers stay unique across journals through journal/seq.lock:
// a writer locks it (flock), reads the highest sequence number appended
// (8 bytes), reads the other segments when it is not its own last, takes
// the next number, appends, writes the number back and unlocks; the data
// sync runs after the unlock. The number is a hint that is never synced:
// after a crash every journal reads every segment when it opens.

// segmentMagic opens every segment.
const segmentMagic = "fencefs journal segment 1\n"

// frameHeader is the bytes before a frame's payload.
const frameHeader = 8

// segmentBytes is the size past which a journal starts a new segment.
var segmentBytes int64 = 8 << 20

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
// stops at the first frame that is short, empty, larger than a record
// may be or not matching its checksum: the end of what a writer finished
// (a torn last frame, or one still being written).
func scanFrames(data []byte) ([]frame, int) {
	var out []frame
	off := 0
	for len(data)-off >= frameHeader {
		n := binary.BigEndian.Uint32(data[off:])
		sum := binary.BigEndian.Uint32(data[off+4:])
		if n == 0 || n > maxRecordBytes || uint64(len(data)-off-frameHeader) < uint64(n) {
			break
		}
		p := data[off+frameHeader : off+frameHeader+int(n)]
		if crc32.Checksum(p, castagnoli) != sum {
			break
		}
		out = append(out, frame{off: off + frameHeader, payload: p})
		off += frameHeader + int(n)
	}
	return out, off
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
	own    backend.LogFile      // the segment this journal appends to; nil until one is needed
	owned  string               // its name
	ownEnd int64                // its size
	read   map[string]int64     // bytes of each segment read (whole frames and magic)
	segs   map[string]*segStats // what each segment read holds
	locs   map[uint64]recLoc    // where each record kept lies
}

// segStats is what one segment holds, as far as it was read.
type segStats struct {
	count int    // records
	max   uint64 // highest sequence number
}

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
// up to the end of its last whole frame.
func (j *Journal) readSegment(ctx context.Context, name string, size int64) ([]loaded, error) {
	l := j.log
	from := l.read[name]
	if size <= from {
		return nil, nil
	}
	var f backend.LogFile
	if name == l.owned && l.own != nil {
		f = l.own
	} else {
		var err error
		f, err = l.opener.OpenLog(ctx, j.storePath("journal/"+name), false)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil // pruned meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("checkpoint: opening segment %s: %w", name, err)
		}
		defer f.Close()
	}
	data := make([]byte, size-from)
	n, err := f.ReadAt(data, from)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("checkpoint: reading segment %s: %w", name, err)
	}
	data = data[:n]
	start := 0
	if from == 0 {
		if !strings.HasPrefix(string(data[:min(len(data), len(segmentMagic))]), segmentMagic) {
			// Not a segment, or one whose creation a crash cut
			// short: nothing in it was ever a record.
			return nil, nil
		}
		start = len(segmentMagic)
	}
	frames, end := scanFrames(data[start:])
	st := l.segs[name]
	if st == nil {
		st = &segStats{}
		l.segs[name] = st
	}
	var out []loaded
	for _, fr := range frames {
		r, err := decodeLogRecord(fr.payload)
		if err != nil {
			return nil, fmt.Errorf("checkpoint: segment %s at %d: %w", name, from+int64(start+fr.off), err)
		}
		st.count++
		st.max = max(st.max, r.Seq)
		out = append(out, loaded{r: r, size: int64(len(fr.payload)), loc: recLoc{seg: name, off: from + int64(start+fr.off), n: len(fr.payload)}})
	}
	l.read[name] = from + int64(start+end)
	return out, nil
}

// readLogRecord reads record seq back from its segment.
func (j *Journal) readLogRecord(ctx context.Context, seq uint64) (*record, error) {
	loc, ok := j.log.locs[seq]
	if !ok {
		return nil, fmt.Errorf("record %d: not in any segment", seq)
	}
	f := j.log.own
	if loc.seg != j.log.owned || f == nil {
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
func (j *Journal) lockSeq(ctx context.Context) (uint64, error) {
	l := j.log
	for range 3 {
		if l.seqf == nil {
			f, err := j.openSeqLock(ctx)
			if err != nil {
				return 0, err
			}
			l.seqf = f
		}
		if err := l.seqf.Lock(); err != nil {
			return 0, err
		}
		gone, err := l.seqf.Removed()
		if err == nil && !gone {
			var b [8]byte
			n, err := l.seqf.ReadAt(b[:], 0)
			if err != nil && !errors.Is(err, io.EOF) {
				l.seqf.Unlock()
				return 0, err
			}
			if n < len(b) {
				return 0, nil
			}
			return binary.BigEndian.Uint64(b[:]), nil
		}
		l.seqf.Close()
		l.seqf = nil
		if err != nil {
			return 0, err
		}
	}
	return 0, errors.New("checkpoint: the journal's lock file keeps being removed")
}

// dropOwn stops appending to the journal's segment (after a failed write,
// or to let it be collected): the next record starts a new one.
func (l *segLog) dropOwn() {
	if l.own != nil {
		l.own.Close()
		l.own, l.owned, l.ownEnd = nil, "", 0
	}
}

// ensureSegment makes sure the journal has a segment of its own with room
// for n more bytes: a new segment is created (and synced with its
// directory) when there is none, it was removed, or it is full. The
// journal holds the segment's lock for as long as it appends to it, which
// keeps a prune from collecting it.
func (j *Journal) ensureSegment(ctx context.Context, n int) error {
	l := j.log
	if l.own != nil {
		gone, err := l.own.Removed()
		if err != nil || gone || l.ownEnd+int64(n) > segmentBytes && l.ownEnd > int64(len(segmentMagic)) {
			l.dropOwn()
		}
	}
	if l.own != nil {
		return nil
	}
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
			err = fmt.Errorf("checkpoint: segment %s is locked by another journal", name)
		}
		if err == nil {
			_, err = f.Append([]byte(segmentMagic))
		}
		if err == nil {
			err = f.Sync()
		}
		if err != nil {
			f.Close()
			return fmt.Errorf("checkpoint: creating segment %s: %w", name, err)
		}
		l.own, l.owned, l.ownEnd = f, name, int64(len(segmentMagic))
		l.read[name] = l.ownEnd
		l.segs[name] = &segStats{}
		return nil
	}
	return errors.New("checkpoint: creating a segment: every name tried exists")
}

// putLogRecord stores r, encoded as data, as the next frame of the
// journal's segment, takes it into the journal and returns once it is
// durable. Its sequence number is the next one no journal sharing the
// store took. The caller holds mu.
func (j *Journal) putLogRecord(ctx context.Context, r *record, data []byte) error {
	l := j.log
	last, err := j.lockSeq(ctx)
	if err != nil {
		return fmt.Errorf("checkpoint: writing record %d: %w", r.Seq, err)
	}
	locked := true
	defer func() {
		if locked {
			l.seqf.Unlock()
		}
	}()
	if last >= j.next {
		// Another journal appended since this one last looked.
		if err := j.refresh(ctx); err != nil {
			return err
		}
		j.next = max(j.next, last+1)
	}
	if r.Seq != j.next {
		r.Seq = j.next
		if data, err = encodeRecord(r); err != nil {
			return err
		}
	}
	fr := appendFrame(make([]byte, 0, frameHeader+len(data)), data)
	if err := j.ensureSegment(ctx, len(fr)); err != nil {
		return err
	}
	off, err := l.own.Append(fr)
	if err != nil {
		l.dropOwn()
		return fmt.Errorf("checkpoint: writing record %d: %w", r.Seq, err)
	}
	seg := l.owned
	l.ownEnd = off + int64(len(fr))
	if l.read[seg] == off {
		l.read[seg] = l.ownEnd
	}
	j.next = r.Seq + 1
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], r.Seq)
	_, werr := l.seqf.WriteAt(b[:], 0)
	locked = false
	l.seqf.Unlock()
	if werr != nil {
		l.dropOwn()
		return fmt.Errorf("checkpoint: writing record %d: %w", r.Seq, werr)
	}
	if err := l.own.Sync(); err != nil {
		// What the failed sync left is unknown: the segment takes
		// nothing more.
		l.dropOwn()
		return fmt.Errorf("checkpoint: syncing record %d: %w", r.Seq, err)
	}
	st := l.segs[seg]
	st.count++
	st.max = max(st.max, r.Seq)
	l.locs[r.Seq] = recLoc{seg: seg, off: off + frameHeader, n: len(data)}
	j.unsaved = nil
	j.add(r, int64(len(data)))
	return nil
}
