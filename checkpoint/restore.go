package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fencefs/fencefs/backend"
)

// ErrPruned is returned for a checkpoint older than the journal keeps.
var ErrPruned = errors.New("checkpoint: the checkpoint was pruned")

// Checkpoint describes one recorded change or restore. Its Seq is the
// checkpoint it makes: the state once it committed. Restoring to Seq-1
// undoes it (and everything after it).
type Checkpoint struct {
	// Seq is the record's sequence number.
	Seq uint64
	// Time is when it was recorded.
	Time time.Time
	// Label is the label the host set (see Mark and WithLabel).
	Label string
	// Call identifies the bound context (the tool call) that made it.
	Call string
	// Op is the tool operation ("write", "edit", "delete", "move",
	// "copy", "apply_patch", "create_directory"), or "restore".
	Op string
	// Path and Source are the change request's paths, as storage paths.
	Path, Source string
	// RestoredTo is, for a restore, the checkpoint it restored to.
	RestoredTo uint64
	// Complete is, for a restore, whether it was applied completely; an
	// incomplete one (the process ended part way) is completed by
	// restoring to RestoredTo again.
	Complete bool
	// Forced is, for a restore, whether conflicts were overridden.
	Forced bool
	// Changes are the paths it touched, with their states before and
	// after.
	Changes []PathChange
}

// Checkpoints lists the changes and restores the journal holds, oldest
// first.
func (j *Journal) Checkpoints() []Checkpoint {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []Checkpoint
	for _, seq := range j.order {
		r := j.recs[seq]
		if r.Type != typeChange && r.Type != typeRestore {
			continue
		}
		c := Checkpoint{Seq: r.Seq, Time: r.Time, Label: r.Label, Call: r.Call, Op: r.Op, Path: r.Path, Source: r.Source, Changes: slices.Clone(r.Paths)}
		if r.Type == typeRestore {
			c.Op, c.RestoredTo, c.Complete, c.Forced = "restore", r.Ref, j.done[r.Seq], r.Force
		}
		out = append(out, c)
	}
	return out
}

// Oldest returns the oldest checkpoint a restore can reach: 0 (the state
// before the first change recorded) until the journal is pruned.
func (j *Journal) Oldest() uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.cut
}

// Latest returns the newest checkpoint: the sequence number of the last
// record (0 for an empty journal).
func (j *Journal) Latest() uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.order) == 0 {
		return j.cut
	}
	return j.order[len(j.order)-1]
}

// LabelStart returns the checkpoint just before the first change recorded
// under label: restoring to it undoes the whole turn (or run) and what
// followed it.
func (j *Journal) LabelStart(label string) (uint64, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, seq := range j.order {
		if r := j.recs[seq]; r.Type == typeChange && r.Label == label {
			return seq - 1, true
		}
	}
	return 0, false
}

// RestoreOptions adjust a restore.
type RestoreOptions struct {
	// Paths, when not empty, restores only these paths and what lies
	// below them (storage paths, or the tools' rooted paths).
	Paths []string
	// Force restores paths in conflict too, overwriting what another
	// writer put there (the restore is journaled, so that can be undone).
	Force bool
	// SkipConflicts restores every path not in conflict and leaves those
	// in conflict as they are, reporting them in Result.Skipped, where a
	// restore would otherwise be refused whole.
	SkipConflicts bool
	// BeforeApply, when set, is called with the paths the restore is
	// about to change, once the content they hold is stored and before
	// the restore is recorded or any path changed: a host's write-ahead
	// audit record. An error refuses the restore whole, nothing recorded
	// or changed, as an *AdmitError.
	BeforeApply func(ctx context.Context, items []Item) error
}

// Item is one path a restore would change.
type Item struct {
	// Path is the storage path.
	Path string
	// Current is its state now, Target its state at the checkpoint.
	Current, Target State
	// Expected are the states the journal recorded it in last (after the
	// last change); a Current among them is no conflict.
	Expected []State
	// Conflict says why the path cannot be restored without Force
	// (empty when it can): another writer changed it, or the target
	// cannot be re-created.
	Conflict string

	version string // Current's version token, where the backend has them
}

// Plan is what restoring to a checkpoint would do.
type Plan struct {
	// To is the checkpoint.
	To uint64
	// Items are the paths that differ from their state at To, by path.
	Items []Item
	// Unchanged counts the paths the changes since To touched that are
	// already as they were at To.
	Unchanged int
}

// Conflicts returns the items in conflict.
func (p *Plan) Conflicts() []Item {
	var out []Item
	for _, it := range p.Items {
		if it.Conflict != "" {
			out = append(out, it)
		}
	}
	return out
}

