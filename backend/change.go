package backend

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"slices"
	"strings"
)

// Errors of the changing operations (see [Remover], [Renamer], [Copier]),
// returned wrapped in an *fs.PathError like the others.
var (
	// ErrNotEmpty: a directory to remove still holds entries.
	ErrNotEmpty = &sentinel{"directory not empty", nil}
	// ErrCrossBackend: a rename names two paths on different backends (two
	// mounts of a namespace), which no single storage operation can move
	// between.
	ErrCrossBackend = &sentinel{"paths are on different backends", nil}
)

// RemoveOptions adjust a removal.
type RemoveOptions struct {
	// Precondition restricts the removal of a file: MatchHash or
	// MatchVersion name the content it must still hold. CreateOnly makes no
	// sense for a removal and is refused with fs.ErrInvalid.
	Precondition Precondition
}

// RenameOptions adjust a rename. Copy takes the same options.
type RenameOptions struct {
	// Precondition applies to the target, as a write's precondition does:
	// CreateOnly refuses to replace anything (fs.ErrExist), MatchHash and
	// MatchVersion replace only a file that still holds that content
	// (ErrPrecondition when it differs or is missing). The zero value
	// replaces an existing regular file.
	Precondition Precondition
	// Source, when MatchHash or MatchVersion is set, is the content the
	// source file must hold (ErrPrecondition otherwise). CreateOnly is
	// refused with fs.ErrInvalid.
	Source Precondition
}

// CopyOptions adjust a copy; they mean what [RenameOptions] mean.
type CopyOptions = RenameOptions

// Remover removes files and empty directories.
//
// Remove removes name, which is a file, a symlink (the link itself, never
// its target), a special file or an empty directory. A missing name gives
// fs.ErrNotExist, a directory that holds entries ErrNotEmpty and the root
// "." ErrInvalidPath. With a MatchHash or MatchVersion precondition only a
// regular file holding that content is removed: a different content gives
// ErrPrecondition and a directory ErrIsDir; the check and the removal are
// one atomic step where Capabilities.AtomicPreconditions says so. A backend
// that cannot remove declines with an error matching errors.ErrUnsupported
// (a read-only one with ErrReadOnly).
type Remover interface {
	Remove(ctx context.Context, name string, opts RemoveOptions) error
}

// Renamer moves files and directories within one backend.
//
// Rename moves from to to. Missing parents of to are created, as a write
// creates them. A file replaces an existing regular file at to unless
// opts.Precondition says otherwise (see [RenameOptions]); a directory at
// to gives ErrIsDir and any other non-regular file ErrNotRegular. A
// directory moves only to a missing path (fs.ErrExist otherwise), and never
// into itself (ErrInvalidPath). A missing from gives fs.ErrNotExist; the
// root "." as either path ErrInvalidPath. Capabilities.AtomicRename says
// whether observers can see an intermediate state; where they can (S3 copies
// then deletes), the source is removed only after its copy is complete and
// verified, so a failure leaves the source intact. A backend that cannot
// rename declines with an error matching errors.ErrUnsupported.
type Renamer interface {
	Rename(ctx context.Context, from, to string, opts RenameOptions) error
}

// Copier copies files within one backend, where the storage can do it
// without the bytes passing through the caller (S3 CopyObject).
//
// Copy copies the regular file from to to, with the options and errors of
// [Renamer.Rename]; a directory as from gives ErrIsDir. The target appears
// whole or not at all, as a write's commit. A backend that cannot copy on
// its side declines with an error matching errors.ErrUnsupported, and
// [Copy] then streams the file.
type Copier interface {
	Copy(ctx context.Context, from, to string, opts CopyOptions) error
}

// BatchRemover removes many files in few requests, where the storage has
// such a request (S3 DeleteObjects: 1000 keys each). [RemoveAll] uses it.
type BatchRemover interface {
	// RemoveFiles removes the files (no directories) names; names already
	// missing are not an error. On failure some of them may be gone. It may
	// decline with errors.ErrUnsupported.
	RemoveFiles(ctx context.Context, names []string) error
}

// Remove removes name from b (see [Remover]), or fails with ErrReadOnly
// when b is read-only and with errors.ErrUnsupported when it cannot remove
// (an invalid name is refused as such first, as a Remover refuses it).
func Remove(ctx context.Context, b Backend, name string, opts RemoveOptions) error {
	r, ok := b.(Remover)
	if err := changeable(b, true, "remove", name); err != nil {
		return err
	}
	if !ok {
		return decline("remove", name)
	}
	return r.Remove(ctx, name, opts)
}

