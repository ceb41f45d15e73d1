package sftpadapter

import (
	"bytes"
	"encoding/binary"
	"io"
	"slices"
	"testing"
)

// nameEntry is one entry of a NAME packet built by a test.
type nameEntry struct {
	name string
	attr []byte // encoded ATTRS
}

// attrsBytes encodes ATTRS with the given flags and filler for each field.
func attrsBytes(flags uint32, ext [][2]string) []byte {
	b := binary.BigEndian.AppendUint32(nil, flags)
	if flags&attrSize != 0 {
		b = binary.BigEndian.AppendUint64(b, 42)
	}
	if flags&attrUIDGID != 0 {
		b = binary.BigEndian.AppendUint32(b, 1000)
		b = binary.BigEndian.AppendUint32(b, 1000)
	}
	if flags&attrPermissions != 0 {
		b = binary.BigEndian.AppendUint32(b, 0o100644)
	}
	if flags&attrACModTime != 0 {
		b = binary.BigEndian.AppendUint32(b, 1)
		b = binary.BigEndian.AppendUint32(b, 2)
	}
	if flags&attrExtended != 0 {
		b = binary.BigEndian.AppendUint32(b, uint32(len(ext)))
		for _, kv := range ext {
			b = appendString(b, []byte(kv[0]))
			b = appendString(b, []byte(kv[1]))
		}
	}
	return b
}

