package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/fencefs/fencefs/backend"
)

// sourceHashProp is the expected_hash property of delete_file, move_file
// and copy_file: the hash of the file deleted, moved or copied.
const sourceHashProp = `{"type":"string","description":"Optional. The hash a previous read_file, write_file or edit_file reported for the file (the 12 characters after 'hash:'). The call is refused if the file no longer matches, so you never act on changes you have not seen."}`

// destinationHashProp is the destination_hash property of move_file and
// copy_file.
const destinationHashProp = `{"type":"string","description":"Optional, with overwrite. The hash a previous read reported for the file at the destination. The call is refused if that file no longer matches."}`

// withSourceHash appends expected_hash when hashes are on.
func (s *Set) withSourceHash(props ...prop) []prop {
	if s.opts.NoContentHashes {
		return props
	}
	return append(props, prop{"expected_hash", sourceHashProp})
}

func (s *Set) moveFileTool() *Tool {
	desc := "Move or rename a file or a directory. The destination is the full new path; missing parent " +
		"directories are not created (use create_directory first). An existing file at the destination is " +
		"replaced only with overwrite: true; a directory is never replaced. Both paths must be on the same mount."
	if !s.opts.NoContentHashes {
		desc += " Pass expected_hash (the source) and destination_hash (a file being replaced) from your last reads " +
			"to refuse the move if either changed since."
	}
	return &Tool{
		Name:        nameMoveFile,
		Description: desc,
		InputSchema: s.transferSchema("move"),
		Annotations: Annotations{Title: "Move file", Destructive: true},
	}
}

func (s *Set) copyFileTool() *Tool {
	desc := "Copy a file. The destination is the full path of the copy; missing parent directories are not " +
		"created (use create_directory first). An existing file at the destination is replaced only with " +
		"overwrite: true. Directories are not copied."
	if !s.opts.NoContentHashes {
		desc += " Pass expected_hash (the source) and destination_hash (a file being replaced) from your last reads " +
			"to refuse the copy if either changed since."
	}
	return &Tool{
		Name:        nameCopyFile,
		Description: desc,
		InputSchema: s.transferSchema("copy"),
		Annotations: Annotations{Title: "Copy file", Destructive: true, Idempotent: true},
	}
}

// transferSchema is the input schema of move_file and copy_file; verb is
// "move" or "copy".
func (s *Set) transferSchema(verb string) json.RawMessage {
	props := []prop{
		{"source", fmt.Sprintf(`{"type":"string","description":"The path to %s, relative to the working directory, or starting with '/'."}`, verb)},
		{"destination", `{"type":"string","description":"The new path, including the file name, relative to the working directory, or starting with '/'."}`},
		{"overwrite", `{"type":"boolean","description":"Replace an existing file at the destination. Default false."}`},
	}
	if !s.opts.NoContentHashes {
		props = append(props, prop{"expected_hash", sourceHashProp}, prop{"destination_hash", destinationHashProp})
	}
	return objectSchema([]string{"source", "destination"}, props...)
}

// transferArgs are the arguments of move_file and copy_file.
type transferArgs struct {
	source, destination string
	overwrite           bool
	expected, dstHash   *string
}

// transfer is move_file (move) or copy_file.
func (s *Set) transfer(ctx context.Context, raw json.RawMessage, move bool) (string, error) {
	tool, verb := nameCopyFile, "copied"
	if move {
		tool, verb = nameMoveFile, "moved"
	}
	var a transferArgs
	args := []arg{{"source", &a.source, true}, {"destination", &a.destination, true}, {"overwrite", &a.overwrite, false}}
	if !s.opts.NoContentHashes {
		args = append(args, arg{name: "expected_hash", dst: &a.expected}, arg{name: "destination_hash", dst: &a.dstHash})
	}
	if err := decodeArgs(raw, args...); err != nil {
		return "", err
	}
	src, dst, err := s.resolveTransfer(ctx, tool, a, move)
	if err != nil {
		return "", err
	}
	unlock, err := s.lockBoth(ctx, src.resolved, dst.resolved)
	if err != nil {
		return "", err
	}
	defer unlock()
	x, err := s.inspectTransfer(ctx, src, dst, a, move)
	if err != nil {
		return "", err
	}
	req := &ChangeRequest{Path: s.canonical(dst.resolved), Source: s.canonical(src.resolved), Operation: OpCopy}
	if move {
		req.Operation = OpMove
	}
	x.entries.fill(req)
	if !x.dir {
		if s.changeDiffs(ctx) {
			req.Diff, req.Truncated = s.diffTo(dst, x.old, x.data)
		}
		req.Sizes = []SizeChange{{Path: req.Path, Before: x.old.sizeOrNone(), After: x.data.size, BeforeHash: x.old.hash}}
		if move {
			req.Sizes = append(req.Sizes, SizeChange{Path: req.Source, Before: x.data.size, After: -1, BeforeHash: x.data.hash})
		}
	}
	if s.changeListener(ctx) != nil {
		if msg, err := s.ask(ctx, req, src.display, verb); err != nil || msg != "" {
			return msg, err
		}
		if err := s.recheck(ctx, src, levelWrite); err != nil {
			return "", err
		}
		if err := s.recheck(ctx, dst, levelWrite); err != nil {
			return "", err
		}
	}
	if err := s.runTransfer(ctx, x, move); err != nil {
		return "", err
	}
	return s.transferDone(ctx, x, move), nil
}