// Rename moves from to to on b (see [Renamer]), or fails with ErrReadOnly
// when b is read-only and with errors.ErrUnsupported when it cannot rename
// (invalid paths are refused as such first, as a Renamer refuses them).
func Rename(ctx context.Context, b Backend, from, to string, opts RenameOptions) error {
	r, ok := b.(Renamer)
	if err := changeable(b, true, "rename", from); err != nil {
		return err
	}
	if !ok {
		return decline("rename", from, to)
	}
	return r.Rename(ctx, from, to, opts)
}

// Copy copies the regular file from to to on b, with b's Copier when it has
// one that does not decline, and by streaming the file through [CopyStream]
// otherwise.
func Copy(ctx context.Context, b Backend, from, to string, opts CopyOptions) error {
	if err := changeable(b, true, "copy", to); err != nil {
		return err
	}
	if c, ok := b.(Copier); ok {
		err := c.Copy(ctx, from, to, opts)
		if !errors.Is(err, errors.ErrUnsupported) {
			return err
		}
	}
	return CopyStream(ctx, b, from, b, to, opts)
}

// decline refuses op on a backend without the interface for it: an
// invalid path with fs.ErrInvalid, as the interface's implementations do,
// and valid ones with errors.ErrUnsupported.
func decline(op string, names ...string) error {
	for _, name := range names {
		if err := CheckPath(op, name); err != nil {
			return err
		}
	}
	return &fs.PathError{Op: op, Path: names[0], Err: errors.ErrUnsupported}
}

// changeable refuses a change on a read-only backend, or on one that lacks
// the interface (ok false).
func changeable(b Backend, ok bool, op, name string) error {
	if CapabilitiesOf(b).ReadOnly {
		return &fs.PathError{Op: op, Path: name, Err: ErrReadOnly}
	}
	if !ok {
		return &fs.PathError{Op: op, Path: name, Err: errors.ErrUnsupported}
	}
	return nil
}

// CopyStream copies the regular file from on src to to on dst by reading
// it and writing it with dst's Writer, so it works between any two
// backends. opts.Source.MatchHash is checked against the bytes as they
// stream: the write commits only when they match, so what lands is exactly
// the content asked for. opts.Source.MatchVersion is compared with the
// version the source reports before it is read.
func CopyStream(ctx context.Context, src Reader, from string, dst Backend, to string, opts CopyOptions) error {
	const op = "copy"
	if err := CheckPath(op, from); err != nil {
		return err
	}
	if err := CheckPath(op, to); err != nil {
		return err
	}
	if err := checkSourcePrecondition(op, from, opts.Source); err != nil {
		return err
	}
	if from == "." {
		return &fs.PathError{Op: op, Path: from, Err: ErrIsDir}
	}
	if opts.Source.MatchVersion != "" {
		b, ok := src.(Backend)
		if !ok {
			return &fs.PathError{Op: op, Path: from, Err: errors.ErrUnsupported}
		}
		fi, err := Stat(ctx, b, from)
		if err != nil {
			return err
		}
		if fi.IsDir() {
			return &fs.PathError{Op: op, Path: from, Err: ErrIsDir}
		}
		if fi.Version == "" {
			return &fs.PathError{Op: op, Path: from, Err: fmt.Errorf("version precondition: %w", errors.ErrUnsupported)}
		}
		if fi.Version != opts.Source.MatchVersion {
			return &fs.PathError{Op: op, Path: from, Err: ErrPrecondition}
		}
	}
	r, err := src.OpenRead(ctx, from)
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := OpenWrite(ctx, dst, to, WriteOptions{Precondition: opts.Precondition})
	if err != nil {
		return err
	}
	defer w.Close()
	var h hash.Hash
	var in io.Reader = r
	if opts.Source.MatchHash != "" {
		h = sha256.New()
		in = io.TeeReader(r, h)
	}
	if _, err := io.Copy(w, in); err != nil {
		return PathError(op, to, err)
	}
	if h != nil && !strings.EqualFold(hex.EncodeToString(h.Sum(nil)), opts.Source.MatchHash) {
		return &fs.PathError{Op: op, Path: from, Err: ErrPrecondition}
	}
	return w.Commit()
}

// checkSourcePrecondition refuses a CreateOnly source precondition, which
// asks for nothing a source can satisfy.
func checkSourcePrecondition(op, from string, pre Precondition) error {
	if pre.CreateOnly {
		return &fs.PathError{Op: op, Path: from, Err: fmt.Errorf("%w: a source cannot be create-only", fs.ErrInvalid)}
	}
	return nil
}

