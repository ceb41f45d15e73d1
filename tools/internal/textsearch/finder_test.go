package textsearch

import (
	"bytes"
	"strings"
	"testing"
)

func TestFinderRareByte(t *testing.T) {
	tests := []struct {
		lit  string
		rare byte
	}{
		{"parseManifest", 'M'},
		{"Config(", 'C'},
		{"needle", 'l'},
		{"x", 'x'},
		{"a\xffb", '\xff'},
	}
	for _, tt := range tests {
		if f := newFinder([]byte(tt.lit)); f.rare != tt.rare || tt.lit[f.at] != tt.rare {
			t.Errorf("newFinder(%q) looks for %q at %d, want %q", tt.lit, f.rare, f.at, tt.rare)
		}
	}
}

func TestFinderIndex(t *testing.T) {
	common := strings.Repeat("Mary Mops Many Mats; ", 200) // the rare byte everywhere
	tests := []struct {
		hay, lit string
	}{
		{"", "ab"},
		{"ab", "ab"},
		{"xab", "ab"},
		{"abx", "b"},
		{"the parseManifest call", "parseManifest"},
		{"parseManifes", "parseManifest"},
		{"Manifest parseManifest", "parseManifest"},
		{common + "parseManifest", "parseManifest"},
		{common + "parseManifes", "parseManifest"},
		{common, "Mx"},
		{"aaaa", "aaa"},
		{"", ""},
		{"abc", ""},
	}
	for _, tt := range tests {
		want := bytes.Index([]byte(tt.hay), []byte(tt.lit))
		if got := newFinder([]byte(tt.lit)).index([]byte(tt.hay)); got != want {
			t.Errorf("index(%.30q, %q) = %d, want %d", tt.hay, tt.lit, got, want)
		}
	}
}

// FuzzFinder checks the finder against bytes.Index.
func FuzzFinder(f *testing.F) {
	f.Add("the parseManifest call", "parseManifest")
	f.Add(strings.Repeat("MMM", 100)+"xM", "xM")
	f.Add("aaaa", "aa")
	f.Fuzz(func(t *testing.T, hay, lit string) {
		want := bytes.Index([]byte(hay), []byte(lit))
		if got := newFinder([]byte(lit)).index([]byte(hay)); got != want {
			t.Fatalf("index(%q, %q) = %d, want %d", hay, lit, got, want)
		}
	})
}