// resolveTransfer resolves and checks the two paths of a move or copy. A
// move changes its source, so the source is judged at the write level; a
// copy reads it, and also refuses a protected source, so that a
// protected file is not duplicated where it is not protected.
func (s *Set) resolveTransfer(ctx context.Context, tool string, a transferArgs, move bool) (src, dst target, err error) {
	lv := levelRead
	if move {
		lv = levelWrite
	}
	if src, err = s.resolve(ctx, tool, a.source, lv); err != nil {
		return src, dst, err
	}
	if !move {
		if err := s.checkRules(src, levelWrite); err != nil {
			return src, dst, err
		}
	}
	if dst, err = s.resolve(ctx, tool, a.destination, levelWrite); err != nil {
		return src, dst, err
	}
	if move {
		if err := s.checkRemovable(src); err != nil {
			return src, dst, err
		}
	}
	switch {
	case src.resolved == dst.resolved:
		return src, dst, retryf(KindInvalid, "'%s' and '%s' are the same path.", a.source, a.destination)
	case move && backend.IsWithin(dst.resolved, src.resolved):
		return src, dst, retryf(KindInvalid, "Cannot move '%s' into itself ('%s').", a.source, a.destination)
	case move && s.rooted && mountOf(src.resolved) != mountOf(dst.resolved):
		return src, dst, crossMountMsg(a.source, a.destination)
	}
	return src, dst, nil
}

// mountOf returns the mount a storage path of a rooted namespace is on.
func mountOf(name string) string {
	mount, _, _ := strings.Cut(name, "/")
	return mount
}

func crossMountMsg(src, dst string) error {
	return retryf(KindUnsupported, "Cannot move '%s' to '%s': they are on different mounts. Use copy_file, then delete_file.", src, dst)
}

// lockBoth takes the Set's locks of two paths, in a fixed order so that
// two calls naming them the other way round cannot deadlock.
func (s *Set) lockBoth(ctx context.Context, a, b string) (func(), error) {
	names := []string{a, b}
	slices.Sort(names)
	first, err := s.locks.lock(ctx, names[0])
	if err != nil {
		return nil, err
	}
	second, err := s.locks.lock(ctx, names[1])
	if err != nil {
		first()
		return nil, err
	}
	return func() { second(); first() }, nil
}

// transferPlan is a move or copy that passed every check.
type transferPlan struct {
	from, to target
	dir      bool         // the source is a directory (moves only)
	entries  *treeEntries // the source directory's, for the change request
	data     existing     // the source file's content
	old      existing     // the file replaced at the destination, if any
}

// inspectTransfer checks the source and the destination of a move or
// copy and reads what its preconditions and its diff need.
func (s *Set) inspectTransfer(ctx context.Context, src, dst target, a transferArgs, move bool) (*transferPlan, error) {
	x := &transferPlan{from: src, to: dst}
	info, err := backend.Stat(ctx, s.b, src.resolved)
	switch {
	case err != nil:
		return nil, s.storageErr(err, src.display)
	case info.IsDir() && !move:
		return nil, retryf(KindIsDir, "'%s' is a directory; copy_file copies files only.", src.display)
	case info.IsDir() && a.expected != nil:
		return nil, retryf(KindIsDir, "'%s' is a directory; expected_hash applies to files only.", src.display)
	case info.IsDir():
		x.dir = true
		x.entries = s.newTreeEntries(ctx)
		if _, err := s.checkTree(ctx, src, src.resolved, both(s.landingCheck(dst, src.resolved), x.entries.add)); err != nil {
			return nil, err
		}
	case !info.IsRegular():
		return nil, retryf(KindNotRegular, "Path '%s' is not a regular file or directory.", src.display)
	default:
		if x.data, err = s.loadSource(ctx, src, s.keepForDiff(ctx)); err != nil {
			return nil, err
		}
		if a.expected != nil {
			if err := checkExpected(src.display, *a.expected, x.data.hash); err != nil {
				return nil, err
			}
		}
	}
	return x, s.inspectDestination(ctx, x, a)
}