// CheckRemove validates the arguments of a removal the way every
// [Remover] must: a canonical path other than the root, and no CreateOnly
// precondition. Adapters call it first.
func CheckRemove(name string, opts RemoveOptions) error {
	const op = "remove"
	if err := CheckPath(op, name); err != nil {
		return err
	}
	if name == "." {
		return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: the root cannot be removed", ErrInvalidPath)}
	}
	if opts.Precondition.CreateOnly {
		return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: a removal cannot be create-only", fs.ErrInvalid)}
	}
	return nil
}

// CheckRename validates the arguments of a rename or copy (op) the way
// every [Renamer] and [Copier] must: canonical paths other than the root,
// no CreateOnly source precondition, and a target that does not lie
// inside the source. Adapters call it first.
func CheckRename(op, from, to string, opts RenameOptions) error {
	if err := CheckPath(op, from); err != nil {
		return err
	}
	if err := CheckPath(op, to); err != nil {
		return err
	}
	if from == "." || to == "." {
		return &fs.PathError{Op: op, Path: from, Err: fmt.Errorf("%w: the root cannot be moved or replaced", ErrInvalidPath)}
	}
	if from != to && IsWithin(to, from) {
		return &fs.PathError{Op: op, Path: to, Err: fmt.Errorf("%w: %s lies inside %s", ErrInvalidPath, to, from)}
	}
	return checkSourcePrecondition(op, from, opts.Source)
}

// RemoveAllOptions adjust [RemoveAll].
type RemoveAllOptions struct {
	// Check, when set, is called for every entry of the tree (the root
	// included, with its own name) before anything is removed; an error
	// stops RemoveAll with nothing removed and is returned.
	Check func(name string, entry DirEntry) error
}

// RemoveAll removes name and, when it is a directory, everything below
// it, on any backend with a [Remover]. It lists the tree first, in one
// pass where the backend is a [Walker] (S3: one request per 1000 keys),
// then removes the files in batches where the backend is a
// [BatchRemover] (S3 DeleteObjects: one request per 1000 keys) and one by
// one otherwise, and last the directories, deepest first. Only the
// entries listed are removed: a file that appears below name meanwhile
// makes the removal of its directory fail with ErrNotEmpty. A tree cannot
// be removed atomically on any storage: a failure part way leaves what was
// not removed yet. A missing name gives fs.ErrNotExist; the root "."
// ErrInvalidPath.
func RemoveAll(ctx context.Context, b Backend, name string, opts RemoveAllOptions) error {
	if err := CheckRemove(name, RemoveOptions{}); err != nil {
		return err
	}
	r, ok := b.(Remover)
	if err := changeable(b, ok, "remove", name); err != nil {
		return err
	}
	fi, err := Stat(ctx, b, name)
	if err != nil {
		return err
	}
	_, base := Split(name)
	root := DirEntry{Name: base, Type: fi.Mode.Type(), Size: fi.Size, ModTime: fi.ModTime}
	if opts.Check != nil {
		if err := opts.Check(name, root); err != nil {
			return err
		}
	}
	if !fi.IsDir() {
		return r.Remove(ctx, name, RemoveOptions{})
	}
	var files, dirs []string
	err = Walk(ctx, b, name, func(p string, e DirEntry) error {
		if opts.Check != nil {
			if err := opts.Check(p, e); err != nil {
				return err
			}
		}
		if e.IsDir() {
			dirs = append(dirs, p)
		} else {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := removeFiles(ctx, b, r, files); err != nil {
		return err
	}
	// Deeper paths have more components; among equals any order works.
	slices.SortStableFunc(dirs, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	for _, d := range append(dirs, name) {
		// Storage without real directories (S3) drops one with its last
		// key, so a directory already gone is what was wanted.
		if err := r.Remove(ctx, d, RemoveOptions{}); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// removeFiles removes files with b's BatchRemover when it has one that
// does not decline, and one by one otherwise.
func removeFiles(ctx context.Context, b Backend, r Remover, files []string) error {
	if br, ok := b.(BatchRemover); ok && len(files) > 0 {
		err := br.RemoveFiles(ctx, files)
		if !errors.Is(err, errors.ErrUnsupported) {
			return err
		}
	}
	for _, f := range files {
		if err := r.Remove(ctx, f, RemoveOptions{}); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
