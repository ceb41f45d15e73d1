package azureadapter

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/objstore"
)

// OpenWrite starts writing the blob name. It fails at once with
// backend.ErrIsDir when name is a directory and backend.ErrNotDir when a
// parent is a file, except that under [backend.WithKnownFile] naming the
// version that the MatchVersion precondition names, the caller's word
// replaces that check. Nothing is visible until Commit; see the package
// documentation for streaming, blocks and preconditions. The returned
// writer is not safe for concurrent use.
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
	if !objstore.KnownTarget(ctx, name, opts.Precondition) {
		if err := objstore.CheckWritable(ctx, name, f.hasChildren, f.settle); err != nil {
			return nil, err
		}
	}
	return &writer{f: f, ctx: ctx, name: name, pre: opts.Precondition, known: objstore.KnownTarget(ctx, name, opts.Precondition)}, nil
}

// MkdirAll creates dir and its missing parents by writing a marker blob
// ("dir/") for each missing level. An existing directory is not an error;
// a blob on the way gives backend.ErrNotDir, or fs.ErrExist when it is
// dir itself. One listing per level examined settles what it is (see
// settle and [objstore.MissingDirs]).
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
		_, err := f.client.NewBlockBlobClient(f.keys.DirPrefix(level)).Upload(ctx, streaming.NopCloser(bytes.NewReader(nil)), &blockblob.UploadOptions{
			HTTPHeaders: &blob.HTTPHeaders{BlobContentType: to.Ptr("application/x-directory")},
		})
		if err != nil {
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

// writer is a pending write. It buffers up to the block size; past it,
// it stages each full block in the background while the next one fills,
// so at most two blocks are in memory.
type writer struct {
	f    *FS
	ctx  context.Context
	name string
	pre  backend.Precondition
	// known is set when the caller vouched for the target (knownTarget).
	known bool

	state int
	err   error // the first failure; later writes return it
	buf   []byte
	spare []byte // a block buffer to reuse

	// idBase makes this writer's block IDs unique, so that no two
	// writers of one blob ever name the same block.
	idBase   string
	blocks   []string // the IDs of the blocks staged, in order
	inflight *blockUpload
}

// blockUpload is one block being staged.
type blockUpload struct {
	done chan struct{}
	data []byte
	err  error
}

// Write buffers p and stages every block that fills up.
func (w *writer) Write(p []byte) (int, error) {
	if w.state != writing {
		return 0, &fs.PathError{Op: "write", Path: w.name, Err: fs.ErrClosed}
	}
	if w.err != nil {
		return 0, w.err
	}
	size := int(w.f.opts.BlockSize)
	n := 0
	for len(p) > 0 {
		if len(w.buf) >= size {
			if err := w.send(w.buf); err != nil {
				w.err = err
				return n, err
			}
			w.buf = w.takeSpare()
		}
		take := min(len(p), size-len(w.buf))
		w.grow(take)
		w.buf = append(w.buf, p[:take]...)
		p = p[take:]
		n += take
	}
	return n, nil
}

// grow makes room for n more bytes in buf, growing it geometrically but
// never past the block size, so small files stay small.
func (w *writer) grow(n int) {
	need := len(w.buf) + n
	if need <= cap(w.buf) {
		return
	}
	size := min(max(2*cap(w.buf), need, 4096), int(w.f.opts.BlockSize))
	b := make([]byte, len(w.buf), size)
	copy(b, w.buf)
	w.buf = b
}

// takeSpare returns an empty buffer, with room for a block when one is
// free.
func (w *writer) takeSpare() []byte {
	if b := w.spare; b != nil {
		w.spare = nil
		return b[:0]
	}
	return nil
}

// blockID returns the base64 ID of the n-th block; every ID of a blob
// has the same length, as the service requires.
func (w *writer) blockID(n int) string {
	if w.idBase == "" {
		var b [12]byte
		_, _ = rand.Read(b[:])
		w.idBase = hex.EncodeToString(b[:])
	}
	return base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "%s-%06d", w.idBase, n))
}

// send waits for the block in flight, then starts staging data as the
// next block. data must not change until that block is done.
func (w *writer) send(data []byte) error {
	if err := w.wait(); err != nil {
		return err
	}
	if len(w.blocks) >= MaxBlocks {
		return &fs.PathError{Op: "write", Path: w.name, Err: fmt.Errorf("azureadapter: a blob holds at most %d blocks of Options.BlockSize: %w", MaxBlocks, backend.ErrNoSpace)}
	}
	id := w.blockID(len(w.blocks))
	up := &blockUpload{done: make(chan struct{}), data: data}
	bc := w.f.client.NewBlockBlobClient(w.f.keys.Key(w.name))
	w.inflight = up
	go func() {
		defer close(up.done)
		if _, err := bc.StageBlock(w.ctx, id, streaming.NopCloser(bytes.NewReader(data)), nil); err != nil {
			up.err = pathError("write", w.name, err)
		}
	}()
	w.blocks = append(w.blocks, id)
	return nil
}

