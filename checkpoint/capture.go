package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/tools"
)

// labelKey keys a label in a context.
type labelKey struct{}

// WithLabel returns a copy of ctx whose tool calls the journal records
// under label (a turn, a run, a session), whatever Mark last set.
func WithLabel(ctx context.Context, label string) context.Context {
	return context.WithValue(ctx, labelKey{}, label)
}

// Mark starts a new group of changes: the calls recorded from now on
// carry label (unless their context has one, see WithLabel). It saves
// the after-states not yet recorded and, when the Options bound the
// journal, prunes it, so a turn boundary is where the journal is tidied.
func (j *Journal) Mark(ctx context.Context, label string) error {
	j.mu.Lock()
	j.label = label
	j.mu.Unlock()
	if err := j.Flush(ctx); err != nil {
		return err
	}
	if j.opts.KeepCount > 0 || j.opts.KeepAge > 0 || j.opts.KeepBytes > 0 {
		_, err := j.Prune(ctx)
		return err
	}
	return nil
}

// Flush saves the after-states of the changes made so far that no record
// holds yet. They are otherwise saved with the next record written (so a
// change costs one record), and a restore flushes first; a host calls
// Flush (or Mark) at the end of a turn so that a crash loses none.
func (j *Journal) Flush(ctx context.Context) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.flush(ctx)
}

func (j *Journal) flush(ctx context.Context) error {
	if len(j.unsaved) == 0 {
		return nil
	}
	return j.write(ctx, &record{Type: typeAfter})
}

// Bind returns a copy of ctx under which the tool calls of a
// [tools.Set] over the journal's namespace are journaled: their change
// requests are announced to the journal once every change listener of
// the call let them through (tools.WithBeforeCommit: those on ctx and
// those added inside it, such as an approval asking the user, run first
// and may cancel), which stores the pre-image of every path the change
// touches before it commits, and their events
// tell it each path's state once committed. Bind each tool call's
// context (events are matched to the call's own changes); binding one
// context for many calls works too, each event going to the latest
// change that touched its path. A change a listener cancels (the user
// declined it, or an approval's first round, which only asks) is never
// journaled.
//
// A change whose pre-images cannot be stored is refused: the listener
// fails, and the model is told "The change was not made: the host's
// change listener failed. Details are in the server's log." A file whose
// content is no longer the one the tool read (BeforeHash) when the
// journal reads it is refused as changed meanwhile: the model is told
// "['<path>' was not <verb>: it changed while its checkpoint was taken;
// read it again]".
func (j *Journal) Bind(ctx context.Context) context.Context {
	c := &call{}
	ctx = tools.WithBeforeCommit(ctx, func(ctx context.Context, req *tools.ChangeRequest) error {
		return j.capture(ctx, c, req)
	}, tools.ReadsNoDiff)
	return tools.WithEventListener(ctx, func(ctx context.Context, ev tools.Event) {
		j.event(c, ev)
	}, tools.ReadsNoDiff)
}

// call is the state of one binding: the changes it recorded.
type call struct {
	id      string
	entries []*entry
}

// entry is a change recorded and not yet committed, or whose events are
// still arriving.
type entry struct {
	rec       *record
	idx       map[string]int    // path -> index in rec.Paths
	defaults  map[string]*State // after-state of each path unless an event says otherwise
	committed bool
	explicit  map[string]bool
	sizes     map[string]int64 // a file's size after, from the request
}

// changedMeanwhile is the reason a change is cancelled with when a file
// no longer holds what the tool read.
const changedMeanwhile = "it changed while its checkpoint was taken; read it again"

// touched is one path a change touches, with what the journal knows of
// it before reading it.
type touched struct {
	path   string
	hint   string // the BeforeHash the tool read, when it says
	before int64  // the size before, from the request's Sizes (-1: none)
	size   int64  // the size after, from the request's Sizes
	sized  bool   // size is known
	after  *State // the default after-state, nil for "unchanged"
	sameAs string // the after-state is this path's before-state (a move or copy's target)
}

