package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/internal/udiff"
	"github.com/fencefs/fencefs/tools/internal/patch"
)

// restoreTimeout bounds the restoring of committed files after a failed
// commit; it runs even when the call's own context has ended, since
// leaving half a patch is worse than a late answer.
const restoreTimeout = 30 * time.Second

func (s *Set) applyPatchTool() *Tool {
	desc := "Apply one patch that adds, updates, moves and deletes several files, all or nothing. The patch is either the V4A format " +
		"('*** Begin Patch', then sections '*** Add File: <path>' with '+' lines, '*** Update File: <path>' with an optional " +
		"'*** Move to: <path>' and hunks that start with '@@' (optionally '@@ <a line to find first>', such as the enclosing " +
		"function) and hold ' ' context, '-' removed and '+' added lines, '*** Delete File: <path>', then '*** End Patch') or a " +
		"unified diff ('--- a/<path>', '+++ b/<path>', '@@ -l,s +l,s @@'). Each hunk's context and removed lines must occur " +
		"exactly once after the previous hunk. Nothing is written unless every hunk of every file applies; missing parent " +
		"directories are created."
	if s.opts.RequireRead {
		desc += " Files it changes must be read with read_file first."
	}
	return &Tool{
		Name:        nameApplyPatch,
		Description: desc,
		InputSchema: objectSchema([]string{"patch"},
			prop{"patch", `{"type":"string","description":"The whole patch, V4A ('*** Begin Patch' ... '*** End Patch') or a unified diff."}`},
		),
		Annotations: Annotations{Title: "Apply patch", Destructive: true},
	}
}

// patchOp is one file section of a patch, checked and ready to commit.
type patchOp struct {
	f patch.File
	// idx is the section's index in the patch.
	idx int
	// src is the file the section names; dst a move's or a copy's
	// target.
	src, dst target
	// moved: src goes to dst; copied: dst is made from src, which stays.
	moved, copied bool
	// old is src as read (for Add: the file it replaces, if any); dstOld
	// what a move or a copy replaces.
	old, dstOld existing
	data        []byte
	tolerant    int
}

// name is the op's file in messages: the target of a move or a copy.
func (op *patchOp) name() string {
	if op.moved || op.copied {
		return op.dst.display
	}
	return op.src.display
}

// changed is the storage path whose content the op leaves: the target
// of a copy, else the file the section names.
func (op *patchOp) changed() string {
	if op.copied {
		return op.dst.resolved
	}
	return op.src.resolved
}

func (s *Set) applyPatch(ctx context.Context, raw json.RawMessage) (string, error) {
	var text string
	if err := decodeArgs(raw, arg{"patch", &text, true}); err != nil {
		return "", err
	}
	p, err := patch.Parse(text)
	if err != nil {
		return "", retryf(KindInvalid, "Invalid patch: %s. No changes were written.", err)
	}
	// A missing path with one twin under Unicode normalization is
	// replaced by it, and the patch is planned again; each round turns a
	// missing name into an existing one, so the rounds are bounded.
	var notes strings.Builder
	for round := 0; ; round++ {
		out, err := s.applyParsed(ctx, p)
		var tw *twinPath
		if !errors.As(err, &tw) || round > 2*len(p.Files) {
			if err == nil && notes.Len() > 0 && !strings.HasPrefix(out, "[") {
				out += notes.String()
			}
			return out, err
		}
		if tw.dst {
			p.Files[tw.idx].MoveTo = tw.to
		} else {
			p.Files[tw.idx].Path = tw.to
		}
		fmt.Fprintf(&notes, "\n[Path '%s' was not found; '%s', the same name in another Unicode normalization, was used.]", tw.from, tw.to)
	}
}

