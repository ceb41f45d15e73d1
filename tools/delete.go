package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/internal/udiff"
	"github.com/fencefs/fencefs/policy"
)

func (s *Set) deleteFileTool() *Tool {
	desc := "Delete a file or a directory. A directory must be empty unless recursive is true, which deletes it " +
		"and everything in it; a directory holding a protected path is not deleted at all. A path through a " +
		"symlink deletes what the link leads to."
	if !s.opts.NoContentHashes {
		desc += " Pass expected_hash from your last read to refuse the deletion if the file changed since."
	}
	return &Tool{
		Name:        nameDeleteFile,
		Description: desc,
		InputSchema: objectSchema([]string{"path"}, s.withSourceHash(
			prop{"path", `{"type":"string","description":"The file or directory to delete, relative to the working directory, or starting with '/'."}`},
			prop{"recursive", `{"type":"boolean","description":"Delete a directory and everything in it. Default false: only an empty directory is deleted."}`},
		)...),
		Annotations: Annotations{Title: "Delete file", Destructive: true},
	}
}

func (s *Set) deleteFile(ctx context.Context, raw json.RawMessage) (string, error) {
	var p string
	var recursive bool
	var expected *string
	args := append([]arg{{"path", &p, true}, {"recursive", &recursive, false}}, s.hashArg(&expected)...)
	if err := decodeArgs(raw, args...); err != nil {
		return "", err
	}
	t, err := s.resolve(ctx, nameDeleteFile, p, levelWrite)
	if err != nil {
		return "", err
	}
	if err := s.checkRemovable(t); err != nil {
		return "", err
	}
	unlock, err := s.locks.lock(ctx, t.resolved)
	if err != nil {
		return "", err
	}
	defer unlock()
	info, err := backend.Stat(ctx, s.b, t.resolved)
	if err != nil {
		return "", s.storageErr(err, p)
	}
	if info.IsDir() {
		if expected != nil {
			return "", retryf(KindIsDir, "'%s' is a directory; expected_hash applies to files only.", p)
		}
		return s.deleteDir(ctx, t, recursive)
	}
	return s.deleteOne(ctx, t, info, expected)
}

// checkRemovable refuses to delete or move the namespace root, in a
// rooted namespace a mount, and the working directory or a directory
// holding it, which every later relative path would miss.
func (s *Set) checkRemovable(t target) error {
	switch {
	case t.resolved == ".":
		return retryf(KindProtected, "Path '%s' is the root of the workspace and cannot be deleted or moved.", t.display)
	case s.rooted && !strings.Contains(t.resolved, "/"):
		return retryf(KindProtected, "Path '%s' is a mount and cannot be deleted or moved.", t.display)
	case backend.IsWithin(s.cwd, t.resolved):
		return retryf(KindProtected, "Path '%s' holds the working directory and cannot be deleted or moved.", t.display)
	}
	return nil
}

// deleteOne deletes the file at t, whose metadata is info, on the
// condition that it still holds what the checks and the change listener
// saw.
func (s *Set) deleteOne(ctx context.Context, t target, info backend.FileInfo, expected *string) (string, error) {
	var old existing
	var diff string
	truncated := false
	if info.IsRegular() {
		var err error
		if old, err = s.loadSource(knownFile(ctx, t.resolved, info.Size, info.Version), t, s.keepForDiff(ctx)); err != nil {
			return "", err
		}
		if expected != nil {
			if err := checkExpected(t.display, *expected, old.hash); err != nil {
				return "", err
			}
		}
		if err := s.checkRead(t, old.hash); err != nil {
			return "", err
		}
		if s.changeDiffs(ctx) {
			diff, truncated = s.diffTo(t, old, existing{})
		}
	} else if expected != nil {
		return "", retryf(KindNotRegular, "Path '%s' is not a regular file; expected_hash applies to files only.", t.display)
	}
	var sizes []SizeChange
	if old.exists {
		sizes = []SizeChange{{Path: s.canonical(t.resolved), Before: old.size, After: -1, BeforeHash: old.hash}}
	}
	if msg, err := s.announce(ctx, t, OpDelete, diff, truncated, "deleted", sizes); err != nil || msg != "" {
		return msg, err
	}
	var pre backend.Precondition
	if old.exists {
		pre = s.precondition(old)
	}
	if err := backend.Remove(s.commitContext(ctx, &change{t: t, old: old}), s.b, t.resolved, backend.RemoveOptions{Precondition: pre}); err != nil {
		if errors.Is(err, backend.ErrPrecondition) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, backend.ErrIsDir) {
			return "", s.conflictNow(ctx, &change{t: t, old: old})
		}
		return "", s.storageErr(err, t.display)
	}
	s.emit(ctx, FileDeleted{Path: s.canonical(t.resolved), ContentHash: old.hash})
	return "Deleted file: " + t.display, nil
}