// namePacket encodes a NAME packet, length prefix included.
func namePacket(id uint32, entries []nameEntry) []byte {
	b := []byte{0, 0, 0, 0, fxpName}
	b = binary.BigEndian.AppendUint32(b, id)
	b = binary.BigEndian.AppendUint32(b, uint32(len(entries)))
	for _, e := range entries {
		b = appendString(b, []byte(e.name))
		b = appendString(b, []byte("-rw-r--r-- 1 u g 42 Jan 1 00:00 "+e.name))
		b = append(b, e.attr...)
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// packetNames decodes the names of a NAME packet.
func packetNames(t *testing.T, pkt []byte) []string {
	t.Helper()
	if got := binary.BigEndian.Uint32(pkt); int(got) != len(pkt)-4 {
		t.Fatalf("length prefix %d, packet has %d bytes", got, len(pkt)-4)
	}
	count := binary.BigEndian.Uint32(pkt[9:13])
	rest := pkt[13:]
	var names []string
	for range count {
		name, after, ok := readString(rest)
		if !ok {
			t.Fatalf("bad name in %x", pkt)
		}
		_, after, ok = readString(after)
		if !ok {
			t.Fatalf("bad long name in %x", pkt)
		}
		n, ok := attrsLen(after)
		if !ok {
			t.Fatalf("bad attrs in %x", pkt)
		}
		names = append(names, string(name))
		rest = after[n:]
	}
	return names // bytes after the entries are kept as they came
}

func TestFilterNamePacket(t *testing.T) {
	all := attrsBytes(attrSize|attrUIDGID|attrPermissions|attrACModTime|attrExtended, [][2]string{{"k", "v"}, {"", ""}})
	plain := attrsBytes(attrSize|attrPermissions, nil)
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"safe names kept", []string{"a", "b.txt", "~x", `back\slash`, "new\nline", "\xff"}, []string{"a", "b.txt", "~x", `back\slash`, "new\nline", "\xff"}},
		{"slash", []string{"x/passwd", "ok"}, []string{".", "ok"}},
		{"trailing slash", []string{"dir/"}, []string{"."}},
		{"only slash", []string{"/"}, []string{"."}},
		{"nul", []string{"a\x00b"}, []string{"."}},
		{"empty", []string{""}, []string{"."}},
		{"dot and dotdot", []string{".", ".."}, []string{".", "."}},
		{"climb", []string{"x/.."}, []string{"."}},
		{"none", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var entries []nameEntry
			for i, n := range tt.in {
				attr := plain
				if i%2 == 1 {
					attr = all
				}
				entries = append(entries, nameEntry{n, attr})
			}
			got := packetNames(t, filterNamePacket(namePacket(7, entries)))
			if !slices.Equal(got, tt.want) {
				t.Errorf("names %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFilterNamePacketMalformed(t *testing.T) {
	good := namePacket(1, []nameEntry{{"a/b", attrsBytes(attrSize, nil)}})
	tests := []struct {
		name string
		pkt  []byte
	}{
		{"short", good[:10]},
		{"count too large", func() []byte {
			b := bytes.Clone(good)
			binary.BigEndian.PutUint32(b[9:], 5)
			return b
		}()},
		{"truncated attrs", good[:len(good)-3]},
		{"truncated extension", namePacket(1, []nameEntry{{"a/b", attrsBytes(attrExtended, nil)[:4]}})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := filterNamePacket(tt.pkt)
			if !bytes.Equal(got, tt.pkt) {
				t.Errorf("malformed packet changed: %x -> %x", tt.pkt, got)
			}
		})
	}
}

// request encodes a client request header with a body of n bytes.
func request(typ byte, id uint32, n int) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(5+n))
	b = append(b, typ)
	b = binary.BigEndian.AppendUint32(b, id)
	return append(b, bytes.Repeat([]byte{0xAA}, n)...)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func TestRequestWatcherRecordsReaddirInAnySplit(t *testing.T) {
	var stream []byte
	stream = append(stream, request(1, 3, 0)...)              // INIT: the "id" is the version
	stream = append(stream, request(fxpReaddir, 10, 8)...)    // READDIR handle
	stream = append(stream, request(6, 11, 300)...)           // WRITE with data
	stream = append(stream, request(fxpReaddir, 12, 4)...)    // READDIR
	stream = append(stream, request(19, 13, 20)...)           // READLINK
	stream = append(stream, request(fxpReaddir, 1<<31, 0)...) // READDIR, empty handle
	for _, chunk := range []int{1, 2, 5, 9, 13, 64, len(stream)} {
		ids := newIDSet()
		var out bytes.Buffer
		rw := &requestWatcher{w: nopCloser{&out}, ids: ids}
		for q := stream; len(q) > 0; {
			n := min(chunk, len(q))
			if w, err := rw.Write(q[:n]); w != n || err != nil {
				t.Fatalf("chunk %d: Write = %d, %v", chunk, w, err)
			}
			q = q[n:]
		}
		if !bytes.Equal(out.Bytes(), stream) {
			t.Fatalf("chunk %d: stream changed", chunk)
		}
		for _, id := range []uint32{10, 12, 1 << 31} {
			if !ids.take(id) {
				t.Errorf("chunk %d: READDIR %d not recorded", chunk, id)
			}
		}
		if len(ids.ids) != 0 {
			t.Errorf("chunk %d: other ids recorded: %v", chunk, ids.ids)
		}
	}
}

func TestNameFilterStream(t *testing.T) {
	ids := newIDSet()
	ids.add(5)
	evil := namePacket(5, []nameEntry{{"x/passwd", attrsBytes(attrSize, nil)}, {"ok", attrsBytes(0, nil)}})
	link := namePacket(6, []nameEntry{{"/etc/passwd", attrsBytes(0, nil)}}) // READLINK answer: kept
	data := append(binary.BigEndian.AppendUint32(nil, 5+1000), append([]byte{103, 0, 0, 0, 7}, bytes.Repeat([]byte{'d'}, 1000)...)...)
	var stream []byte
	stream = append(stream, link...)
	stream = append(stream, evil...)
	stream = append(stream, data...)
	nf := &nameFilter{r: &oneByteReader{bytes.NewReader(stream)}, ids: ids}
	got, err := io.ReadAll(nf)
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Concat(link, filterNamePacket(evil), data)
	if !bytes.Equal(got, want) {
		t.Fatalf("filtered stream\n got %x\nwant %x", got, want)
	}
	if names := packetNames(t, filterNamePacket(evil)); !slices.Equal(names, []string{".", "ok"}) {
		t.Errorf("names %q", names)
	}
	if len(ids.ids) != 0 {
		t.Errorf("answered id still recorded")
	}
}

func TestNameFilterTruncated(t *testing.T) {
	ids := newIDSet()
	ids.add(5)
	pkt := namePacket(5, []nameEntry{{"a", attrsBytes(0, nil)}})
	for _, n := range []int{3, 9, len(pkt) - 1} {
		nf := &nameFilter{r: bytes.NewReader(pkt[:n]), ids: ids}
		ids.add(5)
		if _, err := io.ReadAll(nf); err == nil {
			t.Errorf("%d of %d bytes: no error", n, len(pkt))
		}
	}
	// A passed-through packet cut short is an unexpected EOF too.
	data := request(103, 9, 50)
	nf := &nameFilter{r: bytes.NewReader(data[:20]), ids: newIDSet()}
	if _, err := io.ReadAll(nf); err != io.ErrUnexpectedEOF {
		t.Errorf("cut data packet: %v, want unexpected EOF", err)
	}
}

// oneByteReader returns one byte per Read, to exercise every split.
type oneByteReader struct{ r io.Reader }

func (o *oneByteReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

// FuzzFilterNamePacket checks that the filter never panics, that a packet
// it rewrites stays well formed with the same number of entries, and that
// no unsafe name survives.
func FuzzFilterNamePacket(f *testing.F) {
	f.Add(namePacket(1, []nameEntry{{"a/b", attrsBytes(attrSize|attrExtended, [][2]string{{"a", "b"}})}}))
	f.Add(namePacket(1, []nameEntry{{"ok", attrsBytes(attrACModTime, nil)}, {"..", attrsBytes(0, nil)}}))
	f.Add([]byte{0, 0, 0, 9, fxpName, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, pkt []byte) {
		if len(pkt) < 9 {
			return
		}
		binary.BigEndian.PutUint32(pkt, uint32(len(pkt)-4))
		out := filterNamePacket(bytes.Clone(pkt))
		if bytes.Equal(out, pkt) {
			return
		}
		names := packetNames(t, out)
		if uint32(len(names)) != binary.BigEndian.Uint32(pkt[9:13]) {
			t.Fatalf("entry count changed")
		}
		for _, n := range names {
			if n != "." && !safeName([]byte(n)) {
				t.Fatalf("unsafe name %q survived", n)
			}
		}
	})
}

// FuzzNameFilter feeds arbitrary server streams through the filter: it
// must not panic, and a stream without recorded READDIR ids passes
// unchanged.
func FuzzNameFilter(f *testing.F) {
	f.Add(namePacket(5, []nameEntry{{"x/y", attrsBytes(0, nil)}}), uint32(5))
	f.Add(request(103, 1, 10), uint32(1))
	f.Fuzz(func(t *testing.T, stream []byte, id uint32) {
		ids := newIDSet()
		ids.add(id)
		_, _ = io.ReadAll(&nameFilter{r: bytes.NewReader(stream), ids: ids})
		got, _ := io.ReadAll(&nameFilter{r: bytes.NewReader(stream), ids: newIDSet()})
		if !bytes.Equal(got, stream[:len(got)]) {
			t.Fatalf("untracked stream changed")
		}
	})
}