// applyParsed applies the parsed patch p: every path checked, every file
// read and every hunk located before one change request and the commit.
func (s *Set) applyParsed(ctx context.Context, p *patch.Patch) (string, error) {
	ops, err := s.resolvePatch(ctx, p)
	if err != nil {
		// The policy's refusals (and read-only storage's) read as every
		// tool's do.
		return "", err
	}
	unlock, err := s.lockPatch(ctx, ops)
	if err != nil {
		return "", err
	}
	defer unlock()
	for _, op := range ops {
		if err := s.planOp(ctx, op); err != nil {
			return "", noChanges(err)
		}
	}
	diffs, diff, truncated := make([]string, len(ops)), "", false
	if s.changeDiffs(ctx) || s.eventDiffs(ctx) {
		diffs, truncated = s.patchDiffs(ops)
		diff = strings.Join(diffs, "\n")
	}
	if msg, err := s.announcePatch(ctx, ops, diff, truncated); err != nil || msg != "" {
		return msg, err
	}
	if err := s.commitPatch(ctx, ops); err != nil {
		return "", err
	}
	return s.patchApplied(ctx, ops, diffs), nil
}

// noChanges ends a refusal made before anything was written with "No
// changes were written.", keeping the error itself (and what it says of
// its kind).
func noChanges(err error) error {
	var r *RetryError
	if IsRetry(err) && errors.As(err, &r) && !strings.HasSuffix(r.Message, "No changes were written.") {
		r.Message += " No changes were written."
	}
	return err
}

