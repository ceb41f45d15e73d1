package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/fencefs/fencefs/backend"
)

// Usage is what a journal keeps in its store.
type Usage struct {
	// Bytes is the sum of Content and Records: what a tenant's quota
	// counts.
	Bytes int64
	// Content is the bytes of the pre-images stored (each once).
	Content int64
	// Blobs is how many pre-images are stored.
	Blobs int
	// Records is the bytes of the journal's records, RecordCount their
	// number.
	Records     int64
	RecordCount int
}

// Usage returns what the journal keeps in its store, as this journal
// knows it (other processes sharing the store are seen at their next
// record). It does not wait for the journal's other work, so
// Options.Admit may ask for it (through a quota's scan).
func (j *Journal) Usage() Usage {
	u := Usage{
		Content: j.used.content.Load(), Blobs: int(j.used.blobs.Load()),
		Records: j.used.records.Load(), RecordCount: int(j.used.recordCount.Load()),
	}
	u.Bytes = u.Content + u.Records
	return u
}

// PruneResult reports a prune.
type PruneResult struct {
	// Cut is the oldest checkpoint still reachable after it.
	Cut uint64
	// Records and Blobs are how many objects were removed, Bytes how
	// many bytes they held. On a store whose records are kept in
	// segments (a local directory), Records counts the records the cut
	// dropped and Bytes includes theirs: their disk space returns when
	// their segment goes (Segments).
	Records, Blobs int
	Bytes          int64
	// Segments is how many segment files were removed: those whose
	// records were all dropped and that no journal writes to any more.
	Segments int
}

