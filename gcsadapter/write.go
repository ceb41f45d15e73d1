package gcsadapter

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"strings"

	"cloud.google.com/go/storage"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/objstore"
)

// OpenWrite starts writing the object name. It fails at once with
// backend.ErrNotDir when a parent is a file; a directory at name makes
// Commit fail with backend.ErrIsDir, checked just before the upload is
// finalized, so that a directory that appeared while the bytes were
// written is not shadowed by the new object. Under [backend.WithKnownFile]
// naming the version that the MatchVersion precondition names, the
// caller's word replaces both checks. Nothing is visible until Commit;
// see the package documentation for streaming, resumable uploads and
// preconditions. The returned writer is not safe for concurrent use.
func (f *FS) OpenWrite(ctx context.Context, name string, opts backend.WriteOptions) (backend.FileWriter, error) {
	if err := f.keys.Check("write", name); err != nil {
		return nil, err
	}
	if f.opts.ReadOnly {
		return nil, &fs.PathError{Op: "write", Path: name, Err: backend.ErrReadOnly}
	}
	if name == "." {
		return nil, &fs.PathError{Op: "write", Path: name, Err: backend.ErrIsDir}
	}
	known := objstore.KnownTarget(ctx, name, opts.Precondition)
	if !known {
		if err := objstore.CheckParent(ctx, name, f.hasChildren, f.settle); err != nil {
			return nil, err
		}
	}
	return &writer{f: f, ctx: ctx, name: name, pre: opts.Precondition, checkDir: !known}, nil
}

// MkdirAll creates dir and its missing parents by writing a marker
// object ("dir/") for each missing level. An existing directory is not
// an error; an object on the way gives backend.ErrNotDir, or fs.ErrExist
// when it is dir itself. One listing per level examined settles what it
// is (see settle and [objstore.MissingDirs]).
func (f *FS) MkdirAll(ctx context.Context, dir string) error {
	if err := f.keys.Check("mkdir", dir); err != nil {
		return err
	}
	if f.opts.ReadOnly {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: backend.ErrReadOnly}
	}
	if dir == "." {
		return nil
	}
	levels, err := objstore.MissingDirs(ctx, dir, f.settle)
	if err != nil {
		return err
	}
	return f.putMarkers(ctx, dir, levels)
}

// putMarkers writes the directory markers of levels, top down.
func (f *FS) putMarkers(ctx context.Context, dir string, levels []string) error {
	for _, level := range levels {
		w := f.bucket.Object(f.keys.DirPrefix(level)).NewWriter(ctx)
		w.ContentType = "application/x-directory"
		w.ChunkSize = MinChunkSize
		if err := w.Close(); err != nil {
			return pathError("mkdir", dir, err)
		}
	}
	return nil
}

// writer states.
const (
	writing = iota
	committed
	closed
)

// errAbandoned ends the upload of a writer closed without a commit.
var errAbandoned = errors.New("gcsadapter: write abandoned before its commit")

// writer is a pending write. It buffers up to the chunk size; past it, it
// opens the SDK's Writer (a resumable upload, under the precondition's
// generation condition), which sends each chunk while the next one fills.
type writer struct {
	f    *FS
	ctx  context.Context
	name string
	pre  backend.Precondition

	state int
	err   error // the first failure; later writes return it
	buf   []byte

	// up is the upload once the buffer overflowed; cancel ends its
	// context. matched records that the upload is conditional on a
	// generation the precondition named.
	up      *storage.Writer
	cancel  context.CancelFunc
	matched bool
	// checkDir asks Commit to refuse a target that is a directory.
	checkDir bool
}

// Write buffers p, and once the buffer holds more than a chunk, streams
// through the upload.
func (w *writer) Write(p []byte) (int, error) {
	if w.state != writing {
		return 0, &fs.PathError{Op: "write", Path: w.name, Err: fs.ErrClosed}
	}
	if w.err != nil {
		return 0, w.err
	}
	if w.up == nil {
		if len(w.buf)+len(p) <= w.f.opts.ChunkSize {
			w.buf = append(w.buf, p...)
			return len(p), nil
		}
		if err := w.open(w.f.opts.ChunkSize); err != nil {
			w.err = err
			return 0, err
		}
		buf := w.buf
		w.buf = nil
		if _, err := w.up.Write(buf); err != nil {
			w.err = pathError("write", w.name, err)
			return 0, w.err
		}
	}
	n, err := w.up.Write(p)
	if err != nil {
		w.err = pathError("write", w.name, err)
		return n, w.err
	}
	return n, nil
}

