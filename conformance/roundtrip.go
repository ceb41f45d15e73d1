package conformance

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

func (s *suite) roundTripTests() []testCase {
	allBytes := make([]byte, 256)
	for i := range allBytes {
		allBytes[i] = byte(i)
	}
	cases := []struct {
		name string
		data []byte
	}{
		{"Empty", []byte{}},
		{"OneByte", []byte{0}},
		{"AllByteValues", allBytes},
		{"CRLF", []byte("one\r\ntwo\r\n\r\nthree\rfour\n")},
		{"UTF8WithBOM", []byte("\ufeffh\u00e9llo w\u00f6rld \u2603\n")},
		{"NoTrailingNewline", []byte("no newline at the end")},
	}
	var tests []testCase
	for _, c := range cases {
		tests = append(tests, testCase{c.name, func(t *testing.T) { s.testRoundTrip(t, c.data) }})
	}
	return append(tests,
		testCase{"Large", s.testLargeRoundTrip},
		testCase{"ReplaceLongerWithShorter", s.testReplaceShorter},
		testCase{"ReplaceWithEmpty", s.testReplaceEmpty},
		testCase{"ParentsCreated", s.testParentsCreated},
		testCase{"SeveralWritesOneHandle", s.testSeveralWrites},
	)
}

// testRoundTrip stores data and reads it back, checking the size Stat and
// List report.
func (s *suite) testRoundTrip(t *testing.T, data []byte) {
	e := s.setup(t)
	e.requireArrange()
	e.put("file", data)
	e.wantContent(e.p("file"), data)
	fi := e.stat(e.p("file"))
	if !fi.IsRegular() || fi.Name != "file" || (fi.Size != -1 && fi.Size != int64(len(data))) {
		t.Errorf("Stat = %+v, want a regular file named %q of %d bytes", fi, "file", len(data))
	}
	e.wantReadInfo(e.p("file"), fi)
	entries := e.list(e.p("."))
	if len(entries) != 1 || entries[0].Name != "file" || !entries[0].IsRegular() ||
		(entries[0].Size != -1 && entries[0].Size != int64(len(data))) {
		t.Errorf("List = %+v, want one regular entry named %q of %d bytes", entries, "file", len(data))
	}
}

