package tools

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzUnquoteJSON: unquoteJSON agrees with encoding/json on every valid
// JSON value: every string literal decodes to the same string, and
// anything else is left to encoding/json.
func FuzzUnquoteJSON(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\nb\t\"c\"\\/"`, `"\u00e9\ud83d\ude00"`, `"\ud800x"`, `"\udc00\ud800"`,
		"\"\xff\xfe\"", `"é"`, `12`, `null`, `["x"]`, `"\u0000"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		if !json.Valid(v) {
			return
		}
		var want string
		wantOK := json.Unmarshal(v, &want) == nil && len(v) > 1 && v[0] == '"' && v[len(v)-1] == '"'
		got, ok := unquoteJSON(v)
		if ok != wantOK || (ok && got != want) {
			t.Errorf("unquoteJSON(%q) = %q, %v; encoding/json: %q, %v", v, got, ok, want, wantOK)
		}
	})
}

// BenchmarkDecodeWriteArgs decodes write_file's arguments with 4 KiB of
// content in 80 lines.
func BenchmarkDecodeWriteArgs(b *testing.B) {
	raw, _ := json.Marshal(map[string]string{"path": "notes.md", "content": strings.Repeat("some text of a line, with a tab\tand a quote \" in it\n", 80)})
	b.ReportAllocs()
	for b.Loop() {
		var p, content string
		if err := decodeArgs(raw, arg{"path", &p, true}, arg{"content", &content, true}); err != nil {
			b.Fatal(err)
		}
	}
}