// resolvePatch resolves and checks every path of the patch against the
// policy (write level, protected paths included; a copy's source at the
// read level) and refuses a target on read-only storage, all before
// anything is read or written; a file named by two sections is refused,
// since the order of their effects would be a guess.
func (s *Set) resolvePatch(ctx context.Context, p *patch.Patch) ([]*patchOp, error) {
	seen := make(map[string]int)
	var ops []*patchOp
	claim := func(t target, line int) error {
		if first, ok := seen[t.resolved]; ok {
			return retryf(KindInvalid, "'%s' is changed by two sections of the patch (patch lines %d and %d); put all its changes in one section. No changes were written.",
				t.display, first, line)
		}
		seen[t.resolved] = line
		return nil
	}
	for i, f := range p.Files {
		op := &patchOp{f: f, idx: i, copied: f.Kind == patch.Copy}
		var err error
		lv := levelWrite
		if op.copied {
			lv = levelRead
		}
		if op.src, err = s.resolve(ctx, nameApplyPatch, f.Path, lv); err != nil {
			return nil, err
		}
		if !op.copied {
			if err := s.checkWritable(op.src); err != nil {
				return nil, err
			}
			if err := claim(op.src, f.Line); err != nil {
				return nil, err
			}
		}
		if f.MoveTo != "" {
			if op.dst, err = s.resolve(ctx, nameApplyPatch, f.MoveTo, levelWrite); err != nil {
				return nil, err
			}
			if err := s.checkWritable(op.dst); err != nil {
				return nil, err
			}
			switch {
			case op.copied && op.dst.resolved == op.src.resolved:
				return nil, retryf(KindInvalid, "'%s' (patch line %d) is copied onto itself. No changes were written.", f.MoveTo, f.Line)
			case op.copied || op.dst.resolved != op.src.resolved:
				op.moved = !op.copied
				if err := claim(op.dst, f.Line); err != nil {
					return nil, err
				}
			}
		}
		if (f.Kind == patch.Delete || op.moved) && !s.canRemove() {
			return nil, retryf(KindUnsupported, "'%s': moves and deletes need a backend that can remove files, and this one cannot. No changes were written.", f.Path)
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// mountCapabilities is the part of a rooted namespace (mounted.FS) that
// tells each mount's facts, so a read-only mount is known before
// anything is written.
type mountCapabilities interface {
	MountCapabilities(name string) (backend.Capabilities, bool)
}

// checkWritable refuses a target on read-only storage (the backend, or
// the mount of a rooted namespace the target is on) with the refusal a
// write there gets.
func (s *Set) checkWritable(t target) error {
	ro := backend.CapabilitiesOf(s.b).ReadOnly
	if mc, ok := s.b.(mountCapabilities); ok && !ro {
		mount, _, _ := strings.Cut(strings.TrimPrefix(t.resolved, "/"), "/")
		if c, ok := mc.MountCapabilities(mount); ok {
			ro = c.ReadOnly
		}
	}
	if !ro {
		return nil
	}
	return s.storageErr(&fs.PathError{Op: "write", Path: t.resolved, Err: backend.ErrReadOnly}, t.display)
}

// twinPath is a missing path of the patch whose one twin under Unicode
// normalization is to be used instead.
type twinPath struct {
	idx      int
	dst      bool
	from, to string
}

func (t *twinPath) Error() string { return "use " + t.to + " for " + t.from }

// twinOf returns the twin of the missing path p of op (dst: the section's
// target), or nil, when the Set uses twins.
func (s *Set) twinOf(ctx context.Context, op *patchOp, p string, dst bool) *twinPath {
	if s.opts.NoUnicodePathMatch || isASCII(p) {
		return nil
	}
	if c := s.nearNames(ctx, nameApplyPatch, p); len(c) == 1 && c[0].sameForm {
		return &twinPath{idx: op.idx, dst: dst, from: p, to: c[0].display}
	}
	return nil
}

// missing refuses the missing path p of op with msg ("File not found:
// <p>..."), or asks for its twin; the refusal names the entries it may
// have meant, as every tool's does.
func (s *Set) missing(ctx context.Context, op *patchOp, p, msg string) error {
	cands := s.nearNames(ctx, nameApplyPatch, p)
	if len(cands) == 1 && cands[0].sameForm && !s.opts.NoUnicodePathMatch {
		return &twinPath{idx: op.idx, from: p, to: cands[0].display}
	}
	if len(cands) > 0 {
		names := make([]string, len(cands))
		for i, c := range cands {
			names[i] = "'" + c.display + "'"
		}
		msg += fmt.Sprintf(". Did you mean %s?", strings.Join(names, " or "))
	} else {
		msg += "."
	}
	return retryf(KindNotFound, "%s No changes were written.", msg)
}

// created checks a target that a section creates when it is missing:
// its one twin under Unicode normalization is used instead, as
// write_file does.
func (s *Set) created(ctx context.Context, op *patchOp, t target, ex existing, dst bool) error {
	if ex.exists {
		return nil
	}
	if tw := s.twinOf(ctx, op, t.display, dst); tw != nil {
		return tw
	}
	// A nil *twinPath is not returned as an error.
	return nil
}

// canRemove reports whether the backend has the operations moves and
// deletes need.
func (s *Set) canRemove() bool {
	_, rm := s.b.(backend.Remover)
	_, mv := s.b.(backend.Renamer)
	return rm && mv
}

// lockPatch takes the path locks of every file of the patch, in sorted
// order so two patches never wait on each other.
func (s *Set) lockPatch(ctx context.Context, ops []*patchOp) (func(), error) {
	var names []string
	for _, op := range ops {
		names = append(names, op.src.resolved)
		if op.moved || op.copied {
			names = append(names, op.dst.resolved)
		}
	}
	slices.Sort(names)
	var unlocks []func()
	release := func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}
	for _, n := range slices.Compact(names) {
		u, err := s.locks.lock(ctx, n)
		if err != nil {
			release()
			return nil, err
		}
		unlocks = append(unlocks, u)
	}
	return release, nil
}

// planOp reads what op changes and computes its new content, refusing
// whatever the commit could not do.
func (s *Set) planOp(ctx context.Context, op *patchOp) error {
	switch op.f.Kind {
	case patch.Add:
		old, err := s.loadReplaced(ctx, op.src)
		if err != nil {
			return err
		}
		if err := s.created(ctx, op, op.src, old, false); err != nil {
			return err
		}
		op.old, op.data = old, []byte(op.f.Content)
		return nil
	case patch.Delete:
		old, err := s.loadReplaced(ctx, op.src)
		if err != nil {
			return err
		}
		if !old.exists {
			return s.missing(ctx, op, op.src.display, fmt.Sprintf("File not found: %s (patch line %d deletes it)", op.src.display, op.f.Line))
		}
		op.old = old
		return nil
	}
	var old existing
	var err error
	if len(op.f.Hunks) == 0 {
		// A pure move or copy keeps the bytes, text or not.
		if old, err = s.loadWhole(ctx, op.src, !op.copied); err == nil && !old.exists {
			err = s.notFound(ctx, op)
		}
	} else {
		old, err = s.loadText(ctx, op.src, nameApplyPatch)
		if err != nil && IsRetry(err) && isNotFound(err.Error()) {
			err = s.notFound(ctx, op)
		}
	}
	if err != nil {
		return err
	}
	op.old, op.data = old, old.data
	if len(op.f.Hunks) > 0 {
		if i := invalidUTF8(old.data); i >= 0 {
			return retryf(KindNotText, "%s is not valid UTF-8 (invalid byte at offset %d); apply_patch only updates UTF-8 text.", op.src.display, i)
		}
		if !op.copied {
			if err := s.checkRead(op.src, old.hash); err != nil {
				return err
			}
		}
		text, used, err := applyHunks(ctx, string(old.data), op.f.Hunks, op.src.display, s.opts.EditTolerance == ToleranceWhitespace)
		if err != nil {
			return err
		}
		op.data, op.tolerant = []byte(text), used
	}
	if !op.moved && !op.copied {
		return nil
	}
	if op.dstOld, err = s.loadReplaced(ctx, op.dst); err != nil {
		return err
	}
	if err := s.created(ctx, op, op.dst, op.dstOld, true); err != nil {
		return err
	}
	if op.copied && op.dstOld.exists {
		return retryf(KindExists, "'%s' already exists; a copy (patch line %d) creates a new file.", op.dst.display, op.f.Line)
	}
	return nil
}

// notFound refuses an update, move or copy of a missing file (or asks
// for its twin).
func (s *Set) notFound(ctx context.Context, op *patchOp) error {
	msg := "File not found: " + op.src.display
	if op.copied {
		msg += fmt.Sprintf(" (patch line %d copies it)", op.f.Line)
	}
	return s.missing(ctx, op, op.src.display, msg)
}

// loadReplaced reads a file a patch creates, replaces or deletes, whole,
// so a failed commit can put it back: missing is fine (nothing to put
// back) when no name on the way is a file; a directory or special file
// is refused, and so is a file over the edit limit.
func (s *Set) loadReplaced(ctx context.Context, t target) (existing, error) {
	return s.loadWhole(ctx, t, true)
}

// loadWhole is loadReplaced; guard applies the read-before-write guard
// (not to a copy's source, which is only read).
func (s *Set) loadWhole(ctx context.Context, t target, guard bool) (existing, error) {
	info, err := backend.Stat(ctx, s.b, t.resolved)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		dirs, err := s.checkParents(ctx, t)
		return existing{newDirs: dirs}, err
	case errors.Is(err, backend.ErrNotDir):
		return existing{}, parentNotDir(t.display)
	case err != nil:
		return existing{}, s.storageErr(err, t.display)
	case !info.IsRegular():
		return existing{}, retryf(KindNotRegular, "Path '%s' exists and is not a regular file.", t.display)
	case info.Size > s.maxEdit:
		return existing{}, retryf(KindTooLarge, "'%s' is %d bytes; apply_patch replaces and deletes files up to %d bytes, as it keeps them to restore. No changes were written.", t.display, info.Size, s.maxEdit)
	}
	r, err := s.b.OpenRead(ctx, t.resolved)
	if err != nil {
		return existing{}, s.storageErr(err, t.display)
	}
	defer r.Close()
	old, err := readExisting(ctx, r, s.maxEdit)
	if err != nil {
		return existing{}, s.storageErr(err, t.display)
	}
	if old.partial {
		return existing{}, retryf(KindTooLarge, "'%s' is more than %d bytes; apply_patch replaces and deletes files up to %d bytes, as it keeps them to restore. No changes were written.", t.display, s.maxEdit, s.maxEdit)
	}
	if !guard {
		return old, nil
	}
	if err := s.checkRead(t, old.hash); err != nil {
		return existing{}, err
	}
	return old, nil
}

// checkParents refuses a new file whose nearest existing ancestor is not
// a directory; missing parents are created by the write, and returned,
// the nearest to the root first, for the change's Sizes.
func (s *Set) checkParents(ctx context.Context, t target) ([]string, error) {
	var missing []string
	for dir, _ := backend.Split(t.resolved); dir != "."; dir, _ = backend.Split(dir) {
		info, err := backend.Stat(ctx, s.b, dir)
		switch {
		case err == nil && info.IsDir():
			slices.Reverse(missing)
			return missing, nil
		case err == nil, errors.Is(err, backend.ErrNotDir):
			return nil, parentNotDir(t.display)
		case !errors.Is(err, fs.ErrNotExist):
			return nil, s.storageErr(err, t.display)
		}
		missing = append(missing, dir)
	}
	slices.Reverse(missing)
	return missing, nil
}

// patchDiffs renders each file's diff, with /dev/null for the missing
// side and both names for a move.
func (s *Set) patchDiffs(ops []*patchOp) ([]string, bool) {
	var diffs []string
	truncated := false
	for _, op := range ops {
		src := strings.TrimPrefix(s.canonical(op.src.resolved), "/")
		name := src
		if op.moved || op.copied {
			name = strings.TrimPrefix(s.canonical(op.dst.resolved), "/")
		}
		oldText, newText := displayText(op.old.data), displayText(op.data)
		d, tr := udiff.Unified(name, oldText, newText)
		if d == "" {
			d = udiff.Headers(name)
		}
		lines := strings.SplitN(d, "\n", 3)
		switch {
		case op.f.Kind == patch.Add && !op.old.exists:
			lines[0] = "--- /dev/null"
		case op.f.Kind == patch.Delete:
			lines[1] = "+++ /dev/null"
		case op.moved, op.copied:
			lines[0] = "--- a/" + src
		}
		diffs = append(diffs, strings.Join(lines, "\n"))
		truncated = truncated || tr
	}
	return diffs, truncated
}

// patchSizes returns the Sizes of a patch's change request: each file it
// adds, replaces or deletes, for a move both the source (removed) and
// the target (created or replaced), and each directory it creates for a
// new file (Dir), once.
func (s *Set) patchSizes(ops []*patchOp) []SizeChange {
	var out []SizeChange
	dirs := map[string]bool{}
	for _, op := range ops {
		for _, d := range slices.Concat(op.old.newDirs, op.dstOld.newDirs) {
			if !dirs[d] {
				dirs[d] = true
				out = append(out, SizeChange{Path: s.canonical(d), Before: -1, After: 0, Dir: true})
			}
		}
	}
	for _, op := range ops {
		after := int64(len(op.data))
		if op.f.Kind == patch.Delete {
			after = -1
		}
		if op.copied {
			out = append(out, SizeChange{Path: s.canonical(op.dst.resolved), Before: op.dstOld.sizeOrNone(), After: after, BeforeHash: op.dstOld.hash})
			continue
		}
		if op.moved {
			out = append(out, SizeChange{Path: s.canonical(op.src.resolved), Before: op.old.sizeOrNone(), After: -1, BeforeHash: op.old.hash},
				SizeChange{Path: s.canonical(op.dst.resolved), Before: op.dstOld.sizeOrNone(), After: after, BeforeHash: op.dstOld.hash})
			continue
		}
		out = append(out, SizeChange{Path: s.canonical(op.src.resolved), Before: op.old.sizeOrNone(), After: after, BeforeHash: op.old.hash})
	}
	return out
}

// announcePatch sends the one change request of the whole patch, then
// checks every path again. It returns the result text of a cancelled
// patch.
func (s *Set) announcePatch(ctx context.Context, ops []*patchOp, diff string, truncated bool) (string, error) {
	listener := s.changeListener(ctx)
	if listener == nil {
		return "", nil
	}
	req := &ChangeRequest{Path: s.canonical(ops[0].changed()), Operation: OpApplyPatch, Diff: diff, Truncated: truncated, Sizes: s.patchSizes(ops)}
	if err := listener(ctx, req); err != nil {
		return "", listenerFailed(err)
	}
	if reason, ok := req.Cancelled(); ok {
		if reason == "" {
			reason = "cancelled by a listener"
		}
		return fmt.Sprintf("[The patch was not applied: %s]", reason), nil
	}
	for _, op := range ops {
		lv := levelWrite
		if op.copied {
			lv = levelRead
		}
		if err := s.recheck(ctx, op.src, lv); err != nil {
			return "", err
		}
		if op.moved || op.copied {
			if err := s.recheck(ctx, op.dst, levelWrite); err != nil {
				return "", err
			}
		}
	}
	return "", nil
}

// commitStep is one storage change of a patch and how to undo it.
type commitStep struct {
	display string
	do      func(ctx context.Context) error
	undo    func(ctx context.Context) error
}

// commitPatch runs every step of every file; when one fails, the steps
// already done are undone in reverse, from the versions read, and the
// error says what was restored.
func (s *Set) commitPatch(ctx context.Context, ops []*patchOp) error {
	var done []commitStep
	for _, op := range ops {
		for _, st := range s.steps(op) {
			err := st.do(ctx)
			if errors.Is(err, backend.ErrCrossBackend) {
				// A move between two mounts is a write and a removal,
				// which also does the content's write step.
				if err = s.crossMove(ctx, op, &done); err == nil {
					break
				}
			}
			if err != nil {
				return s.restore(ctx, s.stepErr(ctx, err, st.display), done)
			}
			done = append(done, st)
		}
	}
	return nil
}

// pre is the precondition that a file still holds ex (or is missing).
func pre(ex existing) backend.Precondition {
	if ex.exists {
		return backend.Precondition{MatchHash: ex.hash}
	}
	return backend.Precondition{CreateOnly: true}
}

// holding is an existing for data, as the patch leaves it.
func holding(data []byte) existing {
	return existing{exists: true, data: data, size: int64(len(data)), hash: hashBytes(data)}
}

// putBack returns name to ex, from what the patch left there (now).
func (s *Set) putBack(name string, ex, now existing) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		switch {
		case !ex.exists && !now.exists:
			return nil
		case !ex.exists:
			return backend.Remove(ctx, s.b, name, backend.RemoveOptions{Precondition: pre(now)})
		}
		return backend.WriteFile(ctx, s.b, name, ex.data, backend.WriteOptions{Precondition: pre(now)})
	}
}