// inspectDestination checks the destination of x: missing with an
// existing parent directory, or, with overwrite, a regular file that
// still has the hash the caller gave.
func (s *Set) inspectDestination(ctx context.Context, x *transferPlan, a transferArgs) error {
	dst := x.to
	info, err := backend.Stat(ctx, s.b, dst.resolved)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return s.checkParent(ctx, dst)
	case errors.Is(err, backend.ErrNotDir):
		return parentNotDir(dst.display)
	case err != nil:
		return s.storageErr(err, dst.display)
	case info.IsDir() && !x.dir:
		return retryf(KindIsDir, "Destination '%s' is a directory. Name the full new path, including the file name.", dst.display)
	case x.dir:
		return retryf(KindExists, "Destination '%s' already exists. A directory is moved only to a path that does not exist.", dst.display)
	case !a.overwrite:
		return retryf(KindExists, "Destination '%s' already exists. Pass overwrite: true to replace it.", dst.display)
	}
	if x.old, err = s.loadTarget(ctx, dst, s.keepForDiff(ctx)); err != nil {
		return err
	}
	if a.dstHash != nil {
		if err := checkExpected(dst.display, *a.dstHash, x.old.hash); err != nil {
			return err
		}
	}
	return s.checkRead(dst, x.old.hash)
}

// runTransfer moves or copies on the condition that the source and the
// destination still hold what was checked and shown to the listener.
func (s *Set) runTransfer(ctx context.Context, x *transferPlan, move bool) error {
	var opts backend.RenameOptions
	if x.data.exists {
		opts.Source.MatchHash = x.data.hash
	}
	if x.old.exists {
		opts.Precondition.MatchHash = x.old.hash
	} else {
		opts.Precondition.CreateOnly = true
	}
	var err error
	if move {
		err = backend.Rename(ctx, s.b, x.from.resolved, x.to.resolved, opts)
	} else {
		err = backend.Copy(ctx, s.b, x.from.resolved, x.to.resolved, opts)
	}
	if err == nil {
		return nil
	}
	return s.transferErr(ctx, x, err)
}

// transferErr maps the failure of a move or copy: a changed source or
// destination is a conflict naming it.
func (s *Set) transferErr(ctx context.Context, x *transferPlan, err error) error {
	onSource := false
	var pe *fs.PathError
	if errors.As(err, &pe) {
		onSource = pe.Path == x.from.resolved
	}
	switch {
	case errors.Is(err, backend.ErrCrossBackend):
		return crossMountMsg(x.from.display, x.to.display)
	case onSource && (errors.Is(err, backend.ErrPrecondition) || errors.Is(err, fs.ErrNotExist)):
		return s.conflictNow(ctx, &change{t: x.from, old: x.data})
	case onSource:
		return s.storageErr(err, x.from.display)
	case errors.Is(err, backend.ErrPrecondition), errors.Is(err, fs.ErrExist):
		return s.conflictNow(ctx, &change{t: x.to, old: x.old})
	case errors.Is(err, backend.ErrIsDir), errors.Is(err, backend.ErrNotRegular):
		return retryf(KindNotRegular, "Path '%s' exists and is not a regular file.", x.to.display)
	case errors.Is(err, backend.ErrNotDir):
		return parentNotDir(x.to.display)
	}
	return s.storageErr(err, x.to.display)
}

// transferDone emits the event of a finished move or copy and returns its
// result text.
func (s *Set) transferDone(ctx context.Context, x *transferPlan, move bool) string {
	from, to := s.canonical(x.from.resolved), s.canonical(x.to.resolved)
	res := fmt.Sprintf("Copied %s to %s.", x.from.display, x.to.display)
	if move {
		res = fmt.Sprintf("Moved %s to %s.", x.from.display, x.to.display)
		s.emit(ctx, FileMoved{From: from, To: to, ContentHash: x.data.hash})
	} else {
		s.emit(ctx, FileCopied{From: from, To: to, ContentHash: x.data.hash})
	}
	if x.data.exists {
		s.guard.remember(x.to.resolved, x.data.hash)
		if !s.opts.NoContentHashes {
			res += fmt.Sprintf(" [hash:%s]", shortHash(x.data.hash))
		}
	}
	return res
}
