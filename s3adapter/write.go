package s3adapter

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/objstore"
)

// OpenWrite starts writing the object name. It fails at once with
// backend.ErrIsDir when name is a directory and backend.ErrNotDir when a
// parent is a file, except that under [backend.WithKnownFile] naming the
// version that the MatchVersion precondition names, or under
// [backend.WithKnownMissing] naming a CreateOnly write's target, the
// caller's word replaces that check. Nothing is visible until Commit; see the package
// documentation for streaming, multipart uploads and preconditions. The
// returned writer is not safe for concurrent use.
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
	if !objstore.KnownTarget(ctx, name, opts.Precondition) && !knownMissing(ctx, name, opts.Precondition) {
		if err := objstore.CheckWritable(ctx, name, f.hasChildren, f.settle); err != nil {
			return nil, err
		}
	}
	return &writer{f: f, ctx: ctx, name: name, pre: opts.Precondition, limit: f.opts.MultipartThreshold}, nil
}

// knownMissing reports whether a create needs no check that its target
// is not a directory and its parent not a file: the caller has just seen
// nothing at name or below it and its parent as a directory
// (backend.WithKnownMissing), and the If-None-Match of the create refuses
// an object made since. Without it a create one directory down costs two
// listings more than at the top level.
func knownMissing(ctx context.Context, name string, pre backend.Precondition) bool {
	return pre.CreateOnly && pre.MatchHash == "" && pre.MatchVersion == "" && backend.KnownMissing(ctx, name)
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
		_, err := f.client.PutObject(ctx, &s3.PutObjectInput{
			Bucket:        &f.bucket,
			Key:           aws.String(f.keys.DirPrefix(level)),
			Body:          bytes.NewReader(nil),
			ContentLength: aws.Int64(0),
			ContentType:   aws.String("application/x-directory"),
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

// writer is a pending write. It buffers up to the multipart threshold;
// past it, it starts a multipart upload and sends each full part in the
// background while the next one fills, so at most two parts are in
// memory.
type writer struct {
	f    *FS
	ctx  context.Context
	name string
	pre  backend.Precondition

	state int
	err   error // the first failure; later writes return it
	// buf holds the bytes not sent yet; limit is how many it may hold
	// before they are sent: the threshold, then the part size.
	buf   []byte
	limit int64
	spare []byte // a part buffer to reuse

	uploadID string
	parts    []types.CompletedPart
	inflight *partUpload
}

// partUpload is one part being sent.
type partUpload struct {
	done chan struct{}
	data []byte
	part types.CompletedPart
	err  error
}

// Write buffers p and sends every part that fills up.
func (w *writer) Write(p []byte) (int, error) {
	if w.state != writing {
		return 0, &fs.PathError{Op: "write", Path: w.name, Err: fs.ErrClosed}
	}
	if w.err != nil {
		return 0, w.err
	}
	n := 0
	for len(p) > 0 {
		if int64(len(w.buf)) >= w.limit {
			if err := w.flush(); err != nil {
				w.err = err
				return n, err
			}
		}
		take := min(int64(len(p)), w.limit-int64(len(w.buf)))
		w.grow(int(take))
		w.buf = append(w.buf, p[:take]...)
		p = p[take:]
		n += int(take)
	}
	return n, nil
}

// grow makes room for n more bytes in buf, growing it geometrically but
// never past the limit, so small files stay small and large ones do not
// overshoot the memory bound.
func (w *writer) grow(n int) {
	need := len(w.buf) + n
	if need <= cap(w.buf) {
		return
	}
	size := min(max(2*cap(w.buf), need, 4096), int(w.limit))
	b := make([]byte, len(w.buf), size)
	copy(b, w.buf)
	w.buf = b
}

// flush sends the full parts of buf, starting the multipart upload first
// when this is the first time the buffer overflows.
func (w *writer) flush() error {
	partSize := int(w.f.opts.PartSize)
	if w.uploadID == "" {
		out, err := w.f.client.CreateMultipartUpload(w.ctx, &s3.CreateMultipartUploadInput{
			Bucket:            &w.f.bucket,
			Key:               aws.String(w.f.keys.Key(w.name)),
			ChecksumAlgorithm: w.f.partChecksum,
		})
		if err != nil {
			return pathError("write", w.name, err)
		}
		w.uploadID = aws.ToString(out.UploadId)
		w.limit = int64(partSize)
	}
	sent := false
	for len(w.buf) >= partSize {
		if err := w.send(w.buf[:partSize:partSize]); err != nil {
			return err
		}
		w.buf = w.buf[partSize:]
		sent = true
	}
	if sent {
		rest := w.buf
		w.buf = append(w.takeSpare(), rest...)
	}
	return nil
}

// takeSpare returns an empty buffer with room for a part.
func (w *writer) takeSpare() []byte {
	if b := w.spare; b != nil {
		w.spare = nil
		return b[:0]
	}
	return make([]byte, 0, w.f.opts.PartSize)
}

// send waits for the part in flight, then starts sending data as the
// next part. data must not change until that part is done.
func (w *writer) send(data []byte) error {
	if err := w.wait(); err != nil {
		return err
	}
	up := &partUpload{done: make(chan struct{}), data: data}
	num := int32(len(w.parts) + 1)
	key, id := w.f.keys.Key(w.name), w.uploadID
	w.inflight = up
	go func() {
		defer close(up.done)
		out, err := w.f.client.UploadPart(w.ctx, &s3.UploadPartInput{
			Bucket:            &w.f.bucket,
			Key:               &key,
			UploadId:          &id,
			PartNumber:        aws.Int32(num),
			Body:              bytes.NewReader(data),
			ContentLength:     aws.Int64(int64(len(data))),
			ChecksumAlgorithm: w.f.partChecksum,
		})
		if err != nil {
			up.err = pathError("write", w.name, err)
			return
		}
		up.part = types.CompletedPart{
			PartNumber:        aws.Int32(num),
			ETag:              out.ETag,
			ChecksumCRC32:     out.ChecksumCRC32,
			ChecksumCRC32C:    out.ChecksumCRC32C,
			ChecksumCRC64NVME: out.ChecksumCRC64NVME,
			ChecksumSHA1:      out.ChecksumSHA1,
			ChecksumSHA256:    out.ChecksumSHA256,
		}
	}()
	// The slot is taken: parts are numbered in the order they are sent.
	w.parts = append(w.parts, types.CompletedPart{})
	return nil
}

// wait waits for the part in flight, records it, and keeps its buffer
// for reuse.
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
	w.parts[aws.ToInt32(up.part.PartNumber)-1] = up.part
	if cap(up.data) == int(w.f.opts.PartSize) {
		w.spare = up.data[:0]
	}
	return nil
}

// Commit checks the precondition and makes the written bytes the
// object's content: one conditional PutObject, or the last part and a
// conditional CompleteMultipartUpload. A failed Commit returns by the
// context's deadline and leaves the clean-up (aborting the upload) to
// Close, which the caller owes anyway. As with any remote store, a
// Commit that failed because its context ended may still be applied by a
// server that received the whole request: the target then holds the new
// content, whole.
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
	ifMatch, err := w.matchTarget()
	if err != nil {
		return err
	}
	var ifNoneMatch *string
	if w.pre.CreateOnly {
		ifNoneMatch, ifMatch = aws.String("*"), ""
	}
	key := aws.String(w.f.keys.Key(w.name))
	if w.uploadID == "" {
		_, err := w.f.client.PutObject(w.ctx, &s3.PutObjectInput{
			Bucket:        &w.f.bucket,
			Key:           key,
			Body:          bytes.NewReader(w.buf),
			ContentLength: aws.Int64(int64(len(w.buf))),
			IfNoneMatch:   ifNoneMatch,
			IfMatch:       optional(ifMatch),
		})
		if err != nil {
			return conditionalWriteError("commit", w.name, err, w.pre, ifMatch)
		}
		return nil
	}
	if len(w.buf) > 0 {
		if err := w.send(w.buf); err != nil {
			return err
		}
		w.buf = nil
	}
	if err := w.wait(); err != nil {
		return err
	}
	_, err = w.f.client.CompleteMultipartUpload(w.ctx, &s3.CompleteMultipartUploadInput{
		Bucket:          &w.f.bucket,
		Key:             key,
		UploadId:        aws.String(w.uploadID),
		MultipartUpload: &types.CompletedMultipartUpload{Parts: w.parts},
		IfNoneMatch:     ifNoneMatch,
		IfMatch:         optional(ifMatch),
	})
	if err != nil {
		return conditionalWriteError("commit", w.name, err, w.pre, ifMatch)
	}
	w.uploadID = "" // completed: nothing to abort
	return nil
}

// matchTarget checks MatchHash by reading the current object and returns
// the ETag the write must still find (If-Match), so that the check and
// the write form one compare-and-swap. Without MatchHash it returns
// MatchVersion.
func (w *writer) matchTarget() (string, error) {
	if w.pre.MatchHash == "" {
		return w.pre.MatchVersion, nil
	}
	in := &s3.GetObjectInput{Bucket: &w.f.bucket, Key: aws.String(w.f.keys.Key(w.name))}
	if w.pre.MatchVersion != "" {
		in.IfMatch = aws.String(w.pre.MatchVersion)
	}
	out, err := w.f.client.GetObject(w.ctx, in, quietChecksums)
	if err != nil {
		return "", conditionalWriteError("commit", w.name, err, backend.Precondition{}, "*")
	}
	defer out.Body.Close()
	h := sha256.New()
	if _, err := io.Copy(h, out.Body); err != nil {
		return "", pathError("commit", w.name, err)
	}
	if !strings.EqualFold(hex.EncodeToString(h.Sum(nil)), w.pre.MatchHash) {
		return "", &fs.PathError{Op: "commit", Path: w.name, Err: backend.ErrPrecondition}
	}
	etag := aws.ToString(out.ETag)
	if etag == "" {
		return "", &fs.PathError{Op: "commit", Path: w.name, Err: errors.New("s3adapter: the server sent no ETag, so MatchHash cannot be made atomic")}
	}
	return etag, nil
}

// Close abandons the write unless it was committed: a multipart upload
// is aborted, so no parts stay behind. The abort runs even when the
// write's context has ended, for at most Options.AbortTimeout, and is
// retried while the server cannot be reached (it may be restarting);
// its failure is returned.
func (w *writer) Close() error {
	if w.state != writing {
		return nil
	}
	w.state = closed
	defer w.release()
	if w.uploadID == "" {
		return nil
	}
	_ = w.wait() // the part's own failure no longer matters
	ctx, cancel := context.WithTimeout(context.WithoutCancel(w.ctx), w.f.opts.AbortTimeout)
	defer cancel()
	err := w.f.abortUpload(ctx, w.f.keys.Key(w.name), w.uploadID)
	w.uploadID = ""
	if err != nil {
		return pathError("abort", w.name, err)
	}
	return nil
}

// release drops the buffers.
func (w *writer) release() {
	w.buf, w.spare, w.parts = nil, nil, nil
}

// abortUpload aborts the multipart upload id of key, retrying with
// backoff until the upload is gone, as a ListParts after the abort
// confirms, or ctx ends.
func (f *FS) abortUpload(ctx context.Context, key, id string) error {
	delay := 100 * time.Millisecond
	for {
		_, err := f.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
			Bucket:   &f.bucket,
			Key:      aws.String(key),
			UploadId: aws.String(id),
		})
		var nsu *types.NoSuchUpload
		if err == nil || errors.As(err, &nsu) || isNotFound(err) {
			// A part whose upload was under way when the abort came may
			// still land and keep the upload alive (S3 says to check):
			// done only when the upload is gone.
			var gone bool
			if gone, err = f.uploadGone(ctx, key, id); gone {
				return nil
			}
			if err == nil {
				err = errUploadLingers
			}
		}
		// Only a server that cannot be reached or fails is worth
		// waiting for; a refusal will not change.
		var re interface{ HTTPStatusCode() int }
		if errors.As(err, &re) && re.HTTPStatusCode() >= 400 && re.HTTPStatusCode() < 500 {
			return err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		delay = min(2*delay, 2*time.Second)
	}
}

// errUploadLingers: the upload is still listed after it was aborted.
var errUploadLingers = errors.New("s3adapter: the multipart upload is still there after its abort")

// uploadGone asks whether the multipart upload id of key is gone, with a
// one-part ListParts. A server that refuses the question (a 4xx other
// than NoSuchUpload) is taken at its abort's word.
func (f *FS) uploadGone(ctx context.Context, key, id string) (bool, error) {
	_, err := f.client.ListParts(ctx, &s3.ListPartsInput{
		Bucket:   &f.bucket,
		Key:      aws.String(key),
		UploadId: aws.String(id),
		MaxParts: aws.Int32(1),
	})
	var nsu *types.NoSuchUpload
	var re interface{ HTTPStatusCode() int }
	switch {
	case err == nil:
		return false, nil
	case errors.As(err, &nsu), isNotFound(err):
		return true, nil
	case errors.As(err, &re) && re.HTTPStatusCode() >= 400 && re.HTTPStatusCode() < 500:
		return true, nil
	}
	return false, err
}

// optional returns nil for "" and a pointer to s otherwise.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
