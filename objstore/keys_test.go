package objstore

import (
	"errors"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

func TestCheckPrefix(t *testing.T) {
	l := Limits{MaxKeyBytes: 16, MaxNameBytes: 4, MaxSegments: 3}
	tests := []struct {
		prefix, want, err string
	}{
		{"", "", ""},
		{"t", "t/", ""},
		{"t/", "t/", ""},
		{"t/u", "t/u/", ""},
		{"long-component", "long-component/", ""}, // names are limited, not the prefix's segments
		{".", "", "not a canonical"},
		{"./", "", "not a canonical"},
		{"/t", "", "not a canonical"},
		{"t//", "", "not a canonical"},
		{"a/../b", "", "not a canonical"},
		{"~t", "", "not a canonical"},
		{"a\\b", "", "not a canonical"},
		{"a\x00", "", "not a canonical"},
		{strings.Repeat("p", 14), strings.Repeat("p", 14) + "/", ""},
		{strings.Repeat("p", 15), "", "too long"},
		{"a/b/c", "", "too long"}, // a key below it would have 4 segments
	}
	for _, tt := range tests {
		got, err := CheckPrefix(tt.prefix, l)
		if got != tt.want || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("CheckPrefix(%q) = %q, %v; want %q, error with %q", tt.prefix, got, err, tt.want, tt.err)
		}
	}
}

func TestKeys(t *testing.T) {
	k, err := NewKeys("t/", Limits{MaxKeyBytes: 9, MaxNameBytes: 3, MaxSegments: 3})
	if err != nil {
		t.Fatal(err)
	}
	if k.Key(".") != "t/" || k.Key("a/b") != "t/a/b" || k.DirPrefix(".") != "t/" || k.DirPrefix("a") != "t/a/" {
		t.Errorf("Key/DirPrefix of %q wrong", k.Prefix())
	}
	if k.Path("t/a/") != "a" || k.Path("t/a/b") != "a/b" {
		t.Errorf("Path wrong")
	}
	for name, want := range map[string]error{
		".":         nil,
		"abc":       nil,
		"abcd":      backend.ErrNameTooLong, // component
		"a/b":       nil,
		"a/b/c":     backend.ErrNameTooLong, // segments
		"abc/abc":   backend.ErrNameTooLong, // key and marker past 9 bytes
		"a/../b":    backend.ErrInvalidPath,
		"~x":        backend.ErrInvalidPath,
		"a//b":      backend.ErrInvalidPath,
		"":          backend.ErrInvalidPath,
		"trailing/": backend.ErrInvalidPath,
		"C:":        backend.ErrInvalidPath,
		"back\\sl":  backend.ErrInvalidPath,
		"/abs":      backend.ErrInvalidPath,
		"nul\x00":   backend.ErrInvalidPath,
	} {
		if err := k.Check("op", name); !errors.Is(err, want) || (want == nil) != (err == nil) {
			t.Errorf("Check(%q) = %v, want %v", name, err, want)
		}
		if got := k.Valid(name); got != (want == nil && name != ".") {
			t.Errorf("Valid(%q) = %v", name, got)
		}
	}
}