// wantReadInfo checks that the stream OpenRead returns knows what it
// serves: its Info describes a regular file of exactly the bytes read,
// and, the file being unchanged since the Stat that gave st, carries the
// same version and modification time.
func (e *env) wantReadInfo(name string, st backend.FileInfo) {
	e.t.Helper()
	r, err := e.b.OpenRead(e.ctx, name)
	if err != nil {
		e.t.Fatalf("OpenRead(%q): %v", name, err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		e.t.Fatalf("reading %q: %v", name, err)
	}
	info := r.Info()
	_, base := backend.Split(name)
	if !info.IsRegular() || info.Name != base || info.Size != int64(len(data)) {
		e.t.Errorf("OpenRead(%q).Info() = %+v; want a regular file named %q of the %d bytes it served", name, info, base, len(data))
	}
	if e.caps.Versions && (info.Version == "" || info.Version != st.Version) {
		e.t.Errorf("OpenRead(%q).Info().Version = %q, want Stat's %q (Capabilities.Versions=true)", name, info.Version, st.Version)
	}
	if e.caps.ModTimes && !info.ModTime.Equal(st.ModTime) {
		e.t.Errorf("OpenRead(%q).Info().ModTime = %v, want Stat's %v", name, info.ModTime, st.ModTime)
	}
}

// largeChunk is the granularity the big file is generated and written
// in; the odd size makes writes straddle any power-of-two buffer.
const largeChunk = 1<<20 + 7

// testLargeRoundTrip streams a big deterministic file through the backend
// in chunks, comparing SHA-256 digests, so neither side ever holds it
// whole.
func (s *suite) testLargeRoundTrip(t *testing.T) {
	e := s.setup(t)
	w := e.writer()
	size := s.opts.LargeFileSize
	name := e.p("big/large.bin")
	fw, err := w.OpenWrite(e.ctx, name, backend.WriteOptions{})
	if err != nil {
		t.Fatalf("OpenWrite(%q): %v", name, err)
	}
	defer fw.Close()
	want := sha256.New()
	n, err := io.CopyBuffer(io.MultiWriter(fw, want), io.LimitReader(deterministic(1), size), make([]byte, largeChunk))
	if err != nil || n != size {
		t.Fatalf("writing %q: wrote %d of %d bytes: %v", name, n, size, err)
	}
	if err := fw.Commit(); err != nil {
		t.Fatalf("Commit(%q): %v", name, err)
	}
	if fi := e.stat(name); fi.Size != -1 && fi.Size != size {
		t.Errorf("Stat(%q).Size = %d, want %d", name, fi.Size, size)
	}
	r, err := e.b.OpenRead(e.ctx, name)
	if err != nil {
		t.Fatalf("OpenRead(%q): %v", name, err)
	}
	defer r.Close()
	got := sha256.New()
	n, err = io.CopyBuffer(got, r, make([]byte, largeChunk))
	if err != nil {
		t.Fatalf("reading %q after %d bytes: %v", name, n, err)
	}
	if n != size {
		t.Fatalf("read %d bytes from %q, want %d", n, name, size)
	}
	if g, w := hex.EncodeToString(got.Sum(nil)), hex.EncodeToString(want.Sum(nil)); g != w {
		t.Errorf("sha256 of %q read back = %s, want %s", name, g, w)
	}
}

// deterministic returns an endless reproducible byte stream.
func deterministic(seed byte) io.Reader {
	var key [32]byte
	key[0] = seed
	return rand.NewChaCha8(key)
}

// testReplaceShorter checks that a replacement leaves nothing of the
// longer old content behind.
func (s *suite) testReplaceShorter(t *testing.T) {
	e := s.setup(t)
	e.writer()
	e.put("f", bytes.Repeat([]byte("long old content\n"), 100))
	old, _ := backend.Stat(e.ctx, e.b, e.p("f"))
	e.put("f", []byte("short"))
	e.wantContent(e.p("f"), []byte("short"))
	// A caller's word that it just saw the old version is old news.
	got, err := backend.ReadFile(e.staleKnown(e.p("f"), old.Version), e.b, e.p("f"))
	if err != nil || string(got) != "short" {
		t.Errorf("reading %q claimed as its old version = %s, %v; want the new content", e.p("f"), describe(got), err)
	}
}

// testReplaceEmpty checks that a file can be truncated to nothing by a
// replacement.
func (s *suite) testReplaceEmpty(t *testing.T) {
	e := s.setup(t)
	e.writer()
	e.put("f", []byte("something"))
	e.put("f", nil)
	e.wantContent(e.p("f"), []byte{})
}

// testParentsCreated checks that OpenWrite creates missing parent
// directories.
func (s *suite) testParentsCreated(t *testing.T) {
	e := s.setup(t)
	e.writer()
	e.put("p/q/r/f.txt", []byte("deep"))
	e.wantContent(e.p("p/q/r/f.txt"), []byte("deep"))
	for _, d := range []string{"p", "p/q", "p/q/r"} {
		if fi := e.stat(e.p(d)); !fi.IsDir() {
			t.Errorf("Stat(%q) = %+v, want a directory", e.p(d), fi)
		}
	}
	e.wantNames(e.p("."), "p")
	e.wantNames(e.p("p/q"), "r")
	if en := e.list(e.p("p/q")); len(en) == 1 && !en[0].IsDir() {
		t.Errorf("List(%q) entry %+v is not a directory", e.p("p/q"), en[0])
	}
}

// testSeveralWrites checks that many small writes on one handle are
// concatenated in order.
func (s *suite) testSeveralWrites(t *testing.T) {
	e := s.setup(t)
	w := e.writer()
	fw, err := w.OpenWrite(e.ctx, e.p("f"), backend.WriteOptions{})
	if err != nil {
		t.Fatalf("OpenWrite: %v", err)
	}
	defer fw.Close()
	var want []byte
	for i := range 100 {
		chunk := bytes.Repeat([]byte{byte('a' + i%26)}, i)
		want = append(want, chunk...)
		if n, err := fw.Write(chunk); err != nil || n != len(chunk) {
			t.Fatalf("Write #%d = %d, %v; want %d, nil", i, n, err, len(chunk))
		}
	}
	if err := fw.Commit(); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if err := fw.Close(); err != nil {
		t.Errorf("Close after Commit = %v, want nil", err)
	}
	e.wantContent(e.p("f"), want)
}
