package conformance

import (
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

// awkwardNames are single components every backend must store, list and
// read back exactly as written.
var awkwardNames = []struct{ label, name string }{
	{"Space", "with space"},
	{"LeadingSpace", " leading"},
	{"TrailingSpace", "trailing "},
	{"LeadingDash", "-rf"},
	{"DoubleDash", "--help"},
	{"Punctuation", "a#b%c?d*e[f]g~h"},
	{"Brackets", "[abc]"},
	{"QuestionStar", "?*"},
	{"Hash", "#hash"},
	{"Percent", "%41%2F"},
	{"Colon", "note:1"},
	{"DriveLikeBelowRoot", "sub/c:d"},
	{"Hidden", ".hidden"},
	{"ThreeDots", "..."},
	{"DotDotPrefix", "..x"},
	{"Unicode", "\u00fcn\u00efc\u00f6d\u00e9 \u65e5\u672c \U0001f600"},
	{"Quotes", `"quoted" 'single'`},
	{"Plus", "a+b=c&d"},
}

func (s *suite) nameTests() []testCase {
	var tests []testCase
	for _, n := range awkwardNames {
		tests = append(tests, testCase{n.label, func(t *testing.T) { s.testName(t, n.name) }})
	}
	return append(tests,
		testCase{"NestedAwkward", func(t *testing.T) { s.testName(t, "dir with space/-sub/[x]#y/f ile.txt") }},
		testCase{"NFCAndNFDAreDistinct", s.testNFCNFD},
		testCase{"MaxLengthComponent", s.testLongName},
		testCase{"MaxLengthComponentMultiByte", s.testLongNameMultiByte},
		testCase{"TooLongComponent", s.testTooLongName},
	)
}

// testName stores a file under name and checks it reads back, lists and
// stats under exactly that name.
func (s *suite) testName(t *testing.T, name string) {
	e := s.setup(t)
	e.requireArrange()
	content := []byte("content of " + name)
	e.put(name, content)
	e.wantContent(e.p(name), content)
	dir, base := backend.Split(e.p(name))
	e.wantNames(dir, base)
	if fi := e.stat(e.p(name)); fi.Name != base || !fi.IsRegular() {
		t.Errorf("Stat(%q) = %+v, want a regular file named %q", e.p(name), fi, base)
	}
	// The working directory lists only the first component.
	first, _, _ := strings.Cut(name, "/")
	if first != name {
		e.wantNames(e.p("."), first)
	}
}

// testNFCNFD checks that two spellings of "é" that differ only in Unicode
// normalization are two different files, as on POSIX and S3.
func (s *suite) testNFCNFD(t *testing.T) {
	e := s.setup(t)
	e.requireArrange()
	nfc, nfd := "caf\u00e9", "cafe\u0301"
	e.put(nfc, []byte("composed"))
	e.put(nfd, []byte("decomposed"))
	e.wantContent(e.p(nfc), []byte("composed"))
	e.wantContent(e.p(nfd), []byte("decomposed"))
	e.wantNames(e.p("."), nfc, nfd)
}

// requireNameBytes skips the test unless the backend promises names of
// at least n bytes.
func (e *env) requireNameBytes(n int) {
	e.t.Helper()
	if e.caps.MaxNameBytes < n {
		e.t.Skipf("skipped: backend does not promise %d-byte names (Capabilities.MaxNameBytes=%d)", n, e.caps.MaxNameBytes)
	}
}

// testLongName stores a 255-byte component; a backend that writes through
// a temporary file with a longer name fails here.
func (s *suite) testLongName(t *testing.T) {
	e := s.setup(t)
	e.requireNameBytes(255)
	e.requireArrange()
	name := strings.Repeat("n", 251) + ".txt"
	e.put(name, []byte("long"))
	e.wantContent(e.p(name), []byte("long"))
	e.wantNames(e.p("."), name)
	e.wantRaw(e.p(name))
}

// testLongNameMultiByte stores a 255-byte component made mostly of
// two-byte characters, so a backend counting characters instead of bytes
// is caught.
func (s *suite) testLongNameMultiByte(t *testing.T) {
	e := s.setup(t)
	e.requireNameBytes(255)
	e.requireArrange()
	name := strings.Repeat("\u00e9", 127) + "x"
	if len(name) != 255 {
		panic(fmt.Sprintf("name is %d bytes", len(name)))
	}
	e.put(name, []byte("long"))
	e.wantContent(e.p(name), []byte("long"))
	e.wantNames(e.p("."), name)
}

// testTooLongName writes a component longer than MaxNameBytes. Refusing
// it is expected, with an invalid-name error and nothing left behind; a
// backend that stores it anyway (a namespace whose MaxNameBytes is the
// smallest of its mounts' limits, say) must then read it back intact.
func (s *suite) testTooLongName(t *testing.T) {
	e := s.setup(t)
	if e.caps.MaxNameBytes == 0 {
		t.Skipf("skipped: backend declares no name length limit (Capabilities.MaxNameBytes=0)")
	}
	w := e.writer()
	name := e.p(strings.Repeat("x", e.caps.MaxNameBytes+1))
	err := writeOnce(e.ctx, w, name, []byte("x"), backend.WriteOptions{})
	if err == nil {
		t.Logf("a %d-byte name was stored although Capabilities.MaxNameBytes=%d", e.caps.MaxNameBytes+1, e.caps.MaxNameBytes)
		e.wantContent(name, []byte("x"))
		e.wantRaw(name)
		return
	}
	wantErr(t, fmt.Sprintf("writing a %d-byte name", e.caps.MaxNameBytes+1), err, backend.ErrNameTooLong, fs.ErrInvalid)
	if names := e.listOrEmpty(e.p(".")); len(names) != 0 {
		t.Errorf("after the refused write List(%q) = %q, want nothing", e.p("."), names)
	}
	e.wantRaw()
}