// loadSource reads the regular file at t for a change that removes or
// copies it: its hash, and at most keep bytes of it (s.keepForDiff: as much
// as a diff can show, when one is built).
func (s *Set) loadSource(ctx context.Context, t target, keep int64) (existing, error) {
	r, err := s.b.OpenRead(ctx, t.resolved)
	if err != nil {
		return existing{}, s.storageErr(err, t.display)
	}
	defer r.Close()
	ex, err := readExisting(ctx, r, keep)
	if err != nil {
		return ex, s.storageErr(err, t.display)
	}
	ex.version = r.Info().Version
	return ex, nil
}

// diffTo renders the diff of the file at t from its content old (missing
// when !old.exists) to the content new (missing for a deletion); a side
// that cannot be shown (binary, or larger than a diff shows) gives the
// headers only.
func (s *Set) diffTo(t target, old, new existing) (string, bool) {
	name := strings.TrimPrefix(s.canonical(t.resolved), "/")
	if old.partial || isBinaryPrefix(old.data) || new.partial || isBinaryPrefix(new.data) {
		return udiff.Headers(name), true
	}
	return udiff.Unified(name, displayText(old.data), displayText(new.data))
}

// deleteDir deletes the directory at t: an empty one, or with recursive
// everything below it, after checking that the policy lets every entry
// be changed.
func (s *Set) deleteDir(ctx context.Context, t target, recursive bool) (string, error) {
	entries, err := s.b.List(ctx, t.resolved)
	if err != nil {
		return "", s.storageErr(err, t.display)
	}
	notEmpty := retryf(KindNotEmpty, "Directory '%s' is not empty. Pass recursive: true to delete it and everything in it.", t.display)
	if len(entries) > 0 && !recursive {
		return "", notEmpty
	}
	read := s.readCheck(ctx, t)
	walked := s.newTreeEntries(ctx)
	n, err := s.checkTree(ctx, t, t.resolved, both(read, walked.add))
	if err != nil {
		return "", err
	}
	req := &ChangeRequest{Path: s.canonical(t.resolved), Operation: OpDelete}
	walked.fill(req)
	if msg, err := s.announceRequest(ctx, t, req, "deleted"); err != nil || msg != "" {
		return msg, err
	}
	if n == 0 {
		err = backend.Remove(ctx, s.b, t.resolved, backend.RemoveOptions{})
	} else {
		err = backend.RemoveAll(ctx, s.b, t.resolved, backend.RemoveAllOptions{Check: func(name string, e backend.DirEntry) error {
			if name != t.resolved && !walked.has(name, e) {
				// Appeared after the walk the change was announced
				// with (and maybe approved by): nothing is removed.
				return backend.ErrNotEmpty
			}
			if err := s.entryRefusal(t, name); err != nil {
				return err
			}
			if read != nil {
				return read(name, e)
			}
			return nil
		}})
	}
	switch {
	case errors.Is(err, backend.ErrNotEmpty) && n == 0:
		return "", notEmpty
	case errors.Is(err, backend.ErrNotEmpty):
		return "", retryf(KindConflict, "Conflict: directory '%s' changed while it was being deleted; what appeared meanwhile is still there. Check it and retry.", t.display)
	case err != nil:
		return "", s.storageErr(err, t.display)
	}
	s.emit(ctx, DirectoryDeleted{Path: s.canonical(t.resolved), Entries: n})
	if n == 0 {
		return "Deleted directory: " + t.display, nil
	}
	return fmt.Sprintf("Deleted directory: %s (%s)", t.display, count(n, "entry", "entries")), nil
}

// checkTree walks the tree below dir, the directory of the tool target t,
// and refuses it when the policy does not let one of its entries be
// changed (a protected or denied path). It returns the number of entries.
// land, when set, is also called for every entry (in the same walk, so
// storage is listed once) and refuses the tree when it returns an error.
func (s *Set) checkTree(ctx context.Context, t target, dir string, land func(name string, e backend.DirEntry) error) (int, error) {
	n := 0
	err := backend.Walk(ctx, s.b, dir, func(name string, e backend.DirEntry) error {
		n++
		if err := s.entryRefusal(t, name); err != nil {
			return err
		}
		if land != nil {
			return land(name, e)
		}
		return nil
	})
	if err != nil {
		return n, s.storageErr(err, t.display)
	}
	return n, nil
}

// both returns a land function of checkTree that calls a and then b,
// either of which may be nil.
func both(a, b func(string, backend.DirEntry) error) func(string, backend.DirEntry) error {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	return func(name string, e backend.DirEntry) error {
		if err := a(name, e); err != nil {
			return err
		}
		return b(name, e)
	}
}

