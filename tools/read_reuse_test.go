package tools

import (
	"context"
	"strings"
	"testing"
)

// TestReadFileReuse reads files of every kind in turn through one Set,
// whose pooled scan state and buffers each read takes over from the one
// before, and checks every result against a Set that never read before.
func TestReadFileReuse(t *testing.T) {
	files := map[string]string{
		"plain.txt":   strings.Repeat("a plain line\n", 300),
		"crlf.txt":    "one\r\ntwo\r\nthree\r\n",
		"bom.txt":     "\ufeffstarts with a mark\nand no final break",
		"invalid.txt": "valid\nin\xffvalid \xe2\x82\nend\n",
		"tabs.txt":    "\tindented\n  spaced\nplain\n",
		"long.txt":    strings.Repeat("x", 5000) + "\nshort\n",
		"empty.txt":   "",
		"bin.dat":     "\x00\x01\x02binary",
	}
	optionSets := []Options{{}, {MaxReadChars: 100}, {NoContentHashes: true}}
	calls := []struct {
		opts int // index in optionSets
		args []any
	}{
		{0, []any{"path", "plain.txt"}},
		{0, []any{"path", "invalid.txt"}},
		{0, []any{"path", "crlf.txt"}},
		{0, []any{"path", "plain.txt", "offset", 290, "limit", 5}},
		{0, []any{"path", "bom.txt"}},
		{0, []any{"path", "empty.txt"}},
		{0, []any{"path", "tabs.txt"}},
		{0, []any{"path", "bin.dat"}},
		{0, []any{"path", "long.txt"}},
		{0, []any{"path", "plain.txt", "limit", 2}},
		{1, []any{"path", "plain.txt"}},
		{1, []any{"path", "long.txt"}},
		{1, []any{"path", "invalid.txt"}},
		{1, []any{"path", "crlf.txt"}},
		{2, []any{"path", "invalid.txt"}},
		{2, []any{"path", "plain.txt", "offset", 1}},
	}
	forEach(t, func(t *testing.T, fx fixture) {
		for name, data := range files {
			fx.put(t, name, data)
		}
		reused := make([]*Set, len(optionSets))
		for i, o := range optionSets {
			reused[i] = newSet(t, fx.b, o)
		}
		for _, c := range calls {
			s, opts := reused[c.opts], optionSets[c.opts]
			raw := args(t, c.args...)
			// Twice through the reused Set: after another file, and
			// after itself.
			for range 2 {
				got, err := s.Call(context.Background(), "read_file", raw)
				if err != nil {
					t.Fatalf("%s: %v", raw, err)
				}
				want, err := newSet(t, fx.b, opts).Call(context.Background(), "read_file", raw)
				if err != nil {
					t.Fatalf("%s on a new Set: %v", raw, err)
				}
				if got != want {
					t.Errorf("%s with %+v:\nreused Set %q\nnew Set    %q", raw, opts, got, want)
				}
			}
		}
	})
}