// capture records the pre-images of req's paths before the change
// commits. When the tool can wait for the record just before its commit
// ([tools.WaitBeforeCommit]), the record is stored while the tool stages
// its own write, and the change commits only once it is stored; a record
// that cannot be stored fails the change with nothing committed. In a
// segment (a local store) the frame is written at once and its sync is
// the wait, which the local backend runs along with the sync of its
// staged bytes; elsewhere the journal's lock is held until the record is
// stored, by a goroutine the wait waits for.
func (j *Journal) capture(ctx context.Context, c *call, req *tools.ChangeRequest) error {
	j.mu.Lock()
	locked := true
	defer func() {
		if locked {
			j.mu.Unlock()
		}
	}()
	ts, err := j.touchedBy(ctx, req)
	if err != nil {
		return err
	}
	r := &record{Type: typeChange, Op: req.Operation, Path: j.storagePath(req.Path), Label: j.label, Inline: map[string][]byte{}}
	if req.Source != "" {
		r.Source = j.storagePath(req.Source)
	}
	if l, ok := ctx.Value(labelKey{}).(string); ok {
		r.Label = l
	}
	if c.id == "" {
		j.calls++
		c.id = strconv.FormatUint(j.calls, 10) + "-" + strconv.FormatInt(j.opts.Now().UnixNano(), 36)
	}
	r.Call = c.id
	e := &entry{rec: r, idx: map[string]int{}, defaults: map[string]*State{}, explicit: map[string]bool{}, sizes: map[string]int64{}}
	for _, t := range ts {
		if _, dup := e.idx[t.path]; dup {
			continue
		}
		before, err := j.preImage(ctx, t.path, t.hint, t.before, r.Inline)
		if errors.Is(err, backend.ErrPrecondition) {
			req.Cancel(changedMeanwhile)
			return nil
		}
		if refused := (*AdmitError)(nil); errors.As(err, &refused) {
			req.Cancel(refused.Error())
			return nil
		}
		if err != nil {
			return fmt.Errorf("checkpoint: taking the pre-image of %s: %w", t.path, err)
		}
		e.idx[t.path] = len(r.Paths)
		r.Paths = append(r.Paths, PathChange{Path: t.path, Before: before})
		e.defaults[t.path] = t.after
		if t.sized {
			e.sizes[t.path] = t.size
		}
	}
	// A change's missing ancestors are created with it: record them, so
	// that a restore removes them too.
	for _, p := range r.Paths {
		if p.Before.Kind != Missing {
			continue
		}
		for dir, _ := backend.Split(p.Path); dir != "."; dir, _ = backend.Split(dir) {
			if _, ok := e.idx[dir]; ok {
				break
			}
			st, _, err := j.stateOf(ctx, dir)
			if err != nil {
				return fmt.Errorf("checkpoint: looking at %s: %w", dir, err)
			}
			if st.Kind != Missing {
				break
			}
			e.idx[dir] = len(r.Paths)
			r.Paths = append(r.Paths, PathChange{Path: dir, Before: st})
			e.defaults[dir] = &State{Kind: Dir}
		}
	}
	// A move or copy's target becomes what its source was.
	for _, t := range ts {
		if t.sameAs != "" {
			if i, ok := e.idx[t.sameAs]; ok {
				st := r.Paths[i].Before
				e.defaults[t.path] = &st
			}
		}
	}
	if len(r.Paths) == 0 {
		return nil
	}
	data, err := j.prepare(ctx, r)
	if refused := (*AdmitError)(nil); errors.As(err, &refused) {
		req.Cancel(refused.Error())
		return nil
	}
	if err != nil {
		return err
	}
	if j.log != nil {
		// A segment's frame is written now (no wait); its sync is what
		// the tool waits for, run along with the sync of its own
		// staged bytes.
		sync, err := j.writeLogRecord(ctx, r, data, true)
		if err != nil {
			return err
		}
		c.entries = append(c.entries, e)
		if tools.WaitBeforeCommit(ctx, req, func() error { return sync(false) }) {
			return nil
		}
		return sync(true)
	}
	put := func() error {
		if err := j.putRecord(ctx, r, data); err != nil {
			return err
		}
		c.entries = append(c.entries, e)
		return nil
	}
	done := make(chan struct{})
	var putErr error
	if !tools.WaitBeforeCommit(ctx, req, func() error {
		<-done
		return putErr
	}) {
		return put()
	}
	locked = false
	go func() {
		defer j.mu.Unlock()
		defer close(done)
		putErr = put()
	}()
	return nil
}

