package tools

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWithCommas(t *testing.T) {
	tests := map[int]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 12346: "12,346", 1234567: "1,234,567", -1234: "-1,234"}
	for n, want := range tests {
		if got := withCommas(n); got != want {
			t.Errorf("withCommas(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestDisplayText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"a\xffb", "a\uFFFDb"},
		{"\xe2\x82", "\uFFFD\uFFFD"},
		{"\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD"},
		{"€\xff€", "€\uFFFD€"},
	}
	for _, tt := range tests {
		if got := displayText([]byte(tt.in)); got != tt.want {
			t.Errorf("displayText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCountLines(t *testing.T) {
	tests := map[string]int{"": 0, "a": 1, "a\n": 1, "\n": 1, "a\nb": 2, "a\r\nb\r\n": 2, "a\rb": 1}
	for s, want := range tests {
		if got := countLines(s); got != want {
			t.Errorf("countLines(%q) = %d, want %d", s, got, want)
		}
	}
}

// FuzzRuneCounter checks that counting in pieces agrees with the display
// decoding of the whole, wherever the pieces split a sequence.
func FuzzRuneCounter(f *testing.F) {
	f.Add("h€llo wörld", 3)
	f.Add("\xe2\x82\xac\xe2", 1)
	f.Add("\xf0\x9f\x98", 2)
	f.Fuzz(func(t *testing.T, s string, step int) {
		if step <= 0 || step > 64 {
			step = 1 + len(s)%7
		}
		var c runeCounter
		for i := 0; i < len(s); i += step {
			c.write([]byte(s[i:min(i+step, len(s))]))
		}
		if want := utf8.RuneCountInString(displayText([]byte(s))); c.total() != want {
			t.Fatalf("%q in steps of %d: %d characters, want %d", s, step, c.total(), want)
		}
	})
}

func TestIsBinaryPrefix(t *testing.T) {
	at := func(i int) []byte {
		b := []byte(strings.Repeat("a", 9000))
		b[i] = 0
		return b
	}
	if !isBinaryPrefix(at(0)) || !isBinaryPrefix(at(8191)) || isBinaryPrefix(at(8192)) || isBinaryPrefix([]byte("text")) {
		t.Error("binary detection does not look at exactly the first 8192 bytes")
	}
}