// write returns a step writing data over what name holds (ex).
func (s *Set) write(name string, ex existing, data []byte) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		return backend.WriteFile(ctx, s.b, name, data, backend.WriteOptions{Precondition: pre(ex)})
	}
}

// steps returns the storage changes of op, each with its undo.
func (s *Set) steps(op *patchOp) []commitStep {
	src := op.src.resolved
	switch {
	case op.f.Kind == patch.Delete:
		return []commitStep{{op.src.display,
			func(ctx context.Context) error {
				return backend.Remove(ctx, s.b, src, backend.RemoveOptions{Precondition: pre(op.old)})
			},
			s.putBack(src, op.old, existing{})}}
	case op.copied:
		dst := op.dst.resolved
		return []commitStep{{op.dst.display, s.write(dst, op.dstOld, op.data), s.putBack(dst, op.dstOld, holding(op.data))}}
	case !op.moved:
		return []commitStep{{op.src.display, s.write(src, op.old, op.data), s.putBack(src, op.old, holding(op.data))}}
	}
	dst := op.dst.resolved
	steps := []commitStep{{op.dst.display,
		func(ctx context.Context) error {
			return backend.Rename(ctx, s.b, src, dst, backend.RenameOptions{Precondition: pre(op.dstOld), Source: pre(op.old)})
		},
		func(ctx context.Context) error {
			if err := backend.Rename(ctx, s.b, dst, src, backend.RenameOptions{Precondition: pre(existing{}), Source: pre(op.old)}); err != nil {
				return err
			}
			return s.putBack(dst, op.dstOld, existing{})(ctx)
		}}}
	if string(op.data) != string(op.old.data) {
		steps = append(steps, commitStep{op.dst.display, s.write(dst, op.old, op.data), s.putBack(dst, op.old, holding(op.data))})
	}
	return steps
}