// preImage reads the state of name before a change and keeps a file's
// content (in inline when small). hint is the hash the tool read and size
// the size it announced; with both, on storage without modes, nothing
// needs reading when the content is stored already.
func (j *Journal) preImage(ctx context.Context, name, hint string, size int64, inline map[string][]byte) (State, error) {
	if hint != "" && size >= 0 && !j.caps.ModeBits {
		h, n, err := j.storeContent(ctx, j.ns, name, hint, size, inline)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, backend.ErrNotDir) || errors.Is(err, backend.ErrIsDir) || errors.Is(err, backend.ErrNotRegular) {
			return State{}, backend.ErrPrecondition
		}
		if err != nil {
			return State{}, err
		}
		return State{Kind: File, Hash: h, Size: n}, nil
	}
	fi, err := backend.Stat(ctx, j.ns, name)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, backend.ErrNotDir) {
		if hint != "" {
			return State{}, backend.ErrPrecondition
		}
		return State{Kind: Missing}, nil
	}
	if err != nil {
		return State{}, err
	}
	switch {
	case fi.IsDir():
		return State{Kind: Dir}, nil
	case fi.IsSymlink():
		link, err := backend.Readlink(ctx, j.ns, name)
		if err != nil {
			return State{}, err
		}
		return State{Kind: Symlink, Link: link}, nil
	case !fi.IsRegular():
		return State{Kind: Other}, nil
	}
	h, n, err := j.storeContent(ctx, j.ns, name, hint, fi.Size, inline)
	if err != nil {
		return State{}, err
	}
	st := State{Kind: File, Hash: h, Size: n}
	if j.caps.ModeBits {
		st.Mode = fi.Mode.Perm()
	}
	return st, nil
}