// MaxChangeEntries bounds the entries of a directory a change request
// names (ChangeRequest.Entries): a larger tree's change is announced
// with EntriesOver instead.
const MaxChangeEntries = 100000

// treeEntries collects the entries of a directory's walk, for the change
// request of its delete or move and to hold its removal to them. A nil
// *treeEntries (no change listener to announce them to) collects
// nothing and holds nothing back.
type treeEntries struct {
	s    *Set
	seen map[string]bool // storage paths, a directory's with '/'
	over bool
}

// newTreeEntries returns a collector when a change under ctx is
// announced to a listener, nil otherwise.
func (s *Set) newTreeEntries(ctx context.Context) *treeEntries {
	if s.changeListener(ctx) == nil {
		return nil
	}
	return &treeEntries{s: s, seen: map[string]bool{}}
}

// key is how an entry is known: its storage path, with '/' for a
// directory, so that a file replaced by a directory of its name is new.
func entryKey(name string, e backend.DirEntry) string {
	if e.IsDir() {
		return name + "/"
	}
	return name
}

// add is checkTree's land function that collects.
func (w *treeEntries) add(name string, e backend.DirEntry) error {
	if w == nil || w.over {
		return nil
	}
	if len(w.seen) == MaxChangeEntries {
		w.over, w.seen = true, nil
		return nil
	}
	w.seen[entryKey(name, e)] = true
	return nil
}

// has reports whether the entry name was walked (always true without a
// collector, or over its bound).
func (w *treeEntries) has(name string, e backend.DirEntry) bool {
	return w == nil || w.over || w.seen[entryKey(name, e)]
}

// fill sets req's Entries (or EntriesOver) from what was walked.
func (w *treeEntries) fill(req *ChangeRequest) {
	if w == nil {
		return
	}
	if w.over {
		req.EntriesOver = true
		return
	}
	req.Entries = make([]string, 0, len(w.seen))
	for k := range w.seen {
		name, dir := strings.CutSuffix(k, "/")
		if name = w.s.canonical(name); dir {
			name += "/"
		}
		req.Entries = append(req.Entries, name)
	}
	slices.Sort(req.Entries)
}

// landingCheck returns the land function of checkTree for a directory
// moved from src to dst: every path the tree lands on below dst is judged
// at the write level as the entry itself is (a protected or denied path
// under the destination refuses the move), whatever the source's names
// were allowed.
func (s *Set) landingCheck(dst target, src string) func(string, backend.DirEntry) error {
	return func(name string, _ backend.DirEntry) error {
		rel, ok := strings.CutPrefix(name, src+"/")
		if !ok {
			return nil
		}
		return s.entryRefusal(dst, backend.Join(dst.resolved, rel))
	}
}

// readCheck returns the land function of checkTree for a recursive
// delete under Options.RequireRead (nil without it): every regular file
// the deletion removes must have been read, and not changed since, as for
// a single file.
func (s *Set) readCheck(ctx context.Context, t target) func(string, backend.DirEntry) error {
	if !s.opts.RequireRead {
		return nil
	}
	// A file found read and unchanged once is not read again when the
	// removal lists the tree a second time; one that appeared meanwhile
	// is judged then.
	var mu sync.Mutex
	checked := map[string]bool{}
	return func(name string, e backend.DirEntry) error {
		if !e.Type.IsRegular() {
			return nil
		}
		mu.Lock()
		done := checked[name]
		mu.Unlock()
		if done {
			return nil
		}
		entry := target{display: s.outputPath(name), written: name, resolved: name}
		seen, ok := s.guard.seen(name)
		if !ok {
			return retryf(KindNotRead, "Directory '%s' cannot be changed as a whole: '%s' has not been read yet; read it before changing it.", t.display, entry.display)
		}
		cur, err := s.loadSource(ctx, entry, 0)
		if err != nil {
			return err
		}
		if cur.hash != seen {
			return retryf(KindConflict, "Directory '%s' cannot be changed as a whole: '%s' changed since it was read; read it again.", t.display, entry.display)
		}
		mu.Lock()
		checked[name] = true
		mu.Unlock()
		return nil
	}
}

// entryRefusal returns why the entry name of the tree at t cannot be
// changed, or nil.
func (s *Set) entryRefusal(t target, name string) error {
	err := s.rules.CheckWrite(name, name)
	var d *policy.Denied
	if errors.As(err, &d) {
		return retryf(deniedKind(d), "Directory '%s' cannot be changed as a whole: %s", t.display, d.Naming(s.canonical(name)).Message)
	}
	return err
}