// crossMove moves op's file between two backends of a namespace: the
// target is written with the new content, then the source removed. Both
// steps join done as they succeed.
func (s *Set) crossMove(ctx context.Context, op *patchOp, done *[]commitStep) error {
	src, dst := op.src.resolved, op.dst.resolved
	for _, st := range []commitStep{
		{op.dst.display, s.write(dst, op.dstOld, op.data), s.putBack(dst, op.dstOld, holding(op.data))},
		{op.src.display, func(ctx context.Context) error {
			return backend.Remove(ctx, s.b, src, backend.RemoveOptions{Precondition: pre(op.old)})
		}, s.putBack(src, op.old, existing{})},
	} {
		if err := st.do(ctx); err != nil {
			return err
		}
		*done = append(*done, st)
	}
	return nil
}

// stepErr maps the failure of a commit step.
func (s *Set) stepErr(ctx context.Context, err error, display string) error {
	switch {
	case errors.Is(err, backend.ErrPrecondition), errors.Is(err, fs.ErrExist):
		return retryf(KindConflict, "Conflict: path '%s' changed while the patch was being applied.", display)
	case errors.Is(err, fs.ErrNotExist):
		return retryf(KindConflict, "Conflict: path '%s' disappeared while the patch was being applied.", display)
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return s.storageErr(err, display)
}

// restore undoes done in reverse after cause, and says what it restored.
func (s *Set) restore(ctx context.Context, cause error, done []commitStep) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restoreTimeout)
	defer cancel()
	var restored, lost []string
	for i := len(done) - 1; i >= 0; i-- {
		if err := done[i].undo(rctx); err != nil {
			lost = append(lost, fmt.Sprintf("%s (%s)", done[i].display, s.storageErr(err, done[i].display)))
		} else if !slices.Contains(restored, done[i].display) {
			restored = append(restored, done[i].display)
		}
	}
	msg := fmt.Sprintf("The patch was not applied: %s", strings.TrimSuffix(cause.Error(), "."))
	switch {
	case len(restored) > 0:
		msg += fmt.Sprintf(". Restored from the versions read: %s", strings.Join(restored, ", "))
	case len(lost) == 0:
		msg += ". No file was changed"
	}
	if len(lost) > 0 {
		msg += fmt.Sprintf(". Could not restore: %s", strings.Join(lost, ", "))
	}
	msg += "."
	if IsRetry(cause) && len(lost) == 0 {
		return retryf(KindOf(cause), "%s", msg)
	}
	return &fatalError{msg: msg, err: cause}
}

