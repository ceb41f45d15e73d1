package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/local"
)

// h12 is the hash the tools show for content.
func h12(content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])[:12]
}

func TestReadFile(t *testing.T) {
	five := "one\ntwo\nthree\nfour\nfive\n"
	tests := []struct {
		name    string
		content string
		opts    Options
		args    []any
		want    string
	}{
		{"basic", "Hello\nWorld\n", Options{}, nil,
			"[f.txt | 2 lines | hash:" + h12("Hello\nWorld\n") + "]\n     1\tHello\n     2\tWorld\n"},
		{"no trailing newline gets one in the body", "a\nb", Options{}, nil,
			"[f.txt | 2 lines | hash:" + h12("a\nb") + " | no line break at the end of the file]\n     1\ta\n     2\tb\n"},
		{"empty file", "", Options{}, nil,
			"[f.txt | 0 lines | hash:e3b0c44298fc]\n(empty file)\n"},
		{"empty file ignores offset", "", Options{}, []any{"offset", 3},
			"[f.txt | 0 lines | hash:e3b0c44298fc]\n(empty file)\n"},
		{"single empty line", "\n", Options{}, nil,
			"[f.txt | 1 line | hash:" + h12("\n") + "]\n     1\t\n"},
		{"offset and limit", five, Options{}, []any{"offset", 1, "limit", 2},
			"[f.txt | 5 lines | hash:" + h12(five) + "]\n     2\ttwo\n     3\tthree\n... (2 more lines. Use offset=3 to continue reading.)\n"},
		{"last page has no hint", five, Options{}, []any{"offset", 3, "limit", 10},
			"[f.txt | 5 lines | hash:" + h12(five) + "]\n     4\tfour\n     5\tfive\n"},
		{"integral float offset", five, Options{}, []any{"offset", 4.0},
			"[f.txt | 5 lines | hash:" + h12(five) + "]\n     5\tfive\n"},
		{"MaxReadLines is the default limit", five, Options{MaxReadLines: 2}, nil,
			"[f.txt | 5 lines | hash:" + h12(five) + "]\n     1\tone\n     2\ttwo\n... (3 more lines. Use offset=2 to continue reading.)\n"},
		{"no hashes", "x\n", Options{NoContentHashes: true}, nil,
			"[f.txt | 1 line]\n     1\tx\n"},
		{"CRLF kept in the line", "a\r\nb\r\n", Options{}, nil,
			"[f.txt | 2 lines | hash:" + h12("a\r\nb\r\n") + " | CRLF line endings (each line's \\r is shown before its line break)]\n     1\ta\r\n     2\tb\r\n"},
		{"lone CR is not a line break", "a\rb\fc\u2028d\n", Options{}, nil,
			"[f.txt | 1 line | hash:" + h12("a\rb\fc\u2028d\n") + "]\n     1\ta\rb\fc\u2028d\n"},
		{"tabs preserved", "\tindented\n\t\tmore\n", Options{}, nil,
			"[f.txt | 2 lines | hash:" + h12("\tindented\n\t\tmore\n") + " | indented with tabs (the tab after each line number is not part of the line)]\n     1\t\tindented\n     2\t\t\tmore\n"},
		{"invalid UTF-8 one U+FFFD per byte", "a\xffb\xe2\x82\n", Options{}, nil,
			"[f.txt | 1 line | hash:" + h12("a\xffb\xe2\x82\n") + " | not valid UTF-8: 3 invalid bytes, each shown as U+FFFD (\ufffd)]\n     1\ta\uFFFDb\uFFFD\uFFFD\n"},
		{"BOM shown", "\ufeffx\n", Options{}, nil,
			"[f.txt | 1 line | hash:" + h12("\ufeffx\n") + " | starts with a UTF-8 byte order mark (the U+FEFF that begins line 1)]\n     1\t\ufeffx\n"},
		{"mixed line endings and a missing final line break", "a\r\nb\nc", Options{NoContentHashes: true}, nil,
			"[f.txt | 3 lines | mixed line endings: 1 CRLF, 1 LF; no line break at the end of the file]\n     1\ta\r\n     2\tb\n     3\tc\n"},
		{"tabs and spaces", "\ta\n  b\n", Options{NoContentHashes: true}, nil,
			"[f.txt | 2 lines | indented with tabs and spaces (the tab after each line number is not part of the line)]\n     1\t\ta\n     2\t  b\n"},
		{"spaces alone need no note", "  a\n", Options{NoContentHashes: true}, nil, "[f.txt | 1 line]\n     1\t  a\n"},
		{"wide line numbers", strings.Repeat("x\n", 3), Options{}, []any{"offset", 2},
			"[f.txt | 3 lines | hash:" + h12(strings.Repeat("x\n", 3)) + "]\n     3\tx\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forEach(t, func(t *testing.T, fx fixture) {
				fx.put(t, "f.txt", tt.content)
				s := newSet(t, fx.b, tt.opts)
				got := ok(t, s, "read_file", append([]any{"path", "f.txt"}, tt.args...)...)
				wantEqual(t, got, tt.want)
			})
		})
	}
}

