package tools

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/internal/udiff"
)

// existing is what a change found at its target before changing it.
type existing struct {
	// exists is false for a file about to be created.
	exists bool
	// data holds the content, or only its start when partial is set.
	data []byte
	// partial: data is a prefix; the file was too large to keep whole.
	partial bool
	// size is the length of the whole content.
	size int64
	// hash is the full hex SHA-256 of the whole content.
	hash string
	// version is the backend's version token of the content read, empty
	// where it has none; the commit's precondition names it where the
	// backend checks versions, so a compare-and-swap reads only once.
	version string
	// seenMissing: the file does not exist, nothing lies below its name
	// and its parent was just seen as a directory, which the create's
	// commit tells the backend (backend.WithKnownMissing).
	seenMissing bool
	// newDirs are, for a file about to be created, the missing
	// directories its creation makes, the nearest to the root first.
	newDirs []string
}

// sizeOrNone is ex's size, or -1 for no file (SizeChange's spelling).
func (ex existing) sizeOrNone() int64 {
	if !ex.exists {
		return -1
	}
	return ex.size
}

// precondition is what the commit of a change must find at its target:
// nothing, or still the content ex was read from (by version where the
// backend checks versions, by hash elsewhere).
func (s *Set) precondition(ex existing) backend.Precondition {
	switch {
	case !ex.exists:
		return backend.Precondition{CreateOnly: true}
	case ex.version != "" && backend.CapabilitiesOf(s.b).Versions:
		return backend.Precondition{MatchVersion: ex.version}
	}
	return backend.Precondition{MatchHash: ex.hash}
}

// loadTarget inspects the target of a write. A missing target is fine
// when its parent directory exists. At most keep bytes of an existing
// file are held (none when its reported size is larger: the diff will be
// headers only), while all of it is hashed as it streams by, for the
// write's precondition. Refusals use the texts of write_file.
func (s *Set) loadTarget(ctx context.Context, t target, keep int64) (existing, error) {
	r, err := s.b.OpenRead(ctx, t.resolved)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := s.checkParent(ctx, t); err != nil {
			return existing{}, err
		}
		return existing{seenMissing: true}, nil
	case errors.Is(err, backend.ErrNotDir):
		return existing{}, parentNotDir(t.display)
	case errors.Is(err, backend.ErrIsDir), errors.Is(err, backend.ErrNotRegular):
		return existing{}, retryf(KindNotRegular, "Path '%s' exists and is not a regular file.", t.display)
	case err != nil:
		return existing{}, s.storageErr(err, t.display)
	}
	defer r.Close()
	info := r.Info()
	if info.Size > keep {
		keep = 0
	}
	ex, err := readExisting(ctx, r, keep)
	if err != nil {
		return ex, s.storageErr(err, t.display)
	}
	ex.version = info.Version
	return ex, nil
}

// readExisting reads r to its end, hashing all of it and keeping at most
// keep bytes; partial is set when there was more.
func readExisting(ctx context.Context, r io.Reader, keep int64) (existing, error) {
	h := sha256.New()
	var buf bytes.Buffer
	if f, ok := r.(backend.FileReader); ok {
		if n := f.Info().Size; n >= 0 {
			// Room for what the stream says it holds and ReadFrom's
			// minimum read, so that the buffer is allocated once.
			buf.Grow(int(min(n, keep)) + bytes.MinRead + 1)
		}
	}
	src := io.TeeReader(contextReader{ctx, r}, h)
	ex := existing{exists: true}
	if _, err := io.CopyN(&buf, src, keep+1); err != nil && err != io.EOF {
		return ex, err
	}
	ex.size = int64(buf.Len())
	if int64(buf.Len()) > keep {
		ex.partial = true
		buf.Truncate(int(keep))
		n, err := io.Copy(h, contextReader{ctx, r})
		if err != nil {
			return ex, err
		}
		ex.size += n
	}
	ex.data = buf.Bytes()
	ex.hash = hex.EncodeToString(h.Sum(nil))
	return ex, nil
}

// checkParent explains why a file cannot be created at t: its parent is
// missing, or something on the way is not a directory.
func (s *Set) checkParent(ctx context.Context, t target) error {
	parent, _ := backend.Split(t.resolved)
	for dir := parent; dir != "."; dir, _ = backend.Split(dir) {
		info, err := backend.Stat(ctx, s.b, dir)
		switch {
		case err == nil && info.IsDir():
			if dir == parent {
				return nil
			}
			return parentMissing(t.display)
		case err == nil, errors.Is(err, backend.ErrNotDir):
			return parentNotDir(t.display)
		case !errors.Is(err, fs.ErrNotExist):
			return s.storageErr(err, t.display)
		}
	}
	if parent == "." {
		return nil
	}
	return parentMissing(t.display)
}

func parentMissing(display string) error {
	return retryf(KindNotFound, "Parent directory '%s' does not exist. Use create_directory first.", path.Dir(strings.TrimRight(display, "/")))
}

func parentNotDir(display string) error {
	return retryf(KindNotDir, "Path '%s' has a parent that is not a directory.", display)
}

// checkExpected compares the model's expected_hash with the current
// content of an existing file.
func checkExpected(display, expected, current string) error {
	exp := strings.ToLower(strings.TrimSpace(expected))
	exp = strings.TrimSpace(strings.TrimPrefix(exp, "hash:"))
	if len(exp) >= 12 && strings.HasPrefix(current, exp) {
		return nil
	}
	return conflict(display, exp, shortHash(current))
}

func conflict(display, expected, got string) error {
	return retryf(KindConflict, "Conflict: file '%s' has changed (expected hash:%s, got hash:%s). Re-read the file and retry.", display, expected, got)
}