// Prune applies the retention of the Options: it drops the oldest
// changes until at most KeepCount remain, none is older than KeepAge and
// the store holds at most KeepBytes, then removes the pre-images no
// remaining change references. The checkpoints before the cut can no
// longer be restored to. A prune record is written first, so a prune cut
// short is finished by the next. Blobs are collected only while this
// journal holds its lock: journals in other processes sharing the store
// must not prune concurrently with changes (a pre-image stored just
// before its record is written could be collected).
func (j *Journal) Prune(ctx context.Context) (PruneResult, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.refresh(ctx); err != nil {
		return PruneResult{}, err
	}
	if err := j.flush(ctx); err != nil {
		return PruneResult{}, err
	}
	var entries []*record
	for _, seq := range j.order {
		if r := j.recs[seq]; r.Type == typeChange || r.Type == typeRestore {
			entries = append(entries, r)
		}
	}
	drop := 0
	if n := j.opts.KeepCount; n > 0 && len(entries) > n {
		drop = len(entries) - n
	}
	if age := j.opts.KeepAge; age > 0 {
		oldest := j.opts.Now().Add(-age)
		for drop < len(entries) && entries[drop].Time.Before(oldest) {
			drop++
		}
	}
	if max := j.opts.KeepBytes; max > 0 {
		for drop < len(entries) && j.keptBytes(entries[drop:]) > max {
			drop++
		}
	}
	res := PruneResult{Cut: j.cut}
	if drop > 0 {
		cut := entries[drop-1].Seq
		if err := j.spill(ctx, cut); err != nil {
			return res, err
		}
		var n int
		var size int64
		for _, seq := range j.order {
			if seq <= cut && j.log != nil && j.log.locs[seq] != (recLoc{}) {
				n++
				size += j.sizes[seq]
			}
		}
		if err := j.write(ctx, &record{Type: typePrune, Ref: cut}); err != nil {
			return res, err
		}
		res.Records += n
		res.Bytes += size
		res.Cut = cut
	}
	// Remove the records through the cut (also those a prune cut short
	// left), then the content nothing references.
	seen, err := j.store.List(ctx, j.storePath("journal"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, fmt.Errorf("checkpoint: listing the journal: %w", err)
	}
	for _, e := range seen {
		if seq, ok := parseRecordName(e.Name); ok && seq <= j.cut {
			if err := j.removeObject(ctx, j.storePath("journal/"+e.Name)); err != nil {
				return res, err
			}
			res.Records++
			res.Bytes += e.Size
		}
	}
	if j.log != nil {
		n, err := j.collectSegments(ctx)
		res.Segments += n
		if err != nil {
			return res, err
		}
	}
	refs := j.references()
	stored, err := j.store.List(ctx, j.storePath("blobs"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, fmt.Errorf("checkpoint: listing the store's content: %w", err)
	}
	for _, e := range stored {
		if !validHash(e.Name) || refs[e.Name] {
			continue
		}
		if err := j.removeObject(ctx, j.blobPath(e.Name)); err != nil {
			return res, err
		}
		j.setBlob(e.Name, -1)
		res.Blobs++
		res.Bytes += e.Size
	}
	return res, nil
}

// keptBytes is what the store would hold keeping only entries.
func (j *Journal) keptBytes(entries []*record) int64 {
	refs := map[string]bool{}
	var n int64
	for _, r := range entries {
		n += j.sizes[r.Seq]
		for _, p := range r.Paths {
			if p.Before.Kind == File && !refs[p.Before.Hash] {
				refs[p.Before.Hash] = true
				n += j.blobs[p.Before.Hash]
			}
		}
	}
	return n
}

// references returns the content the records kept need: the pre-images
// of their paths (a restore's targets are pre-images of earlier changes,
// or reach back before the cut, where nothing is restored to).
func (j *Journal) references() map[string]bool {
	refs := map[string]bool{}
	for _, r := range j.recs {
		for _, p := range r.Paths {
			if p.Before.Kind == File {
				refs[p.Before.Hash] = true
			}
		}
	}
	return refs
}

// removeObject removes one object of the store; one already gone is no
// error.
func (j *Journal) removeObject(ctx context.Context, name string) error {
	err := backend.Remove(ctx, j.store, name, backend.RemoveOptions{})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("checkpoint: removing %s from the store: %w", name, err)
	}
	return nil
}

// spill stores as objects of their own the contents kept inside records
// up to cut that records after cut still reference, before those records
// go.
func (j *Journal) spill(ctx context.Context, cut uint64) error {
	refs := map[string]bool{}
	for seq, r := range j.recs {
		if seq > cut {
			for _, p := range r.Paths {
				if p.Before.Kind == File {
					refs[p.Before.Hash] = true
				}
			}
		}
	}
	for h, seq := range j.inlined {
		if seq > cut || !refs[h] {
			continue
		}
		rc, err := j.openContent(ctx, h)
		if err != nil {
			return fmt.Errorf("checkpoint: reading content %s to keep it: %w", h, err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return err
		}
		err = backend.WriteFile(ctx, j.store, j.blobPath(h), data, backend.WriteOptions{Precondition: backend.Precondition{CreateOnly: true}})
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("checkpoint: keeping content %s: %w", h, err)
		}
		j.setBlob(h, int64(len(data)))
		delete(j.inlined, h)
	}
	return nil
}

// collectSegments removes the segments whose records all lie through the
// cut: a segment is removed once every record it holds is pruned and no
// journal writes to it any more (its writer holds its lock while it does;
// this journal's own segment is given up first). A segment with no
// record is kept (it may be one just created) unless it has not changed
// for abandonedAge and no journal holds its lock. It returns how many
// segments went.
func (j *Journal) collectSegments(ctx context.Context) (int, error) {
	l := j.log
	removed := 0
	for name, st := range l.segs {
		abandoned := !st.mod.IsZero() && time.Since(st.mod) > abandonedAge
		if st.count == 0 && (!abandoned || name == l.owned) || st.max > j.cut {
			continue
		}
		if name == l.owned {
			l.retire(true)
		}
		path := j.storePath("journal/" + name)
		f, err := l.opener.OpenLog(ctx, path, false)
		if errors.Is(err, fs.ErrNotExist) {
			delete(l.segs, name)
			delete(l.read, name)
			continue
		}
		if err != nil {
			return removed, fmt.Errorf("checkpoint: opening segment %s: %w", name, err)
		}
		gone, err := j.collectSegment(ctx, f, name, path)
		f.Close()
		if err != nil {
			return removed, err
		}
		if gone {
			removed++
		}
	}
	return removed, nil
}

// collectSegment removes the segment name, open as f, unless another
// journal writes to it or it holds records past the cut (read now, when
// they were written since it was last read).
func (j *Journal) collectSegment(ctx context.Context, f backend.LogFile, name, path string) (bool, error) {
	l := j.log
	ok, err := f.TryLock()
	if err != nil {
		return false, fmt.Errorf("checkpoint: segment %s: %w", name, err)
	}
	if !ok {
		return false, nil // in use
	}
	size, err := f.Size()
	if err != nil {
		return false, fmt.Errorf("checkpoint: segment %s: %w", name, err)
	}
	recs, err := j.readSegment(ctx, name, size)
	if err != nil {
		return false, err
	}
	if err := j.take(recs); err != nil {
		return false, err
	}
	st := l.segs[name]
	if st.max > j.cut {
		return false, nil
	}
	if err := j.removeObject(ctx, path); err != nil {
		return false, err
	}
	delete(l.segs, name)
	delete(l.read, name)
	return true, nil
}