// patchApplied emits the events of every file and renders the result.
func (s *Set) patchApplied(ctx context.Context, ops []*patchOp, diffs []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Applied the patch to %d %s:", len(ops), plural(len(ops), "file", "files"))
	var tolerant []string
	for i, op := range ops {
		h := hashBytes(op.data)
		var line string
		switch {
		case op.f.Kind == patch.Delete:
			s.emit(ctx, FileDeleted{Path: s.canonical(op.src.resolved)})
			line = "D " + op.src.display
		case op.f.Kind == patch.Add:
			s.emit(ctx, FileWritten{Path: s.canonical(op.src.resolved), ContentHash: h})
			n := countLines(op.f.Content)
			line = fmt.Sprintf("A %s (%d %s)", op.src.display, n, plural(n, "line", "lines"))
		case op.copied:
			s.emit(ctx, FileCopied{From: s.canonical(op.src.resolved), To: s.canonical(op.dst.resolved), ContentHash: h})
			line = fmt.Sprintf("C %s -> %s", op.src.display, op.dst.display)
			if string(op.data) != string(op.old.data) {
				line += fmt.Sprintf(" (%s)", changedLines(string(op.old.data), string(op.data)))
				s.emit(ctx, FileEdited{FileWritten: FileWritten{Path: s.canonical(op.dst.resolved), ContentHash: h}, Diff: diffs[i]})
			}
		default:
			if op.moved {
				s.emit(ctx, FileMoved{From: s.canonical(op.src.resolved), To: s.canonical(op.dst.resolved)})
				line = fmt.Sprintf("R %s -> %s", op.src.display, op.dst.display)
			} else {
				line = "M " + op.src.display
			}
			if string(op.data) != string(op.old.data) {
				line += fmt.Sprintf(" (%s)", changedLines(string(op.old.data), string(op.data)))
				ev := FileEdited{FileWritten: FileWritten{Path: s.canonical(op.dstOrSrc()), ContentHash: h}, Diff: diffs[i]}
				s.emit(ctx, ev)
			}
		}
		if op.f.Kind != patch.Delete {
			s.guard.remember(op.dstOrSrc(), h)
			if !s.opts.NoContentHashes {
				line += fmt.Sprintf(" [hash:%s]", shortHash(h))
			}
		}
		if op.tolerant > 0 {
			tolerant = append(tolerant, op.name())
		}
		b.WriteString("\n" + line)
	}
	if len(tolerant) > 0 {
		fmt.Fprintf(&b, "\nHunks of %s matched only after ignoring indentation and trailing whitespace; the files' indentation was kept.", strings.Join(tolerant, ", "))
	}
	return b.String()
}

// dstOrSrc is where the op's content now lives.
func (op *patchOp) dstOrSrc() string {
	if op.moved || op.copied {
		return op.dst.resolved
	}
	return op.src.resolved
}