// change is a write or edit that passed every check and is ready to be
// announced and committed.
type change struct {
	t   target
	op  string // OpWrite or OpEdit
	old existing
	// oldText is the display text of the old content for the diff; ok is
	// false when it cannot be shown (binary or too large).
	oldText string
	oldOK   bool
	data    []byte
}

// diff renders the change's unified diff.
func (s *Set) diff(c *change) (string, bool) {
	name := strings.TrimPrefix(s.canonical(c.t.resolved), "/")
	if !c.oldOK {
		return udiff.Headers(name), true
	}
	return udiff.Unified(name, c.oldText, displayText(c.data))
}

// apply announces c to the change listener and, unless it is cancelled,
// writes it with a precondition that the target still holds what the
// listener was shown. It returns the cancellation text when cancelled.
// verb is "written" or "edited".
func (s *Set) apply(ctx context.Context, c *change, verb string) (diff string, truncated bool, cancelled string, err error) {
	if c.op == OpEdit && s.eventDiffs(ctx) || s.changeDiffs(ctx) {
		// No result text shows the diff: build it only for a listener
		// that reads it (edit_file's FileEdited event carries it too).
		diff, truncated = s.diff(c)
	}
	sizes := []SizeChange{{Path: s.canonical(c.t.resolved), Before: c.old.sizeOrNone(), After: int64(len(c.data)), BeforeHash: c.old.hash}}
	req := &ChangeRequest{Path: s.canonical(c.t.resolved), Operation: c.op, Diff: diff, Truncated: truncated, Sizes: sizes}
	actx, waits := withCommitWaits(ctx, req)
	if msg, err := s.announceRequest(actx, c.t, req, verb); err != nil || msg != "" {
		return diff, truncated, msg, err
	}
	opts := backend.WriteOptions{Precondition: s.precondition(c.old)}
	// The listeners' work the change waits for (WaitBeforeCommit) goes on
	// while the backend stages the bytes, and ends before they become
	// visible.
	var hookErr error
	if len(waits.hooks) > 0 {
		opts.BeforeCommit = func() error {
			hookErr = waits.run()
			return hookErr
		}
	}
	err = backend.WriteFile(s.commitContext(ctx, c), s.b, c.t.resolved, c.data, opts)
	if hookErr != nil {
		return diff, truncated, "", listenerFailed(hookErr)
	}
	if err != nil {
		return diff, truncated, "", s.writeErr(ctx, c, err)
	}
	return diff, truncated, "", nil
}

// announce sends a ChangeRequest to the listener, then resolves and checks
// the path again. It returns the result text of a cancelled change.
// sizes are the request's Sizes.
func (s *Set) announce(ctx context.Context, t target, op, diff string, truncated bool, verb string, sizes []SizeChange) (string, error) {
	return s.announceRequest(ctx, t, &ChangeRequest{Path: s.canonical(t.resolved), Operation: op, Diff: diff, Truncated: truncated, Sizes: sizes}, verb)
}

// announceRequest is announce with the request built by the caller.
func (s *Set) announceRequest(ctx context.Context, t target, req *ChangeRequest, verb string) (string, error) {
	if s.changeListener(ctx) == nil {
		return "", nil
	}
	if msg, err := s.ask(ctx, req, t.display, verb); err != nil || msg != "" {
		return msg, err
	}
	return "", s.recheck(ctx, t, levelWrite)
}

// ask sends req to the listener and returns the result text of a
// cancelled change, naming display.
func (s *Set) ask(ctx context.Context, req *ChangeRequest, display, verb string) (string, error) {
	listener := s.changeListener(ctx)
	if listener == nil {
		return "", nil
	}
	if err := listener(ctx, req); err != nil {
		return "", listenerFailed(err)
	}
	if reason, ok := req.Cancelled(); ok {
		if reason == "" {
			reason = "cancelled by a listener"
		}
		return fmt.Sprintf("['%s' was not %s: %s]", display, verb, reason), nil
	}
	return "", nil
}

// writeErr maps the failure of a write's commit.
func (s *Set) writeErr(ctx context.Context, c *change, err error) error {
	switch {
	case errors.Is(err, backend.ErrPrecondition), errors.Is(err, fs.ErrExist):
		return s.conflictNow(ctx, c)
	case errors.Is(err, backend.ErrIsDir), errors.Is(err, backend.ErrNotRegular):
		return retryf(KindNotRegular, "Path '%s' exists and is not a regular file.", c.t.display)
	case errors.Is(err, backend.ErrNotDir):
		return parentNotDir(c.t.display)
	case errors.Is(err, fs.ErrNotExist):
		if c.old.exists {
			return s.conflictNow(ctx, c)
		}
		return parentMissing(c.t.display)
	}
	return s.storageErr(err, c.t.display)
}

// conflictNow reports that the target no longer holds what was checked,
// naming both hashes ("none" for a missing file). When the storage refused
// the precondition although the content is what was checked, naming two
// equal hashes would read as nonsense, so the message says what happened.
func (s *Set) conflictNow(ctx context.Context, c *change) error {
	exp, got := "none", "none"
	if c.old.exists {
		exp = shortHash(c.old.hash)
	}
	if r, err := s.b.OpenRead(ctx, c.t.resolved); err == nil {
		now, err := readExisting(ctx, r, 1)
		r.Close()
		if err == nil {
			got = shortHash(now.hash)
		}
	}
	if c.old.exists && got == exp {
		return retryf(KindConflict, "Conflict: file '%s' still holds the expected content (hash:%s), but the storage refused the change as if it had changed: it was rewritten with the same content meanwhile, or the storage misreports its precondition. Retry the call.", c.t.display, exp)
	}
	return conflict(c.t.display, exp, got)
}