func TestReadFileErrors(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		fx.put(t, "f.txt", "one\ntwo\n")
		fx.mkdir(t, "d")
		s := newSet(t, fx.b, Options{})
		tests := []struct {
			args []any
			want string
		}{
			{[]any{"path", "f.txt", "offset", 2}, "Offset 2 exceeds file length (2 lines)."},
			{[]any{"path", "f.txt", "offset", 9}, "Offset 9 exceeds file length (2 lines)."},
			{[]any{"path", "f.txt", "offset", -1}, "Invalid offset -1: offset must be 0 or greater."},
			{[]any{"path", "f.txt", "limit", 0}, "Invalid limit 0: limit must be 1 or greater."},
			{[]any{"path", "d"}, "'d' is a directory, not a file."},
			{[]any{"path", "d/"}, "'d/' is a directory, not a file."},
			{[]any{"path", "."}, "'.' is a directory, not a file."},
			{[]any{"path", "missing.txt"}, "File not found: missing.txt"},
			{[]any{"path", "f.txt/x"}, "File not found: f.txt/x"},
			{[]any{"path", "../f.txt"}, "Path '../f.txt' resolves outside the root directory."},
			{[]any{"path", "f.txt", "offset", "1"}, "Argument 'offset' must be an integer."},
			{[]any{"path", "f.txt", "limit", 1.5}, "Argument 'limit' must be an integer."},
			{[]any{"path", 3}, "Argument 'path' must be a string."},
			{[]any{"offset", 1}, "Missing required argument 'path'."},
			{[]any{"path", "f.txt", "lines", 1}, "Unknown argument 'lines'. Valid arguments: path, offset, limit."},
		}
		for _, tt := range tests {
			wantEqual(t, retry(t, s, "read_file", tt.args...), tt.want)
		}
	})
}

func TestReadFileBinary(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		s := newSet(t, fx.b, Options{})
		nulAt := func(i, size int) string {
			b := []byte(strings.Repeat("a", size))
			b[i] = 0
			return string(b)
		}
		fx.put(t, "nul0.bin", "\x00")
		fx.put(t, "nul8191.bin", nulAt(8191, 9000))
		fx.put(t, "nul8192.txt", nulAt(8192, 9000))
		wantEqual(t, ok(t, s, "read_file", "path", "nul0.bin"), "[Binary file: 1 byte. It cannot be shown as text.]")
		wantEqual(t, ok(t, s, "read_file", "path", "nul8191.bin"), "[Binary file: 9000 bytes. It cannot be shown as text.]")
		got := ok(t, s, "read_file", "path", "nul8192.txt")
		if !strings.HasPrefix(got, "[nul8192.txt | 1 line | hash:") {
			t.Errorf("NUL at 8192 should not make a file binary: %.80q", got)
		}
		// With an event listener the binary file is hashed to its end.
		rec := &recorder{}
		s = newSet(t, fx.b, Options{OnEvent: rec.on})
		ok(t, s, "read_file", "path", "nul8191.bin")
		if ev := rec.events[0].(FileRead); ev.ContentHash != hashBytes([]byte(nulAt(8191, 9000))) {
			t.Errorf("binary FileRead hash = %q", ev.ContentHash)
		}
	})
}