// wait waits for the block in flight and keeps its buffer for reuse.
func (w *writer) wait() error {
	up := w.inflight
	if up == nil {
		return nil
	}
	<-up.done
	w.inflight = nil
	if up.err != nil {
		return up.err
	}
	if cap(up.data) == int(w.f.opts.BlockSize) {
		w.spare = up.data[:0]
	}
	return nil
}

// Commit checks the precondition and makes the written bytes the blob's
// content: one conditional Put Blob, or the last block and one
// conditional Put Block List. As with any remote store, a Commit that
// failed because its context ended may still be applied by a service that
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
	match, err := w.matchTarget()
	if err != nil {
		return err
	}
	cond := writeConditions(w.pre, match)
	bc := w.f.client.NewBlockBlobClient(w.f.keys.Key(w.name))
	var etag string
	if len(w.blocks) == 0 {
		out, err := bc.Upload(w.ctx, streaming.NopCloser(bytes.NewReader(w.buf)), &blockblob.UploadOptions{AccessConditions: cond})
		if err != nil {
			return conditionalWriteError("commit", w.name, err, w.pre, match)
		}
		etag = etagOf(out.ETag)
	} else {
		if len(w.buf) > 0 {
			if err := w.send(w.buf); err != nil {
				return err
			}
			w.buf = nil
		}
		if err := w.wait(); err != nil {
			return err
		}
		out, err := bc.CommitBlockList(w.ctx, w.blocks, &blockblob.CommitBlockListOptions{AccessConditions: cond})
		if err != nil {
			return conditionalWriteError("commit", w.name, err, w.pre, match)
		}
		etag = etagOf(out.ETag)
	}
	if w.known {
		return nil
	}
	return w.undoUnderDir(etag)
}

// undoUnderDir checks, once the blob is committed, that no directory
// appeared at its name while the write was pending: unlike a POSIX-backed
// store, the container takes the blob "f" next to "f/inner", and the
// directory hides it (see the package documentation). When one did, the
// blob just committed is deleted again (If-Match on its ETag, so a later
// writer's blob stays) and the commit fails with backend.ErrIsDir; the
// blob was never visible as a file, since the directory wins.
func (w *writer) undoUnderDir(etag string) error {
	isDir, err := w.f.hasChildren(w.ctx, w.name)
	if err != nil || !isDir {
		return nil // committed; a directory made later hides the blob all the same
	}
	if etag != "" {
		_, _ = w.f.client.NewBlobClient(w.f.keys.Key(w.name)).Delete(context.WithoutCancel(w.ctx), &blob.DeleteOptions{AccessConditions: ifMatch(etag)})
	}
	return &fs.PathError{Op: "commit", Path: w.name, Err: backend.ErrIsDir}
}

// writeConditions turns the precondition into the conditional headers of
// a commit: If-None-Match: * for CreateOnly, If-Match with the ETag
// matched otherwise.
func writeConditions(pre backend.Precondition, match string) *blob.AccessConditions {
	if pre.CreateOnly {
		return &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: to.Ptr(azcore.ETagAny)}}
	}
	return ifMatch(match)
}

// matchTarget checks MatchHash by reading the current blob and returns
// the ETag the write must still find (If-Match), so that the check and
// the write form one compare-and-swap. Without MatchHash it returns
// MatchVersion.
func (w *writer) matchTarget() (string, error) {
	if w.pre.MatchHash == "" {
		return w.pre.MatchVersion, nil
	}
	etag, err := w.f.hashBlob(w.ctx, "commit", w.name, w.pre.MatchVersion, w.pre.MatchHash)
	if errors.Is(err, fs.ErrNotExist) {
		return "", &fs.PathError{Op: "commit", Path: w.name, Err: backend.ErrPrecondition}
	}
	return etag, err
}

// hashBlob reads the blob name (with If-Match: etag when etag is set),
// checks that its SHA-256 is hash, and returns the ETag it read.
func (f *FS) hashBlob(ctx context.Context, op, name, etag, hash string) (string, error) {
	out, err := f.client.NewBlobClient(f.keys.Key(name)).DownloadStream(ctx, &blob.DownloadStreamOptions{AccessConditions: ifMatch(etag)})
	if err != nil {
		return "", pathError(op, name, err)
	}
	defer out.Body.Close()
	h := sha256.New()
	if _, err := io.Copy(h, out.Body); err != nil {
		return "", pathError(op, name, err)
	}
	if !strings.EqualFold(hex.EncodeToString(h.Sum(nil)), hash) {
		return "", &fs.PathError{Op: op, Path: name, Err: backend.ErrPrecondition}
	}
	got := etagOf(out.ETag)
	if got == "" {
		return "", &fs.PathError{Op: op, Path: name, Err: errors.New("azureadapter: the service sent no ETag, so MatchHash cannot be made atomic")}
	}
	return got, nil
}

// Close abandons the write unless it was committed. Nothing becomes
// visible: the blocks staged so far stay uncommitted, which no read or
// listing shows and which the service discards (see the package
// documentation). Close waits for a block still being staged.
func (w *writer) Close() error {
	if w.state != writing {
		return nil
	}
	w.state = closed
	_ = w.wait() // the block's own failure no longer matters
	w.release()
	return nil
}

// release drops the buffers.
func (w *writer) release() {
	w.buf, w.spare, w.blocks = nil, nil, nil
}