// touchedBy lists the paths req changes, with their default after-states.
func (j *Journal) touchedBy(ctx context.Context, req *tools.ChangeRequest) ([]touched, error) {
	target := j.storagePath(req.Path)
	var out []touched
	fromSizes := func() {
		for _, s := range req.Sizes {
			t := touched{path: j.storagePath(s.Path), hint: s.BeforeHash, before: s.Before, size: s.After, sized: s.After >= 0}
			switch {
			case s.Dir:
				// A directory the change creates (SizeChange.Dir).
				t = touched{path: t.path, before: -1, after: &State{Kind: Dir}}
			case s.After < 0:
				t.after = &State{Kind: Missing}
			}
			out = append(out, t)
		}
	}
	switch req.Operation {
	case tools.OpCreateDirectory:
		return []touched{{path: target, after: &State{Kind: Dir}}}, nil
	case tools.OpMove, tools.OpCopy:
		src := j.storagePath(req.Source)
		if req.Sizes != nil {
			fromSizes()
			for i := range out {
				if out[i].path == target {
					out[i].sameAs = src
				}
			}
			return out, nil
		}
		// A directory: its tree moves or is copied.
		out = append(out, touched{path: target, sameAs: src})
		if req.Operation == tools.OpMove {
			out = append(out, touched{path: src, after: &State{Kind: Missing}})
		}
		err := backend.Walk(ctx, j.ns, src, func(p string, _ backend.DirEntry) error {
			rel := strings.TrimPrefix(p, src+"/")
			dst := target + "/" + rel
			out = append(out, touched{path: dst, sameAs: p})
			if req.Operation == tools.OpMove {
				out = append(out, touched{path: p, after: &State{Kind: Missing}})
			} else {
				out = append(out, touched{path: p})
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("checkpoint: listing %s: %w", src, err)
		}
		return out, nil
	case tools.OpDelete:
		if req.Sizes != nil {
			fromSizes()
			return out, nil
		}
		out = append(out, touched{path: target, after: &State{Kind: Missing}})
		fi, err := backend.Stat(ctx, j.ns, target)
		if err != nil || !fi.IsDir() {
			return out, nil
		}
		err = backend.Walk(ctx, j.ns, target, func(p string, _ backend.DirEntry) error {
			out = append(out, touched{path: p, after: &State{Kind: Missing}})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("checkpoint: listing %s: %w", target, err)
		}
		return out, nil
	}
	// write, edit, apply_patch, and anything new that says its files.
	fromSizes()
	if len(out) == 0 {
		out = append(out, touched{path: target})
	}
	return out, nil
}

// event takes an event of a bound call: the change it reports committed.
func (j *Journal) event(c *call, ev tools.Event) {
	j.mu.Lock()
	defer j.mu.Unlock()
	set := func(path string, st State) {
		if e := c.latest(path); e != nil {
			j.commit(e)
			j.setAfter(e, path, st, true)
		}
	}
	switch ev := ev.(type) {
	case tools.FileWritten:
		j.wrote(c, ev.Path, ev.ContentHash, set)
	case tools.FileEdited:
		j.wrote(c, ev.Path, ev.ContentHash, set)
	case tools.FileDeleted:
		set(j.storagePath(ev.Path), State{Kind: Missing})
	case tools.DirectoryDeleted:
		if e := c.latest(j.storagePath(ev.Path)); e != nil {
			j.commit(e)
		}
	case tools.DirectoryCreated:
		set(j.storagePath(ev.Path), State{Kind: Dir})
	case tools.FileCopied:
		j.wrote(c, ev.To, ev.ContentHash, set)
	case tools.FileMoved:
		from, to := j.storagePath(ev.From), j.storagePath(ev.To)
		e := c.latest(from)
		if e == nil {
			return
		}
		j.commit(e)
		if i, ok := e.idx[from]; ok && ev.ContentHash == "" && !e.explicit[to] {
			if e.rec.Paths[i].Before.Kind == File {
				j.setAfter(e, to, e.rec.Paths[i].Before, false)
			}
		}
		j.setAfter(e, from, State{Kind: Missing}, true)
		if ev.ContentHash != "" {
			j.wrote(c, ev.To, ev.ContentHash, set)
		}
	}
}

// wrote sets the after-state of a file a change wrote with content hash.
func (j *Journal) wrote(c *call, path, hash string, set func(string, State)) {
	p := j.storagePath(path)
	e := c.latest(p)
	if e == nil {
		return
	}
	st := State{Kind: File, Hash: hash, Size: e.sizes[p]}
	if i, ok := e.idx[p]; ok && e.rec.Paths[i].Before.Kind == File {
		st.Mode = e.rec.Paths[i].Before.Mode // a replacement keeps the mode
	}
	set(p, st)
}

// latest returns the latest change of the call that touched path.
func (c *call) latest(path string) *entry {
	for i := len(c.entries) - 1; i >= 0; i-- {
		if _, ok := c.entries[i].idx[path]; ok {
			return c.entries[i]
		}
	}
	return nil
}

// commit marks e committed: every path no event speaks of takes its
// default after-state.
func (j *Journal) commit(e *entry) {
	if e.committed {
		return
	}
	e.committed = true
	for _, p := range e.rec.Paths {
		st := p.Before
		if d := e.defaults[p.Path]; d != nil {
			st = *d
		}
		j.setAfter(e, p.Path, st, false)
	}
}

// setAfter records the after-state of path in e, to be saved with the
// next record.
func (j *Journal) setAfter(e *entry, path string, st State, explicit bool) {
	i, ok := e.idx[path]
	if !ok || j.recs[e.rec.Seq] != e.rec {
		return // not a path of e, or e's record is not kept (it failed)
	}
	if explicit {
		e.explicit[path] = true
	}
	s := st
	e.rec.Paths[i].After = &s
	j.unsaved = append(j.unsaved, afterState{Seq: e.rec.Seq, Path: path, State: st})
}