func TestReadFileMaxReadChars(t *testing.T) {
	long := strings.Repeat("x", 12345) + "\n"
	content := "ab\ncd\n" + long + "ef\n"
	tests := []struct {
		name string
		max  int
		args []any
		want string
	}{
		// header 38 characters, each short line 10 ("     1\tab\n"), hint 54.
		{"window ends on a complete line", 112, nil,
			"[f.txt | 4 lines | hash:" + h12(content) + "]\n     1\tab\n     2\tcd\n... (2 more lines. Use offset=2 to continue reading.)\n"},
		{"one character less drops a line", 111, nil,
			"[f.txt | 4 lines | hash:" + h12(content) + "]\n     1\tab\n... (3 more lines. Use offset=1 to continue reading.)\n"},
		{"first line does not fit", 200, []any{"offset", 2},
			"[f.txt | 4 lines | hash:" + h12(content) + "]\n... (Line 3 is 12,346 characters and does not fit the read window. Use offset=3 to skip it.)\n"},
		{"everything fits", 100000, []any{"offset", 3},
			"[f.txt | 4 lines | hash:" + h12(content) + "]\n     4\tef\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := backends(t)[1]
			fx.put(t, "f.txt", content)
			s := newSet(t, fx.b, Options{MaxReadChars: tt.max})
			got := ok(t, s, "read_file", append([]any{"path", "f.txt"}, tt.args...)...)
			wantEqual(t, got, tt.want)
			if n := len([]rune(got)); n > tt.max {
				t.Errorf("result has %d characters, cap %d", n, tt.max)
			}
		})
	}
}

func TestReadFileLongLineNoticeCountsCharacters(t *testing.T) {
	fx := backends(t)[1]
	line := strings.Repeat("é", 1500) + "\xff\r\n" // 1500 + 1 + 2 characters
	fx.put(t, "f.txt", line)
	s := newSet(t, fx.b, Options{MaxReadChars: 100})
	want := "[f.txt | 1 line | hash:" + h12(line) + " | CRLF line endings (each line's \\r is shown before its line break); not valid UTF-8: 1 invalid byte, shown as U+FFFD (\ufffd)]\n... (Line 1 is 1,503 characters and does not fit the read window. Use offset=1 to skip it.)\n"
	wantEqual(t, ok(t, s, "read_file", "path", "f.txt"), want)
}

