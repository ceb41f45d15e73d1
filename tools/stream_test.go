package tools

import (
	"context"
	"errors"
	"io"
	"reflect"
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
// end bytes in all; Stat and the stream's Info report size.
type stream struct {
	chunk     string
	size, end int64
	// cancelAt, when > 0, calls cancel once that many bytes were served,
	// so a test can end a call while the stream keeps going.
	cancelAt int64
	cancel   context.CancelFunc
	// served counts the bytes handed out by every reader.
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

func (f *streamFS) OpenRead(ctx context.Context, name string) (backend.FileReader, error) {
	st, ok := f.streams[name]
	if !ok {
		return f.memFS.OpenRead(ctx, name)
	}
	return backend.NewFileReader(io.NopCloser(&streamReader{st: st}), backend.FileInfo{Name: name, Size: st.size}), nil
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
	st *stream
	// read is how many bytes this reader served, off where in the chunk
	// it is.
	read int64
	off  int
}

func (r *streamReader) Read(p []byte) (int, error) {
	if r.read >= r.st.end {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), r.st.end-r.read)]
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.st.chunk[r.off:])
		n += c
		r.off = (r.off + c) % len(r.st.chunk)
	}
	r.read += int64(n)
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

// TestEditFileSizeLimit refuses files above the edit limit, from their
// reported size or, when storage reports less than it streams, from the
// bytes read; a binary file is refused from its first bytes whatever its
// size. None is read far past the limit or its first 8192 bytes.
func TestEditFileSizeLimit(t *testing.T) {
	const big = 128 << 20
	edit := []any{"old_text", "no such text", "new_text", "x"}
	tests := []struct {
		name string
		st   *stream
		// limit, when > 0, replaces MaxEditBytes.
		limit int64
		want  string
		// maxRead bounds the bytes read from the stream.
		maxRead int64
	}{
		{"binary above the limit", &stream{chunk: "\x00", size: big, end: big}, 0,
			"f is a binary file; edit_file only edits text files.", 64 << 10},
		{"text above the limit", &stream{chunk: "line\n", size: big, end: big}, 0,
			"'f' is 134217728 bytes; edit_file edits files up to 67108864 bytes. Use write_file to replace it.", 64 << 10},
		{"binary past the size shown", &stream{chunk: "\x00", size: 10, end: big}, 0,
			"f is a binary file; edit_file only edits text files.", 64 << 10},
		{"text past the size shown", &stream{chunk: "line\n", size: 0, end: big}, 1000,
			"'f' is more than 1000 bytes; edit_file edits files up to 1000 bytes. Use write_file to replace it.", 64 << 10},
		{"at the limit", &stream{chunk: "line\n", size: 1000, end: 1000}, 1000,
			"old_text not found in f. No changes were written.", 1000},
		{"one byte over the limit", &stream{chunk: "line\n", size: 1001, end: 1001}, 1000,
			"'f' is 1001 bytes; edit_file edits files up to 1000 bytes. Use write_file to replace it.", 64 << 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newStreamFS(map[string]*stream{"f": tt.st})
			rec := &recorder{}
			s := newSet(t, fs, Options{OnEvent: rec.on})
			if tt.limit > 0 {
				s.maxEdit = tt.limit
			}
			wantEqual(t, retry(t, s, "edit_file", append([]any{"path", "f"}, edit...)...), tt.want)
			if n := tt.st.served.Load(); n > tt.maxRead {
				t.Errorf("read %d bytes; want at most %d", n, tt.maxRead)
			}
			if got, _ := fs.get("f"); got != "" || len(rec.events) > 0 {
				t.Errorf("refused edit changed the file (%q) or emitted %s", got, rec.kinds())
			}
		})
	}
}

// TestWriteFileOverAHugeFileStreamsIt replaces a file far larger than a
// diff can show: the change request gets the headers only, marked
// truncated, and the old content is hashed as it streams by (a stale
// expected_hash names its hash), never held.
func TestWriteFileOverAHugeFileStreamsIt(t *testing.T) {
	const size = 64 << 20
	const bound = 4 << 20
	st := &stream{chunk: "line\n", size: size, end: size}
	var full []byte
	for len(full) < size {
		full = append(full, st.chunk...)
	}
	hash := hashBytes(full[:size])
	full = nil
	var got []ChangeRequest
	s := newSet(t, newStreamFS(map[string]*stream{"f": st}), Options{OnChangeRequest: func(_ context.Context, r *ChangeRequest) error {
		got = append(got, *r)
		r.Cancel("")
		return nil
	}})
	var out, msg string
	alloc := allocDuring(func() {
		out = ok(t, s, "write_file", "path", "f", "content", "new\n")
		msg = retry(t, s, "write_file", "path", "f", "content", "new\n", "expected_hash", "000000000000")
	})
	wantEqual(t, out, "['f' was not written: cancelled by a listener]")
	wantEqual(t, msg, "Conflict: file 'f' has changed (expected hash:000000000000, got hash:"+shortHash(hash)+"). Re-read the file and retry.")
	if len(got) != 1 || !reflect.DeepEqual(got[0], ChangeRequest{Path: "f", Operation: OpWrite, Diff: "--- a/f\n+++ b/f", Truncated: true, Sizes: []SizeChange{{"f", int64(size), 4, hash, false}}}) {
		t.Errorf("change requests %+v", got)
	}
	if alloc > bound {
		t.Errorf("two writes over a %d-byte file allocated %d bytes", size, alloc)
	}
	t.Logf("two writes over a %d-byte file: %d bytes allocated", size, alloc)
}
