package checkpoint

import (
	"bytes"
	"reflect"
	"slices"
	"testing"
)

// FuzzDecodeRecord: no input makes the record decoder panic, and what it
// accepts is a valid record that encodes and decodes to itself.
func FuzzDecodeRecord(f *testing.F) {
	f.Add([]byte(`{"v":1,"seq":3,"type":"change","time":"2026-01-02T03:04:05Z","op":"edit","path":"a.txt","paths":[{"p":"a.txt","b":{"k":"file","h":"`+zeros+`","s":3,"m":420},"a":{"k":"file","h":"`+zeros+`"}}],"afters":[{"seq":2,"p":"b","a":{"k":"missing"}}]}`), uint64(3))
	f.Add([]byte(`{"v":1,"seq":9,"type":"restore","ref":2,"force":true,"paths":[{"p":"d/e","b":{"k":"dir"},"a":{"k":"missing"}}]}`), uint64(9))
	f.Add([]byte(`{"v":1,"seq":10,"type":"done","ref":9}`), uint64(10))
	f.Add([]byte(`{"v":1,"seq":11,"type":"prune","ref":4}`), uint64(11))
	f.Add([]byte(`{"v":1,"seq":5,"type":"change","paths":[{"p":"../x","b":{"k":"missing"}}]}`), uint64(5))
	f.Add([]byte(`{"v":1,"seq":4,"type":"change","paths":[{"p":"e","b":{"k":"file","h":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}}],"inline":{"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855":""}}`), uint64(4))
	f.Add([]byte(`{"v":1,"seq":4,"type":"change","paths":[{"p":"e","b":{"k":"missing"}}],"inline":{"`+zeros+`":"YQ=="}}`), uint64(4))
	f.Add([]byte(`{"v":2}`), uint64(1))
	f.Add([]byte(`not json`), uint64(1))
	f.Fuzz(func(t *testing.T, data []byte, seq uint64) {
		r, err := decodeRecord(data, seq)
		if err != nil {
			return
		}
		out, err := encodeRecord(r)
		if err != nil {
			t.Fatalf("encoding an accepted record: %v", err)
		}
		again, err := decodeRecord(out, seq)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", out, err)
		}
		if !reflect.DeepEqual(normal(r), normal(again)) {
			t.Fatalf("round trip changed the record:\n%+v\n%+v", r, again)
		}
	})
}

const zeros = "0000000000000000000000000000000000000000000000000000000000000000"

// normal drops what JSON does not keep exactly (the time's monotonic and
// location parts, empty against nil lists and maps).
func normal(r *record) record {
	c := *r
	c.Time = c.Time.UTC().Round(0)
	if len(c.Paths) == 0 {
		c.Paths = nil
	}
	if len(c.Afters) == 0 {
		c.Afters = nil
	}
	if len(c.Inline) == 0 {
		c.Inline = nil
	}
	for h, v := range c.Inline {
		if len(v) == 0 {
			c.Inline[h] = []byte{}
		}
	}
	return c
}

// FuzzParseRecordName: names parse only as the fixed-width form, which
// prints back identically.
func FuzzParseRecordName(f *testing.F) {
	f.Add("00000000000000000001.json")
	f.Add("1.json")
	f.Add("-0000000000000000001.json")
	f.Fuzz(func(t *testing.T, name string) {
		seq, ok := parseRecordName(name)
		if ok && recordName(seq) != name {
			t.Fatalf("%q parsed as %d, which prints as %q", name, seq, recordName(seq))
		}
	})
}

// FuzzScanFrames: no input makes the segment reader panic; what it
// accepts is whole frames, which encode back to exactly the bytes read,
// and reading a prefix of a segment (a write cut short) or a segment with
// anything after its frames (a torn frame, zeros) yields the frames the
// prefix holds whole, never more; the records decoded from frames are
// ones that encode and decode to themselves.
func FuzzScanFrames(f *testing.F) {
	rec := []byte(`{"v":1,"seq":3,"type":"change","time":"2026-01-02T03:04:05Z","op":"edit","path":"a.txt","paths":[{"p":"a.txt","b":{"k":"missing"}}]}`)
	one := appendFrame(nil, rec)
	f.Add(one, 0)
	f.Add(append(one, make([]byte, 64)...), 0)
	f.Add(appendFrame(one, []byte(`{"v":1,"seq":4,"type":"done","ref":2}`)), len(one)+3)
	f.Add(append(slices.Clone(one), 0, 0, 0, 9, 1, 2, 3, 4, 'x'), 0)
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}, 0)
	f.Add([]byte{}, 0)
	f.Fuzz(func(t *testing.T, data []byte, cut int) {
		frames, end, need := scanFrames(data)
		if end < 0 || end > len(data) || need < 0 || need > 0 && need < frameHeader {
			t.Fatalf("end %d need %d of %d bytes", end, need, len(data))
		}
		if need > 0 && end+need <= len(data) {
			t.Fatalf("needs %d bytes past %d, but %d are there", need, end, len(data))
		}
		var again []byte
		for _, fr := range frames {
			if len(again)+frameHeader != fr.off {
				t.Fatalf("frame at %d, want %d", fr.off, len(again)+frameHeader)
			}
			again = appendFrame(again, fr.payload)
			if r, err := decodeLogRecord(fr.payload); err == nil {
				out, err := encodeRecord(r)
				if err != nil {
					t.Fatalf("encoding an accepted record: %v", err)
				}
				again, err := decodeLogRecord(out)
				if err != nil || !reflect.DeepEqual(normal(r), normal(again)) {
					t.Fatalf("round trip of %s: %v", out, err)
				}
			}
		}
		if !bytes.Equal(again, data[:end]) {
			t.Fatalf("frames re-encode to %d bytes, read %d", len(again), end)
		}
		if cut < 0 || cut > len(data) {
			return
		}
		prefix, pend, _ := scanFrames(data[:cut])
		if pend > cut || len(prefix) > len(frames) {
			t.Fatalf("a prefix of %d bytes read %d frames to %d; the whole %d to %d", cut, len(prefix), pend, len(frames), end)
		}
		for i, fr := range prefix {
			if fr.off != frames[i].off || !bytes.Equal(fr.payload, frames[i].payload) {
				t.Fatalf("frame %d of a prefix differs from the whole's", i)
			}
		}
		if cut >= end && len(prefix) != len(frames) {
			t.Fatalf("a prefix holding every frame read %d of %d", len(prefix), len(frames))
		}
	})
}