func TestReadFileSymlinks(t *testing.T) {
	fx := localFixture(t)
	fx.put(t, "real.txt", "x\n")
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s\n"), 0o644)
	for name, target := range map[string]string{"link.txt": "real.txt", "out": filepath.Join(outside, "secret"),
		"loop1": "loop2", "loop2": "loop1", "dangling": "nope.txt"} {
		if err := os.Symlink(target, filepath.Join(fx.dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	rec := &recorder{}
	s := newSet(t, fx.b, Options{OnEvent: rec.on})
	wantEqual(t, ok(t, s, "read_file", "path", "link.txt"), "[link.txt | 1 line | hash:"+h12("x\n")+"]\n     1\tx\n")
	if ev := rec.events[0].(FileRead); ev.Path != "real.txt" {
		t.Errorf("event path %q, want the resolved real.txt", ev.Path)
	}
	wantEqual(t, retry(t, s, "read_file", "path", "out"), "Path 'out' resolves outside the root directory.")
	wantEqual(t, retry(t, s, "read_file", "path", "loop1"), "Path 'loop1' resolves through a symlink loop.")
	wantEqual(t, retry(t, s, "read_file", "path", "dangling"), "File not found: dangling")
	if len(rec.events) != 1 {
		t.Errorf("failed reads emitted events: %s", rec.kinds())
	}
}

func TestReadFileFIFONeverBlocks(t *testing.T) {
	fx := localFixture(t)
	if err := syscall.Mkfifo(filepath.Join(fx.dir, "fifo"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	s := newSet(t, fx.b, Options{})
	wantEqual(t, retry(t, s, "read_file", "path", "fifo"), "File not found: fifo")
}

func TestReadFileEvents(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		fx.put(t, "sub/f.txt", "a\n")
		rec := &recorder{}
		s := newSet(t, fx.b, Options{OnEvent: rec.on, Cwd: "sub"})
		ok(t, s, "read_file", "path", "f.txt")
		retry(t, s, "read_file", "path", "f.txt", "offset", 5)
		retry(t, s, "read_file", "path", "missing")
		if len(rec.events) != 1 {
			t.Fatalf("events %s, want one file_read", rec.kinds())
		}
		want := FileRead{Path: "sub/f.txt", ContentHash: hashBytes([]byte("a\n"))}
		if rec.events[0] != want {
			t.Errorf("event %+v, want %+v", rec.events[0], want)
		}
	})
}

// countingFS is a local backend that counts the bytes its read streams
// deliver.
type countingFS struct {
	*local.FS
	n atomic.Int64
}

func (c *countingFS) OpenRead(ctx context.Context, name string) (backend.FileReader, error) {
	r, err := c.FS.OpenRead(ctx, name)
	if err != nil {
		return nil, err
	}
	return backend.NewFileReader(countingReadCloser{r, &c.n}, r.Info()), nil
}

type countingReadCloser struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c countingReadCloser) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func TestReadFileHugeSparseBinaryReadsOnlyItsStart(t *testing.T) {
	fx := localFixture(t)
	const size = 3 << 30
	f, err := os.Create(filepath.Join(fx.dir, "huge.img"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Skipf("sparse file: %v", err)
	}
	f.Close()
	cb := &countingFS{FS: fx.b.(*local.FS)}
	s := newSet(t, cb, Options{})
	wantEqual(t, ok(t, s, "read_file", "path", "huge.img", "limit", 10), "[Binary file: 3221225472 bytes. It cannot be shown as text.]")
	if n := cb.n.Load(); n > 1<<20 || n == 0 {
		t.Errorf("read %d bytes of a %d-byte binary file", n, int64(size))
	}
}

// genFS serves one generated file of any size without holding it.
type genFS struct {
	size int64
	line string // repeated; "" means one line of 'x' without a newline
}

func (g genFS) OpenRead(ctx context.Context, name string) (backend.FileReader, error) {
	return backend.NewFileReader(io.NopCloser(io.LimitReader(&repeatReader{pattern: g.pattern()}, g.size)), backend.FileInfo{Name: name, Size: g.size}), nil
}

func (g genFS) pattern() string {
	if g.line == "" {
		return strings.Repeat("x", 4096)
	}
	return g.line
}

func (g genFS) List(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	return []backend.DirEntry{{Name: "big.txt", Size: g.size}}, nil
}

type repeatReader struct {
	pattern string
	off     int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.pattern[r.off:])
		n += c
		r.off = (r.off + c) % len(r.pattern)
	}
	return n, nil
}

// allocDuring returns the bytes allocated while fn runs.
func allocDuring(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestReadFileMemoryIsBoundedByTheWindow(t *testing.T) {
	const size = 48 << 20
	const bound = 8 << 20
	t.Run("many lines", func(t *testing.T) {
		s := newSet(t, genFS{size: size, line: "some text of a line\n"}, Options{})
		var out string
		alloc := allocDuring(func() { out = ok(t, s, "read_file", "path", "big.txt", "limit", 10) })
		if !strings.Contains(out, "| 2516583 lines |") || !strings.HasSuffix(out, "... (2516573 more lines. Use offset=10 to continue reading.)\n") {
			t.Errorf("unexpected result %q", out)
		}
		if alloc > bound {
			t.Errorf("reading 10 lines of a %d-byte file allocated %d bytes", size, alloc)
		}
		t.Logf("10 lines of a %d-byte file: %d bytes allocated", size, alloc)
	})
	t.Run("one enormous line", func(t *testing.T) {
		s := newSet(t, genFS{size: size}, Options{MaxReadChars: 1000})
		var out string
		alloc := allocDuring(func() { out = ok(t, s, "read_file", "path", "big.txt") })
		if !strings.HasSuffix(out, "]\n... (Line 1 is 50,331,648 characters and does not fit the read window. Use offset=1 to skip it.)\n") {
			t.Errorf("unexpected result %q", out)
		}
		if alloc > bound {
			t.Errorf("reading a %d-byte line allocated %d bytes", size, alloc)
		}
		t.Logf("a %d-byte line: %d bytes allocated", size, alloc)
	})
}
