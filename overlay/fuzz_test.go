package overlay

import (
	"bytes"
	"testing"
)

// FuzzParseIndex: whatever the stored index holds, parsing either fails
// or gives records that are all valid and that encode to an index that
// parses to the same records.
func FuzzParseIndex(f *testing.F) {
	h := hashBytes([]byte("x"))
	f.Add([]byte(`{"format":1,"records":[]}`))
	f.Add([]byte(`{"format":1,"records":[{"path":"a/b","deleted":true,"base":{"kind":"file","version":"v1","hash":"` + h + `"}}]}`))
	f.Add([]byte(`{"format":1,"records":[{"path":"d","deleted":true,"base":{"kind":"dir"}},{"path":"n","base":{"kind":"none"},"from":"m"}]}`))
	f.Add([]byte(`{"format":1,"records":[{"path":"../x","base":{"kind":"none"}}]}`))
	f.Add([]byte(`{"format":2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ix, err := parseIndex(data)
		if err != nil {
			return
		}
		for p, r := range ix.records {
			if p != r.Path {
				t.Fatalf("record %q filed under %q", r.Path, p)
			}
			if err := r.check(); err != nil {
				t.Fatalf("parsed an invalid record: %v", err)
			}
		}
		enc := ix.encode()
		again, err := parseIndex(enc)
		if err != nil {
			t.Fatalf("re-parsing %q: %v", enc, err)
		}
		if !bytes.Equal(again.encode(), enc) {
			t.Fatalf("encoding is not stable: %q then %q", enc, again.encode())
		}
	})
}