// ConflictError is the refusal of a restore with conflicts, listing
// them. Nothing was changed.
type ConflictError struct {
	To        uint64
	Conflicts []Item
}

func (e *ConflictError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "checkpoint: restore to %d refused: %d path(s) in conflict (restore with Force to overwrite them):", e.To, len(e.Conflicts))
	for _, c := range e.Conflicts {
		fmt.Fprintf(&b, "\n  %s: %s", c.Path, c.Conflict)
	}
	return b.String()
}

// Plan reads the namespace and tells what restoring to checkpoint to
// would change, and what is in conflict. It changes nothing.
func (j *Journal) Plan(ctx context.Context, to uint64, opts RestoreOptions) (*Plan, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.plan(ctx, to, opts)
}

func (j *Journal) plan(ctx context.Context, to uint64, opts RestoreOptions) (*Plan, error) {
	if err := j.refresh(ctx); err != nil {
		return nil, err
	}
	if err := j.flush(ctx); err != nil {
		return nil, err
	}
	if to < j.cut {
		return nil, fmt.Errorf("%w: %d is older than %d, the oldest kept", ErrPruned, to, j.cut)
	}
	if n := len(j.order); to > 0 && (n == 0 || to > j.order[n-1]) {
		return nil, fmt.Errorf("checkpoint: no checkpoint %d", to)
	}
	var only []string
	for _, p := range opts.Paths {
		only = append(only, j.storagePath(p))
	}
	wanted := func(p string) bool {
		if len(only) == 0 {
			return true
		}
		for _, q := range only {
			if q == "." || p == q || backend.IsWithin(p, q) {
				return true
			}
		}
		return false
	}
	type track struct {
		target State
		last   *record
		idx    int
	}
	paths := map[string]*track{}
	for _, seq := range j.order {
		r := j.recs[seq]
		if seq <= to || (r.Type != typeChange && r.Type != typeRestore) {
			continue
		}
		for i, pc := range r.Paths {
			if !wanted(pc.Path) {
				continue
			}
			t := paths[pc.Path]
			if t == nil {
				t = &track{target: pc.Before}
				paths[pc.Path] = t
			}
			t.last, t.idx = r, i
		}
	}
	emptyDirs := j.caps.EmptyDirs
	p := &Plan{To: to}
	type seen struct {
		cur     State
		version string
	}
	names := slices.Sorted(maps.Keys(paths))
	states := make([]seen, len(names))
	err := parallel(ctx, len(names), func(i int) error {
		cur, version, err := j.stateOf(ctx, names[i])
		if err != nil {
			return fmt.Errorf("checkpoint: looking at %s: %w", names[i], err)
		}
		states[i] = seen{cur, version}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i, path := range names {
		t := paths[path]
		cur, version := states[i].cur, states[i].version
		if cur.same(t.target, emptyDirs) {
			p.Unchanged++
			continue
		}
		it := Item{Path: path, Current: cur, Target: t.target, Expected: j.expected(t.last, t.idx), version: version}
		if !slices.ContainsFunc(it.Expected, func(s State) bool { return cur.same(s, emptyDirs) }) {
			exp := make([]string, len(it.Expected))
			for i, s := range it.Expected {
				exp[i] = s.String()
			}
			it.Conflict = fmt.Sprintf("changed by another writer: it is %s, the journal expected %s", cur, strings.Join(exp, " or "))
		}
		switch t.target.Kind {
		case Symlink, Other:
			it.Conflict = fmt.Sprintf("it was a %s, which no backend operation re-creates", t.target.Kind)
		case File:
			if !j.hasBlob(t.target.Hash) {
				it.Conflict = "its content is no longer in the store"
			}
		}
		p.Items = append(p.Items, it)
	}
	slices.SortFunc(p.Items, func(a, b Item) int { return strings.Compare(a.Path, b.Path) })
	return p, nil
}

// expected returns the states a path may be in after the record r last
// touched it (its Paths[i]).
func (j *Journal) expected(r *record, i int) []State {
	pc := r.Paths[i]
	switch {
	case r.Type == typeRestore && !j.done[r.Seq]:
		// Part way through: each path is as it was or as it was to be,
		// or missing between a removal and a re-creation.
		out := []State{pc.Before, *pc.After}
		if pc.Before.Kind != pc.After.Kind {
			out = append(out, State{Kind: Missing})
		}
		return out
	case pc.After != nil:
		return []State{*pc.After}
	}
	// No after-state: the change did not commit, or the process that
	// made it ended before recording it; only the state before is sure.
	return []State{pc.Before}
}

// Result reports a restore.
type Result struct {
	// Seq is the restore's own record: restoring to Seq-1 undoes it
	// (redo). 0 when nothing needed restoring.
	Seq uint64
	// To is the checkpoint restored to.
	To uint64
	// Restored are the paths changed; Items the same, with their states
	// before (Current) and after (Target).
	Restored []string
	Items    []Item
	// Forced are the items in conflict that Force overwrote; Skipped
	// those left as they are (in conflict with SkipConflicts, or a
	// symlink or content no longer stored with Force).
	Forced, Skipped []Item
	// Unchanged counts the paths already as they were at To.
	Unchanged int
}

// Restore returns every path the changes since checkpoint to touched
// (or, with opts.Paths, those of them) to its state at to: modified
// files get their content back, created files and directories are
// removed, deleted ones re-created, moved ones moved back; nothing else
// is touched. A path whose current state is not the one the journal
// recorded after its last change is a conflict: the restore is then
// refused whole with a *ConflictError listing them, unless opts.Force.
//
// The restore is itself recorded (its intent first, with the current
// content of every path it changes), then applied path by path with
// preconditions on the state read (a writer that changes a path in
// between makes the restore fail, not lose that write), then marked
// complete. A restore that fails or is interrupted part way is completed
// by the same restore run again; one that completed is undone by
// restoring to Result.Seq-1.
func (j *Journal) Restore(ctx context.Context, to uint64, opts RestoreOptions) (*Result, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	p, err := j.plan(ctx, to, opts)
	if err != nil {
		return nil, err
	}
	res := &Result{To: to, Unchanged: p.Unchanged}
	var items []Item
	for _, it := range p.Items {
		switch {
		case it.Conflict == "":
			items = append(items, it)
		case !opts.Force && opts.SkipConflicts:
			res.Skipped = append(res.Skipped, it)
		case !opts.Force:
		case it.Target.Kind == Symlink || it.Target.Kind == Other || it.Target.Kind == File && !j.hasBlob(it.Target.Hash):
			res.Skipped = append(res.Skipped, it)
		default:
			res.Forced = append(res.Forced, it)
			items = append(items, it)
		}
	}
	if c := p.Conflicts(); len(c) > 0 && !opts.Force && !opts.SkipConflicts {
		return nil, &ConflictError{To: to, Conflicts: c}
	}
	if len(items) == 0 {
		return res, nil
	}
	// The content each path holds now, so the restore can be undone.
	r := &record{Type: typeRestore, Op: "restore", Ref: to, Force: opts.Force, Label: j.label, Inline: map[string][]byte{}}
	for i, it := range items {
		if it.Current.Kind != File {
			continue
		}
		if _, _, err := j.storeContent(ctx, j.ns, it.Path, it.Current.Hash, it.Current.Size, r.Inline); err != nil {
			if errors.Is(err, backend.ErrPrecondition) {
				return nil, fmt.Errorf("checkpoint: %s changed while the restore read it; nothing was restored, try again", it.Path)
			}
			return nil, fmt.Errorf("checkpoint: storing the content of %s: %w", it.Path, err)
		}
		items[i] = it
	}
	for _, it := range items {
		target := it.Target
		r.Paths = append(r.Paths, PathChange{Path: it.Path, Before: it.Current, After: &target})
	}
	if opts.BeforeApply != nil {
		if err := opts.BeforeApply(ctx, items); err != nil {
			return nil, &AdmitError{Err: err}
		}
	}
	if err := j.write(ctx, r); err != nil {
		return nil, err
	}
	res.Seq = r.Seq
	if err := j.apply(ctx, items); err != nil {
		return res, fmt.Errorf("checkpoint: restore %d to %d stopped part way (restore to %d again to complete it): %w", r.Seq, to, to, err)
	}
	for _, it := range items {
		res.Restored = append(res.Restored, it.Path)
	}
	res.Items = items
	if err := j.write(ctx, &record{Type: typeDone, Ref: r.Seq}); err != nil {
		return res, fmt.Errorf("checkpoint: restore %d applied, but not marked complete: %w", r.Seq, err)
	}
	return res, nil
}

// apply changes every item from its current to its target state, in an
// order that works whatever each path was: files and links that go away
// first, then directories that go away (deepest first), then directories
// that come back (shallowest first), then files.
func (j *Journal) apply(ctx context.Context, items []Item) error {
	depth := func(p string) int { return strings.Count(p, "/") }
	// 1. files, links and special files, unless a file replaces a file
	for _, it := range items {
		if it.Current.Kind != Dir && it.Current.Kind != Missing && (it.Current.Kind != File || it.Target.Kind != File) {
			if err := j.remove(ctx, it); err != nil {
				return err
			}
		}
	}
	// 2. directories that go away, deepest first
	dirs := slices.Clone(items)
	slices.SortStableFunc(dirs, func(a, b Item) int { return depth(b.Path) - depth(a.Path) })
	for _, it := range dirs {
		if it.Current.Kind == Dir && it.Target.Kind != Dir {
			err := backend.Remove(ctx, j.ns, it.Path, backend.RemoveOptions{})
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	// 3. directories that come back, shallowest first
	for i := len(dirs) - 1; i >= 0; i-- {
		if it := dirs[i]; it.Target.Kind == Dir && it.Current.Kind != Dir {
			if err := backend.MkdirAll(ctx, j.ns, it.Path); err != nil {
				return err
			}
		}
	}
	// 4. files, several at a time
	var files []Item
	for _, it := range items {
		if it.Target.Kind == File {
			files = append(files, it)
		}
	}
	return parallel(ctx, len(files), func(i int) error { return j.put(ctx, files[i]) })
}

// precondition is the precondition that the path still holds what the
// plan read.
func (j *Journal) precondition(it Item) backend.Precondition {
	if it.Current.Kind != File {
		return backend.Precondition{CreateOnly: true}
	}
	if j.caps.Versions && it.version != "" {
		return backend.Precondition{MatchVersion: it.version}
	}
	return backend.Precondition{MatchHash: it.Current.Hash}
}

// remove removes a file, link or special file the plan read.
func (j *Journal) remove(ctx context.Context, it Item) error {
	var pre backend.Precondition
	if it.Current.Kind == File {
		pre = j.precondition(it)
	}
	err := backend.Remove(ctx, j.ns, it.Path, backend.RemoveOptions{Precondition: pre})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// put writes a file's target content, under the precondition that the
// path still holds what the plan read, and gives it its mode.
func (j *Journal) put(ctx context.Context, it Item) error {
	pre := j.precondition(it) // create-only unless a file replaces a file
	err := backend.CopyStream(ctx, contentReader{j}, it.Target.Hash, j.ns, it.Path, backend.CopyOptions{
		Precondition: pre,
		Source:       backend.Precondition{MatchHash: it.Target.Hash},
	})
	if err != nil {
		if errors.Is(err, backend.ErrPrecondition) || errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s changed while the restore ran; it was left as the other writer made it: %w", it.Path, err)
		}
		return err
	}
	if !j.caps.ModeBits || it.Target.Mode == 0 {
		return nil
	}
	fi, err := backend.Stat(ctx, j.ns, it.Path)
	if err != nil || fi.Mode.Perm() == it.Target.Mode {
		return err
	}
	if m, ok := j.ns.(ModeSetter); ok {
		err := m.Chmod(ctx, it.Path, it.Target.Mode)
		if errors.Is(err, errors.ErrUnsupported) {
			return nil
		}
		return err
	}
	return nil
}

// ModeSetter is implemented by backends that can set a file's permission
// bits (local disk, memfs, a mounted namespace over them). It is not part
// of the backend contract, since no tool changes a mode; a restore uses
// it to give a re-created file the mode it had. A backend may decline
// with errors.ErrUnsupported.
type ModeSetter interface {
	Chmod(ctx context.Context, name string, perm fs.FileMode) error
}

// contentReader serves stored content by hash as a backend.Reader, so a
// restore streams it with backend.CopyStream (which checks the hash).
type contentReader struct{ j *Journal }

func (c contentReader) OpenRead(ctx context.Context, hash string) (backend.FileReader, error) {
	r, err := c.j.openContent(ctx, hash)
	if err != nil {
		return nil, err
	}
	return backend.NewFileReader(r, backend.FileInfo{Name: hash, Size: -1}), nil
}

// workers bounds the storage operations a plan or restore runs at once:
// enough to hide a remote store's latency and a disk's syncs.
const workers = 8

// parallel runs fn(0..n-1) on up to workers goroutines and returns the
// first error; after one, no new fn starts.
func parallel(ctx context.Context, n int, fn func(i int) error) error {
	var (
		next   atomic.Int64
		mu     sync.Mutex
		first  error
		wg     sync.WaitGroup
		failed atomic.Bool
	)
	for range min(workers, n) {
		wg.Go(func() {
			for !failed.Load() && ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					failed.Store(true)
					return
				}
			}
		})
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}
