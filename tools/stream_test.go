package tools

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

// streamFS is a memFS whose files named in streams open as generated
// streams, as a FUSE or proc file, a hung server or a hostile backend
// serves them: the stream may be far longer than Stat says, and it
// ignores its context.
type streamFS struct {
	*memFS
	streams map[string]*stream
}

// stream describes one generated file. Its bytes are chunk repeated,
// end bytes in all; Stat reports size.
type stream struct {
	chunk     string
	size, end int64
	// cancelAt, when > 0, calls cancel once that many bytes were served,
	// so a test can end a call while the stream keeps going.
	cancelAt int64
	cancel   context.CancelFunc
	// served counts the bytes handed out.
	served atomic.Int64
}

// newStreamFS returns a backend serving the streams by name.
func newStreamFS(streams map[string]*stream) *streamFS {
	m := newMemFS()
	for name := range streams {
		m.put(name, "")
	}
	return &streamFS{memFS: m, streams: streams}
}

func (f *streamFS) OpenRead(ctx context.Context, name string) (io.ReadCloser, error) {
	st, ok := f.streams[name]
	if !ok {
		return f.memFS.OpenRead(ctx, name)
	}
	return io.NopCloser(&streamReader{st: st}), nil
}

func (f *streamFS) Stat(ctx context.Context, name string) (backend.FileInfo, error) {
	info, err := f.memFS.Stat(ctx, name)
	if st, ok := f.streams[name]; ok && err == nil {
		info.Size = st.size
	}
	return info, err
}

// streamReader serves a stream; it never looks at a context.
type streamReader struct {
	st  *stream
	off int
}

func (r *streamReader) Read(p []byte) (int, error) {
	served := r.st.served.Load()
	if served >= r.st.end {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), r.st.end-served)]
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.st.chunk[r.off:])
		n += c
		r.off = (r.off + c) % len(r.st.chunk)
	}
	total := r.st.served.Add(int64(n))
	if r.st.cancelAt > 0 && total >= r.st.cancelAt && r.st.cancel != nil {
		r.st.cancel()
	}
	return n, nil
}

// TestStreamsIgnoringContextEndWithTheContext gives read_file and
// file_info streams far longer than their reported size whose reader
// ignores the context: the call notices its context between reads and
// ends with the context's error (fatal: the deadline is the host's), after
// reading little past the moment it was cancelled.
func TestStreamsIgnoringContextEndWithTheContext(t *testing.T) {
	const cancelAt = 64 << 10
	const end = 4 << 20
	chunks := map[string]string{"lines": "y\n", "one line": "yyyyyyyy", "binary": "\x00\x00"}
	for label, chunk := range chunks {
		for _, tool := range []string{nameReadFile, nameFileInfo} {
			t.Run(label+"/"+tool, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				st := &stream{chunk: chunk, end: end, cancelAt: cancelAt, cancel: cancel}
				// RequireRead makes a binary file be read to its end
				// for its hash.
				s := newSet(t, newStreamFS(map[string]*stream{"f": st}), Options{RequireRead: true})
				out, err := s.Call(ctx, tool, args(t, "path", "f"))
				if !errors.Is(err, context.Canceled) || IsRetry(err) {
					t.Errorf("got %.100q, %v; want the context's error", out, err)
				}
				if n := st.served.Load(); n > cancelAt+2*readBufferSize {
					t.Errorf("read %d bytes; cancelled after %d", n, int64(cancelAt))
				}
			})
		}
	}
}