// open starts the upload under the precondition: DoesNotExist for
// CreateOnly, GenerationMatch on the version named or on the generation
// whose bytes were hashed.
func (w *writer) open(chunk int) error {
	cond, matched, err := w.condition()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(w.ctx)
	o := w.f.object(w.name)
	if cond != (storage.Conditions{}) {
		o = o.If(cond)
	}
	up := o.NewWriter(ctx)
	up.ChunkSize = chunk
	up.ContentType = "application/octet-stream"
	w.up, w.cancel, w.matched = up, cancel, matched
	return nil
}

// condition returns the generation condition of the write's
// precondition, and whether it names a generation.
func (w *writer) condition() (storage.Conditions, bool, error) {
	switch {
	case w.pre.CreateOnly:
		return storage.Conditions{DoesNotExist: true}, false, nil
	case w.pre.MatchHash != "":
		gen, err := w.f.hashedGeneration(w.ctx, "commit", w.name, w.pre)
		if err != nil {
			return storage.Conditions{}, false, err
		}
		return storage.Conditions{GenerationMatch: gen}, true, nil
	case w.pre.MatchVersion != "":
		gen, ok := generation(w.pre.MatchVersion)
		if !ok {
			return storage.Conditions{}, false, &fs.PathError{Op: "commit", Path: w.name, Err: backend.ErrPrecondition}
		}
		return storage.Conditions{GenerationMatch: gen}, true, nil
	}
	return storage.Conditions{}, false, nil
}

// hashedGeneration downloads the object name (of the generation
// pre.MatchVersion names, when it names one), hashes it and returns its
// generation when the hash is pre.MatchHash, so that a change conditional
// on that generation is one compare-and-swap with the check.
func (f *FS) hashedGeneration(ctx context.Context, op, name string, pre backend.Precondition) (int64, error) {
	o := f.object(name)
	if pre.MatchVersion != "" {
		gen, ok := generation(pre.MatchVersion)
		if !ok {
			return 0, &fs.PathError{Op: op, Path: name, Err: backend.ErrPrecondition}
		}
		o = o.If(storage.Conditions{GenerationMatch: gen})
	}
	r, err := o.NewReader(ctx)
	if err != nil {
		return 0, conditionalWriteError(op, name, err, backend.Precondition{}, true)
	}
	defer r.Close()
	if pre.MatchVersion != "" && version(r.Attrs.Generation) != pre.MatchVersion {
		// A server that ignored the condition on the download.
		return 0, &fs.PathError{Op: op, Path: name, Err: backend.ErrPrecondition}
	}
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return 0, pathError(op, name, err)
	}
	if !strings.EqualFold(hex.EncodeToString(h.Sum(nil)), pre.MatchHash) {
		return 0, &fs.PathError{Op: op, Path: name, Err: backend.ErrPrecondition}
	}
	return r.Attrs.Generation, nil
}

// Commit checks the precondition and makes the written bytes the
// object's content: one conditional upload request, or the last chunk
// and the finalization of the resumable upload. A failed Commit returns
// by the context's deadline. As with any remote store, a Commit that
// failed because its context ended may still be applied by a server that
// received the whole request: the target then holds the new content,
// whole.
func (w *writer) Commit() error {
	if w.state != writing {
		return &fs.PathError{Op: "commit", Path: w.name, Err: fs.ErrClosed}
	}
	if w.err != nil {
		return w.err
	}
	if err := w.commit(); err != nil {
		w.err = err
		return err
	}
	w.state = committed
	w.release()
	return nil
}

func (w *writer) commit() error {
	if w.checkDir {
		isDir, err := w.f.hasChildren(w.ctx, w.name)
		switch {
		case err != nil:
			return &fs.PathError{Op: "commit", Path: w.name, Err: err}
		case isDir:
			return &fs.PathError{Op: "commit", Path: w.name, Err: backend.ErrIsDir}
		}
	}
	if w.up == nil {
		// One request: a chunk larger than the content.
		chunk := (len(w.buf)/MinChunkSize + 1) * MinChunkSize
		if err := w.open(chunk); err != nil {
			return err
		}
		if _, err := w.up.Write(w.buf); err != nil {
			return pathError("commit", w.name, err)
		}
		w.buf = nil
	}
	if err := w.up.Close(); err != nil {
		return conditionalWriteError("commit", w.name, err, w.pre, w.matched)
	}
	w.cancel()
	w.up = nil
	return nil
}

// Close abandons the write unless it was committed: the upload is ended
// before its finalization, so nothing becomes visible and the old object
// stays.
func (w *writer) Close() error {
	if w.state != writing {
		return nil
	}
	w.state = closed
	w.release()
	return nil
}

// release drops the buffer and ends an upload that was not finalized.
func (w *writer) release() {
	w.buf = nil
	if w.up != nil {
		_ = w.up.CloseWithError(errAbandoned)
		w.cancel()
		_ = w.up.Close() // waits for the upload's goroutine; it fails
		w.up = nil
	}
}
