package tenant

import (
	"errors"
	"strings"
	"testing"
)

func TestParseID(t *testing.T) {
	cases := []struct {
		in string
		ok bool
	}{
		{"t1", true},
		{"t10", true},
		{"Org_42.eu-west", true},
		{"a", true},
		{"a..b", true},
		{strings.Repeat("x", MaxIDLen), true},
		{"", false},
		{".", false},
		{"..", false},
		{"../t2", false},
		{".hidden", false},
		{"t1/x", false},
		{"/t1", false},
		{"t1/", false},
		{`t1\x`, false},
		{"C:", false},
		{"t1\x00", false},
		{"t1\n", false},
		{"t1\x7f", false},
		{"t 1", false},
		{"t1%2f..", false},
		{"alice@example.com", false},
		{"t1?x", false},
		{"t1#x", false},
		{"{tenant}", false},
		{"tënant", false},
		{strings.Repeat("x", MaxIDLen+1), false},
	}
	for _, tc := range cases {
		id, err := ParseID(tc.in)
		if tc.ok != (err == nil) {
			t.Errorf("ParseID(%q) = %q, %v; want ok %v", tc.in, id, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidID) {
			t.Errorf("ParseID(%q): %v does not match ErrInvalidID", tc.in, err)
		}
		if err == nil && string(id) != tc.in {
			t.Errorf("ParseID(%q) = %q", tc.in, id)
		}
	}
}

// FuzzParseID checks that every id ParseID accepts is one path component
// that no storage reads as anything but a plain name.
func FuzzParseID(f *testing.F) {
	for _, s := range []string{"t1", "../t2", "t1/x", "", "a.b", "\x00", ".."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseID(s)
		if err != nil {
			return
		}
		if id == "" || len(id) > MaxIDLen || strings.HasPrefix(string(id), ".") ||
			strings.ContainsAny(string(id), "/\\:@%?#{} \x00") {
			t.Fatalf("ParseID accepted %q", s)
		}
		for _, r := range string(id) {
			if r < 0x21 || r > 0x7e {
				t.Fatalf("ParseID accepted %q with %U", s, r)
			}
		}
	})
}
