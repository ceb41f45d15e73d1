package conformance

import (
	"context"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/tools"
)

// ---------------------------------------------------------------------
// read_file

func (s *toolSuite) readFileTests() []testCase {
	return []testCase{
		{"HeaderAndNumbering", s.testReadHeader},
		{"Window", s.testReadWindow},
		{"Empty", s.testReadEmpty},
		{"OffsetPastEnd", s.testReadOffsetPastEnd},
		{"Binary", s.testReadBinary},
		{"CRLF", s.testReadCRLF},
		{"InvalidUTF8", s.testReadInvalidUTF8},
		{"MaxReadChars", s.testReadMaxChars},
		{"LongLine", s.testReadLongLine},
		{"NotAFile", s.testReadNotAFile},
		{"NoContentHashes", s.testReadNoHashes},
	}
}

func (s *toolSuite) testReadHeader(t *testing.T) {
	e := s.setup(t)
	e.put("a.txt", "Hello\nworld\n")
	e.put("b.txt", "one\ntwo")
	e.put("d/c.txt", "tab\there\n")
	ts := e.tools(tools.Options{})
	e.want(ts, "read_file", args{"path": "a.txt"}, readHeader("a.txt", 2, "Hello\nworld\n")+"     1\tHello\n     2\tworld\n")
	// A body not ending in "\n" gets one; the path is shown as written.
	e.want(ts, "read_file", args{"path": "./b.txt"}, readHeaderNoted("./b.txt", 2, "one\ntwo", "no line break at the end of the file")+numbered(1, "one", "two"))
	e.want(ts, "read_file", args{"path": "d/../d/c.txt"}, readHeader("d/../d/c.txt", 1, "tab\there\n")+numbered(1, "tab\there"))
}

func (s *toolSuite) testReadWindow(t *testing.T) {
	e := s.setup(t)
	var texts []string
	for i := 1; i <= 12; i++ {
		texts = append(texts, fmt.Sprintf("l%02d", i))
	}
	data := strings.Join(texts, "\n") + "\n"
	e.put("f.txt", data)
	h := readHeader("f.txt", 12, data)
	ts := e.tools(tools.Options{})
	tests := []struct {
		a    args
		want string
	}{
		{args{"path": "f.txt", "limit": 2}, h + numbered(1, texts[:2]...) + "... (10 more lines. Use offset=2 to continue reading.)\n"},
		{args{"path": "f.txt", "offset": 2, "limit": 2}, h + numbered(3, texts[2:4]...) + "... (8 more lines. Use offset=4 to continue reading.)\n"},
		{args{"path": "f.txt", "offset": 9, "limit": 2}, h + "    10\tl10\n    11\tl11\n... (1 more line. Use offset=11 to continue reading.)\n"},
		{args{"path": "f.txt", "offset": 11}, h + "    12\tl12\n"},
		{args{"path": "f.txt", "offset": 10, "limit": 5}, h + numbered(11, "l11", "l12")},
		{args{"path": "f.txt"}, h + numbered(1, texts...)},
	}
	for _, tt := range tests {
		e.want(ts, "read_file", tt.a, tt.want)
	}
	// MaxReadLines is the default limit.
	small := e.tools(tools.Options{MaxReadLines: 3})
	e.want(small, "read_file", args{"path": "f.txt"}, h+numbered(1, texts[:3]...)+"... (9 more lines. Use offset=3 to continue reading.)\n")
	e.want(small, "read_file", args{"path": "f.txt", "limit": 12}, h+numbered(1, texts...))
	// Bad windows name the parameter.
	e.wantRetry(ts, "read_file", args{"path": "f.txt", "offset": -1}, "Invalid offset -1: offset must be 0 or greater.")
	e.wantRetry(ts, "read_file", args{"path": "f.txt", "limit": 0}, "Invalid limit 0: limit must be 1 or greater.")
}

func (s *toolSuite) testReadEmpty(t *testing.T) {
	e := s.setup(t)
	e.put("e.txt", "")
	ts := e.tools(tools.Options{})
	want := "[e.txt | 0 lines | hash:" + emptyHash + "]\n(empty file)\n"
	e.want(ts, "read_file", args{"path": "e.txt"}, want)
	// offset >= N only fails when N > 0.
	e.want(ts, "read_file", args{"path": "e.txt", "offset": 3}, want)
}

func (s *toolSuite) testReadOffsetPastEnd(t *testing.T) {
	e := s.setup(t)
	e.put("f.txt", "a\nb\nc\nd\ne\n")
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "read_file", args{"path": "f.txt", "offset": 5}, "Offset 5 exceeds file length (5 lines).")
	e.wantRetry(ts, "read_file", args{"path": "f.txt", "offset": 99, "limit": 1}, "Offset 99 exceeds file length (5 lines).")
	e.want(ts, "read_file", args{"path": "f.txt", "offset": 4}, readHeader("f.txt", 5, "a\nb\nc\nd\ne\n")+"     5\te\n")
}

func (s *toolSuite) testReadBinary(t *testing.T) {
	e := s.setup(t)
	e.put("b.bin", "abc\x00def")
	// A NUL at index 8191 makes a file binary, at 8192 it does not.
	e.put("edge.bin", strings.Repeat("a", 8191)+"\x00")
	late := strings.Repeat("a", 8192) + "\x00\n"
	e.put("late.txt", late)
	ts := e.tools(tools.Options{})
	e.want(ts, "read_file", args{"path": "b.bin"}, "[Binary file: 7 bytes. It cannot be shown as text.]")
	e.want(ts, "read_file", args{"path": "edge.bin", "offset": 3}, "[Binary file: 8192 bytes. It cannot be shown as text.]")
	e.want(ts, "read_file", args{"path": "late.txt"}, readHeader("late.txt", 1, late)+numbered(1, strings.Repeat("a", 8192)+"\x00"))
}

// readHeaderNoted is read_file's header with the notes of what the lines
// cannot show.
func readHeaderNoted(path string, n int, data, notes string) string {
	return strings.TrimSuffix(readHeader(path, n, data), "]\n") + " | " + notes + "]\n"
}

func (s *toolSuite) testReadCRLF(t *testing.T) {
	e := s.setup(t)
	data := "a\r\nb\rc\r\n\fd\u2028e\n"
	e.put("c.txt", data)
	ts := e.tools(tools.Options{})
	// Lines split on "\n" only: the "\r" stays on its line, and a lone
	// "\r", "\f" or U+2028 is no line break.
	e.want(ts, "read_file", args{"path": "c.txt"}, readHeaderNoted("c.txt", 3, data, "mixed line endings: 2 CRLF, 1 LF")+numbered(1, "a\r", "b\rc\r", "\fd\u2028e"))
}

func (s *toolSuite) testReadInvalidUTF8(t *testing.T) {
	e := s.setup(t)
	data := "ok \xff\xfe end\ncaf\xe2\x82\nfine\n"
	e.put("l1.txt", data)
	ts := e.tools(tools.Options{})
	// One U+FFFD per invalid byte; the hash is of the raw bytes.
	e.want(ts, "read_file", args{"path": "l1.txt"}, readHeaderNoted("l1.txt", 3, data, "not valid UTF-8: 4 invalid bytes, each shown as U+FFFD (\ufffd)")+numbered(1, "ok \ufffd\ufffd end", "caf\ufffd\ufffd", "fine"))
}

func (s *toolSuite) testReadMaxChars(t *testing.T) {
	e := s.setup(t)
	var texts []string
	for i := 1; i <= 10; i++ {
		texts = append(texts, fmt.Sprintf("line%02d", i))
	}
	data := strings.Join(texts, "\n") + "\n"
	e.put("w.txt", data)
	h := readHeader("w.txt", 10, data)
	want3 := h + numbered(1, texts[:3]...) + "... (7 more lines. Use offset=3 to continue reading.)\n"
	want2 := h + numbered(1, texts[:2]...) + "... (8 more lines. Use offset=2 to continue reading.)\n"
	n3 := utf8.RuneCountInString(want3)
	// The whole result, header and hint included, fits the cap exactly,
	// and the window ends on a complete line.
	e.want(e.tools(tools.Options{MaxReadChars: n3}), "read_file", args{"path": "w.txt"}, want3)
	e.want(e.tools(tools.Options{MaxReadChars: n3 - 1}), "read_file", args{"path": "w.txt"}, want2)
	e.want(e.tools(tools.Options{MaxReadChars: n3}), "read_file", args{"path": "w.txt", "offset": 8}, h+numbered(9, texts[8:]...))
	e.want(e.tools(tools.Options{MaxReadChars: 100000}), "read_file", args{"path": "w.txt"}, h+numbered(1, texts...))
}

func (s *toolSuite) testReadLongLine(t *testing.T) {
	e := s.setup(t)
	data := "short\n" + strings.Repeat("y", 1233) + "\nend\n"
	e.put("long.txt", data)
	wide := strings.Repeat("é", 1000) + "\n"
	e.put("wide.txt", wide)
	ts := e.tools(tools.Options{MaxReadChars: 200})
	h := readHeader("long.txt", 3, data)
	e.want(ts, "read_file", args{"path": "long.txt"}, h+numbered(1, "short")+"... (2 more lines. Use offset=1 to continue reading.)\n")
	e.want(ts, "read_file", args{"path": "long.txt", "offset": 1},
		h+"... (Line 2 is 1,234 characters and does not fit the read window. Use offset=2 to skip it.)\n")
	e.want(ts, "read_file", args{"path": "long.txt", "offset": 2}, h+numbered(3, "end"))
	// Characters, not bytes, and the terminator counts.
	e.want(ts, "read_file", args{"path": "wide.txt"},
		readHeader("wide.txt", 1, wide)+"... (Line 1 is 1,001 characters and does not fit the read window. Use offset=1 to skip it.)\n")
}

func (s *toolSuite) testReadNotAFile(t *testing.T) {
	e := s.setup(t)
	e.put("a.txt", "a\n")
	e.mkdir("d")
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "read_file", args{"path": "d"}, "'d' is a directory, not a file.")
	e.wantRetry(ts, "read_file", args{"path": "nope.txt"}, "File not found: nope.txt")
	e.wantRetry(ts, "read_file", args{"path": "d/nope.txt"}, "File not found: d/nope.txt")
	e.wantRetry(ts, "read_file", args{"path": "a.txt/x"}, "File not found: a.txt/x")
}

func (s *toolSuite) testReadNoHashes(t *testing.T) {
	e := s.setup(t)
	e.put("a.txt", "Hello\n")
	ts := e.tools(tools.Options{NoContentHashes: true})
	e.want(ts, "read_file", args{"path": "a.txt"}, "[a.txt | 1 line]\n     1\tHello\n")
}

// ---------------------------------------------------------------------
// write_file

func (s *toolSuite) writeFileTests() []testCase {
	return []testCase{
		{"New", s.testWriteNew},
		{"Overwrite", s.testWriteOverwrite},
		{"Counts", s.testWriteCounts},
		{"ExpectedHash", s.testWriteExpectedHash},
		{"ParentMissing", s.testWriteParentMissing},
		{"ParentNotDirectory", s.testWriteParentNotDir},
		{"NotRegular", s.testWriteNotRegular},
		{"ModeKept", s.testWriteModeKept},
		{"NoContentHashes", s.testWriteNoHashes},
	}
}

func (s *toolSuite) testWriteNew(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.mkdir("d")
	ts := e.tools(tools.Options{})
	data := "héllo\nworld"
	e.want(ts, "write_file", args{"path": "n.txt", "content": data}, "Wrote 11 chars (2 lines) to n.txt. [hash:"+hash12(data)+"]")
	e.wantContent("n.txt", data)
	e.want(ts, "write_file", args{"path": "d/x.txt", "content": "x"}, "Wrote 1 char (1 line) to d/x.txt. [hash:"+hash12("x")+"]")
	e.wantContent("d/x.txt", "x")
}

func (s *toolSuite) testWriteOverwrite(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("n.txt", "old content\n")
	ts := e.tools(tools.Options{})
	e.want(ts, "write_file", args{"path": "n.txt", "content": "x\n"}, "Wrote 2 chars (1 line) to n.txt. [hash:"+hash12("x\n")+"]")
	e.wantContent("n.txt", "x\n")
}

func (s *toolSuite) testWriteCounts(t *testing.T) {
	e := s.setup(t)
	e.writable()
	ts := e.tools(tools.Options{})
	tests := []struct {
		content      string
		chars, lines int
	}{
		{"", 0, 0},
		{"a\r\nb\r\n", 6, 2},
		{"\n\n\n", 3, 3},
		{"no newline", 10, 1},
		{"tab\there\n", 9, 1},
		{"😀 ok\n", 5, 1},
		{"\ufeffbom\n", 5, 1},
	}
	for i, tt := range tests {
		name := fmt.Sprintf("c%d.txt", i)
		e.want(ts, "write_file", args{"path": name, "content": tt.content},
			fmt.Sprintf("Wrote %s (%s) to %s. [hash:%s]", counted(tt.chars, "char", "chars"), counted(tt.lines, "line", "lines"), name, hash12(tt.content)))
		// Written exactly as given: no newline added, removed or
		// translated.
		e.wantContent(name, tt.content)
	}
	if got := hash12(""); got != emptyHash {
		t.Fatalf("hash12 of nothing = %s, want %s", got, emptyHash)
	}
}

func (s *toolSuite) testWriteExpectedHash(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("n.txt", "v1\n")
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "write_file", args{"path": "n.txt", "content": "v2\n", "expected_hash": "000000000000"},
		"Conflict: file 'n.txt' has changed (expected hash:000000000000, got hash:"+hash12("v1\n")+"). Re-read the file and retry.")
	e.wantContent("n.txt", "v1\n")
	e.want(ts, "write_file", args{"path": "n.txt", "content": "v2\n", "expected_hash": hash12("v1\n")},
		"Wrote 3 chars (1 line) to n.txt. [hash:"+hash12("v2\n")+"]")
	e.wantContent("n.txt", "v2\n")
	// The hash as shown with its "hash:" prefix, and a longer prefix of
	// the full SHA-256, are accepted too.
	e.ok(ts, "write_file", args{"path": "n.txt", "content": "v3\n", "expected_hash": "hash:" + hash12("v2\n")})
	e.ok(ts, "write_file", args{"path": "n.txt", "content": "v4\n", "expected_hash": fullHash("v3\n")[:20]})
	e.wantContent("n.txt", "v4\n")
	// For a missing file expected_hash is ignored.
	e.want(ts, "write_file", args{"path": "new.txt", "content": "n", "expected_hash": "000000000000"},
		"Wrote 1 char (1 line) to new.txt. [hash:"+hash12("n")+"]")
}

func (s *toolSuite) testWriteParentMissing(t *testing.T) {
	e := s.setup(t)
	e.writable()
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "write_file", args{"path": "nodir/x.txt", "content": "x"},
		"Parent directory 'nodir' does not exist. Use create_directory first.")
	e.wantRetry(ts, "write_file", args{"path": "a/b/c.txt", "content": "x"},
		"Parent directory 'a/b' does not exist. Use create_directory first.")
	e.wantAbsent("nodir")
	e.wantAbsent("a")
}

func (s *toolSuite) testWriteParentNotDir(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("f", "file\n")
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "write_file", args{"path": "f/x.txt", "content": "x"}, "Path 'f/x.txt' has a parent that is not a directory.")
	e.wantRetry(ts, "write_file", args{"path": "f/g/x.txt", "content": "x"}, "Path 'f/g/x.txt' has a parent that is not a directory.")
	e.wantContent("f", "file\n")
}

func (s *toolSuite) testWriteNotRegular(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.mkdir("d")
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "write_file", args{"path": "d", "content": "x"}, "Path 'd' exists and is not a regular file.")
}

func (s *toolSuite) testWriteModeKept(t *testing.T) {
	e := s.setup(t)
	e.writable()
	if !e.caps.ModeBits {
		t.Skipf("skipped: backend does not store mode bits (Capabilities.ModeBits=false)")
	}
	ch, ok := s.h.(Chmoder)
	if !ok {
		t.Skipf("skipped: the harness has no conformance.Chmoder to set mode bits (Capabilities.ModeBits=true)")
	}
	e.put("run.sh", "#!/bin/sh\necho hi\n")
	ch.Chmod(e.ctx, t, e.b, e.store("run.sh"), 0o750)
	ts := e.tools(tools.Options{})
	e.ok(ts, "write_file", args{"path": "run.sh", "content": "#!/bin/sh\necho bye\n"})
	e.wantPerm("run.sh", 0o750)
	e.ok(ts, "edit_file", args{"path": "run.sh", "old_text": "bye", "new_text": "again"})
	e.wantPerm("run.sh", 0o750)
	e.wantContent("run.sh", "#!/bin/sh\necho again\n")
}

// wantPerm fails unless rel has the permission bits perm.
func (e *toolEnv) wantPerm(rel string, perm fs.FileMode) {
	e.t.Helper()
	fi, err := backend.Stat(e.ctx, e.b, e.store(rel))
	if err != nil {
		e.t.Fatalf("Stat(%q): %v", e.store(rel), err)
	}
	if got := fi.Mode.Perm(); got != perm {
		e.t.Errorf("mode of %q = %v, want %v", e.store(rel), got, perm)
	}
}

func (s *toolSuite) testWriteNoHashes(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("a.txt", "alpha\n")
	ts := e.tools(tools.Options{NoContentHashes: true})
	e.want(ts, "write_file", args{"path": "n.txt", "content": "x\n"}, "Wrote 2 chars (1 line) to n.txt.")
	e.want(ts, "edit_file", args{"path": "a.txt", "old_text": "alpha", "new_text": "beta"}, "Edited a.txt (line 1).")
	// expected_hash is not an argument without hashes.
	e.wantRetryMentions(ts, "write_file", args{"path": "n.txt", "content": "y", "expected_hash": hash12("x\n")}, "expected_hash")
	e.wantContent("n.txt", "x\n")
}

// ---------------------------------------------------------------------
// edit_file

func (s *toolSuite) editFileTests() []testCase {
	return []testCase{
		{"Single", s.testEditSingle},
		{"Replacements", s.testEditReplacements},
		{"NotFound", s.testEditNotFound},
		{"Ambiguous", s.testEditAmbiguous},
		{"EmptyOldText", s.testEditEmpty},
		{"WhitespaceOldText", s.testEditWhitespace},
		{"Arguments", s.testEditArguments},
		{"CRLFAndBOMKept", s.testEditCRLF},
		{"DollarLiteral", s.testEditDollar},
		{"BinaryRefused", s.testEditBinary},
		{"InvalidUTF8Refused", s.testEditInvalidUTF8},
		{"ExpectedHash", s.testEditExpectedHash},
		{"Missing", s.testEditMissing},
	}
}

// editBase is the file most edit scenarios start from.
const editBase = "alpha\nbeta\ngamma\nbeta\n"

func (s *toolSuite) testEditSingle(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("e.txt", editBase)
	e.put("x.txt", "no newline")
	ts := e.tools(tools.Options{})
	want := "ALPHA\nbeta\ngamma\nbeta\n"
	e.want(ts, "edit_file", args{"path": "e.txt", "old_text": "alpha", "new_text": "ALPHA"}, "Edited e.txt (line 1). [hash:"+hash12(want)+"]")
	e.wantContent("e.txt", want)
	e.want(ts, "edit_file", args{"path": "x.txt", "old_text": "newline", "new_text": "end"}, "Edited x.txt (line 1). [hash:"+hash12("no end")+"]")
	e.wantContent("x.txt", "no end")
}

func (s *toolSuite) testEditReplacements(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("e.txt", editBase)
	ts := e.tools(tools.Options{})
	// Applied in order, each to the result of the previous.
	want := "B\ngamma\nbeta\n"
	e.want(ts, "edit_file", args{"path": "e.txt", "replacements": []args{
		{"old_text": "alpha", "new_text": "A"},
		{"old_text": "A\nbeta", "new_text": "B"},
	}}, "Edited e.txt (line 1). [hash:"+hash12(want)+"]")
	e.wantContent("e.txt", want)
}

func (s *toolSuite) testEditNotFound(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("e.txt", editBase)
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "edit_file", args{"path": "e.txt", "old_text": "delta", "new_text": "x"},
		"old_text not found in e.txt. No changes were written.")
	// A list of one is labelled like a single pair.
	e.wantRetry(ts, "edit_file", args{"path": "e.txt", "replacements": []args{{"old_text": "delta", "new_text": "x"}}},
		"old_text not found in e.txt. No changes were written.")
	// All or nothing: the first replacement matched, and nothing is
	// written.
	e.wantRetry(ts, "edit_file", args{"path": "e.txt", "replacements": []args{
		{"old_text": "alpha", "new_text": "A"},
		{"old_text": "delta", "new_text": "x"},
	}}, "replacement 2 not found in e.txt. No changes were written.")
	e.wantContent("e.txt", editBase)
}

func (s *toolSuite) testEditAmbiguous(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("e.txt", editBase)
	e.put("one.txt", "ab ab\n")
	e.put("many.txt", strings.Repeat("x\n", 12))
	ts := e.tools(tools.Options{})
	const tail = " Include more surrounding context to make the match unique. No changes were written."
	e.wantRetry(ts, "edit_file", args{"path": "e.txt", "old_text": "beta", "new_text": "x"},
		"old_text found 2 times in e.txt (lines 2, 4)."+tail)
	e.wantRetry(ts, "edit_file", args{"path": "one.txt", "old_text": "ab", "new_text": "x"},
		"old_text found 2 times in one.txt (line 1)."+tail)
	e.wantRetry(ts, "edit_file", args{"path": "many.txt", "old_text": "x", "new_text": "y"},
		"old_text found 12 times in many.txt (lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, ...)."+tail)
	e.wantRetry(ts, "edit_file", args{"path": "e.txt", "replacements": []args{
		{"old_text": "alpha", "new_text": "A"},
		{"old_text": "beta", "new_text": "B"},
	}}, "replacement 2 found 2 times in e.txt (lines 2, 4)."+tail)
	// Overlapping matches count: "aa" occurs twice in "aaa".
	e.put("aaa.txt", "x\naaa\n")
	e.wantRetry(ts, "edit_file", args{"path": "aaa.txt", "old_text": "aa", "new_text": "b"},
		"old_text found 2 times in aaa.txt (line 2)."+tail)
	e.wantContent("e.txt", editBase)
	e.wantContent("one.txt", "ab ab\n")
}

func (s *toolSuite) testEditEmpty(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("e.txt", editBase)
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "edit_file", args{"path": "e.txt", "old_text": "", "new_text": "x"},
		"old_text is empty; old_text must be the exact text to replace.")
	e.wantRetry(ts, "edit_file", args{"path": "e.txt", "replacements": []args{
		{"old_text": "alpha", "new_text": "A"},
		{"old_text": "", "new_text": "x"},
	}}, "replacement 2 is empty; old_text must be the exact text to replace.")
	e.wantContent("e.txt", editBase)
}

func (s *toolSuite) testEditWhitespace(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("e.txt", "a \n\tb\n")
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "edit_file", args{"path": "e.txt", "old_text": " \n\t", "new_text": "x"},
		"old_text is only whitespace; include the surrounding text so the match is unambiguous.")
	e.wantRetry(ts, "edit_file", args{"path": "e.txt", "replacements": []args{
		{"old_text": "a", "new_text": "A"},
		{"old_text": "\n", "new_text": ""},
	}}, "replacement 2 is only whitespace; include the surrounding text so the match is unambiguous.")
	e.wantContent("e.txt", "a \n\tb\n")
}

func (s *toolSuite) testEditArguments(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("e.txt", editBase)
	ts := e.tools(tools.Options{})
	const none = "Provide old_text and new_text, or a non-empty replacements list."
	const both = "Provide either old_text and new_text or a non-empty replacements list, not both."
	e.wantRetry(ts, "edit_file", args{"path": "e.txt"}, none)
	e.wantRetry(ts, "edit_file", args{"path": "e.txt", "replacements": []args{}}, none)
	e.wantRetry(ts, "edit_file", args{"path": "e.txt", "old_text": "alpha"}, none)
	e.wantRetry(ts, "edit_file", args{"path": "e.txt", "old_text": "alpha", "new_text": "A",
		"replacements": []args{{"old_text": "beta", "new_text": "B"}}}, both)
	e.wantContent("e.txt", editBase)
}

func (s *toolSuite) testEditCRLF(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("w.txt", "\ufeffone\r\ntwo\r\n\tthree\r\n")
	ts := e.tools(tools.Options{})
	e.ok(ts, "edit_file", args{"path": "w.txt", "old_text": "two", "new_text": "2"})
	e.wantContent("w.txt", "\ufeffone\r\n2\r\n\tthree\r\n")
	e.ok(ts, "edit_file", args{"path": "w.txt", "old_text": "one\r\n2", "new_text": "1\r\n2"})
	e.wantContent("w.txt", "\ufeff1\r\n2\r\n\tthree\r\n")
	// An old_text with "\n" line ends matches a CRLF file's "\r\n", and
	// new_text gets the file's line ends.
	e.ok(ts, "edit_file", args{"path": "w.txt", "old_text": "2\n\tthree", "new_text": "two\n\t3"})
	e.wantContent("w.txt", "\ufeff1\r\ntwo\r\n\t3\r\n")
}

func (s *toolSuite) testEditDollar(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("d.txt", "price: X\n")
	ts := e.tools(tools.Options{})
	e.ok(ts, "edit_file", args{"path": "d.txt", "old_text": "X", "new_text": "$1 ${1} $$ $0 \\1"})
	e.wantContent("d.txt", "price: $1 ${1} $$ $0 \\1\n")
}

func (s *toolSuite) testEditBinary(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("b.bin", "a\x00b")
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "edit_file", args{"path": "b.bin", "old_text": "a", "new_text": "x"},
		"b.bin is a binary file; edit_file only edits text files.")
	e.wantContent("b.bin", "a\x00b")
}

func (s *toolSuite) testEditInvalidUTF8(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("l1.txt", "abc\xffdef\n")
	ts := e.tools(tools.Options{})
	// The contract fixes the kind of error and that it names the byte
	// offset, not the wording.
	msg := e.retry(ts, "edit_file", args{"path": "l1.txt", "old_text": "abc", "new_text": "x"})
	if msg != "" && (!strings.Contains(msg, "l1.txt") || !regexp.MustCompile(`\b3\b`).MatchString(msg)) {
		t.Errorf("edit of invalid UTF-8: message %q does not name the file and the byte offset 3", msg)
	}
	e.wantContent("l1.txt", "abc\xffdef\n")
}

func (s *toolSuite) testEditExpectedHash(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("e.txt", editBase)
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "edit_file", args{"path": "e.txt", "old_text": "alpha", "new_text": "A", "expected_hash": "000000000000"},
		"Conflict: file 'e.txt' has changed (expected hash:000000000000, got hash:"+hash12(editBase)+"). Re-read the file and retry.")
	e.wantContent("e.txt", editBase)
	e.ok(ts, "edit_file", args{"path": "e.txt", "old_text": "alpha", "new_text": "A", "expected_hash": hash12(editBase)})
	e.wantContent("e.txt", "A\nbeta\ngamma\nbeta\n")
}

func (s *toolSuite) testEditMissing(t *testing.T) {
	e := s.setup(t)
	e.writable()
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "edit_file", args{"path": "nope.txt", "old_text": "a", "new_text": "b"}, "File not found: nope.txt")
	e.wantAbsent("nope.txt")
}

// ---------------------------------------------------------------------
// list_directory

func (s *toolSuite) listDirectoryTests() []testCase {
	return []testCase{
		{"Sorted", s.testListSorted},
		{"Empty", s.testListEmpty},
		{"Truncated", s.testListTruncated},
		{"NotADirectory", s.testListNotDir},
	}
}

// arrangeListing stores the tree the listing scenarios share.
func (e *toolEnv) arrangeListing() {
	e.t.Helper()
	e.putAll(map[string]string{"b.txt": "bbb", "a.txt": "a", "B.md": "bb", "d/x": "x"})
	e.mkdir("c")
}

func (s *toolSuite) testListSorted(t *testing.T) {
	e := s.setup(t)
	e.arrangeListing()
	ts := e.tools(tools.Options{})
	want := lines(e.fileLine("B.md", 2), e.fileLine("a.txt", 1), e.fileLine("b.txt", 3), e.shown("c")+"/", e.shown("d")+"/")
	e.want(ts, "list_directory", args{"path": "."}, want)
	e.want(ts, "list_directory", nil, want)
	e.want(ts, "list_directory", args{"path": "d"}, e.fileLine("d/x", 1))
}

func (s *toolSuite) testListEmpty(t *testing.T) {
	e := s.setup(t)
	e.arrangeListing()
	ts := e.tools(tools.Options{})
	e.want(ts, "list_directory", args{"path": "c"}, "(empty directory)")
}

func (s *toolSuite) testListTruncated(t *testing.T) {
	e := s.setup(t)
	e.arrangeListing()
	all := []string{e.fileLine("B.md", 2), e.fileLine("a.txt", 1), e.fileLine("b.txt", 3), e.shown("c") + "/", e.shown("d") + "/"}
	e.want(e.tools(tools.Options{MaxListResults: 2}), "list_directory", args{"path": "."}, lines(all[0], all[1], "[... truncated at 2 entries]"))
	// The marker appears only when an entry was actually dropped.
	e.want(e.tools(tools.Options{MaxListResults: 5}), "list_directory", args{"path": "."}, lines(all...))
}

func (s *toolSuite) testListNotDir(t *testing.T) {
	e := s.setup(t)
	e.arrangeListing()
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "list_directory", args{"path": "a.txt"}, "Not a directory: a.txt")
	// Only the kind is checked: docs/tool-contract.md section 10 gives
	// "Path not found: <p>" for a missing walk root, list_directory says
	// "Directory not found: <p>"; pin the text once the two agree.
	e.retry(ts, "list_directory", args{"path": "nope"})
}

// ---------------------------------------------------------------------
// create_directory

func (s *toolSuite) createDirectoryTests() []testCase {
	return []testCase{
		{"NewAndExisting", s.testMkdirNew},
		{"CollidesWithFile", s.testMkdirFile},
	}
}

func (s *toolSuite) testMkdirNew(t *testing.T) {
	e := s.setup(t)
	e.writable()
	var events []tools.Event
	ts := e.tools(tools.Options{OnEvent: func(_ context.Context, ev tools.Event) { events = append(events, ev) }})
	e.want(ts, "create_directory", args{"path": "n/sub"}, "Created directory: n/sub")
	if fi, err := backend.Stat(e.ctx, e.b, e.store("n/sub")); err != nil || !fi.IsDir() {
		t.Errorf("after create_directory: Stat(%q) = %+v, %v; want a directory", e.store("n/sub"), fi, err)
	}
	e.want(ts, "list_directory", args{"path": "n"}, e.shown("n/sub")+"/")
	events = events[:0:0]
	// An existing directory: the same text and no event.
	e.want(ts, "create_directory", args{"path": "n/sub"}, "Created directory: n/sub")
	e.want(ts, "create_directory", args{"path": "n"}, "Created directory: n")
	if len(events) != 0 {
		t.Errorf("create_directory of existing directories emitted %#v; want nothing", events)
	}
}

func (s *toolSuite) testMkdirFile(t *testing.T) {
	e := s.setup(t)
	e.writable()
	e.put("f", "file\n")
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "create_directory", args{"path": "f"}, "Path 'f' exists and is not a directory.")
	e.retry(ts, "create_directory", args{"path": "f/sub"})
	e.wantContent("f", "file\n")
}

// ---------------------------------------------------------------------
// file_info

func (s *toolSuite) fileInfoTests() []testCase {
	return []testCase{
		{"File", s.testInfoFile},
		{"Directory", s.testInfoDir},
		{"Missing", s.testInfoMissing},
	}
}

func (s *toolSuite) testInfoFile(t *testing.T) {
	e := s.setup(t)
	e.putAll(map[string]string{"a.txt": "Hello\nworld\n", "b.bin": "a\x00b", "e.txt": ""})
	ts := e.tools(tools.Options{})
	text := lines("path: a.txt", "type: file", "size: 12 bytes", "binary: false", "lines: 2", "hash: "+hash12("Hello\nworld\n"))
	e.want(ts, "file_info", args{"path": "a.txt"}, text)
	e.want(ts, "file_info", args{"path": "./a.txt"}, strings.Replace(text, "path: a.txt", "path: ./a.txt", 1))
	e.want(ts, "file_info", args{"path": "b.bin"}, lines("path: b.bin", "type: file", "size: 3 bytes", "binary: true"))
	e.want(ts, "file_info", args{"path": "e.txt"}, lines("path: e.txt", "type: file", "size: 0 bytes", "binary: false", "lines: 0", "hash: "+emptyHash))
	// file_info always prints the hash of a text file, even with hashes
	// off.
	e.want(e.tools(tools.Options{NoContentHashes: true}), "file_info", args{"path": "a.txt"}, text)
}

func (s *toolSuite) testInfoDir(t *testing.T) {
	e := s.setup(t)
	e.put("d/x", "x")
	ts := e.tools(tools.Options{})
	e.wantInfoDir(ts, "d", "d", "path: d\ntype: directory")
	e.wantInfoDir(ts, ".", ".", "path: .\ntype: directory")
}

// wantInfoDir checks file_info of the directory path (leading to the
// directory target, relative to Dir): the lines head, the size line, the
// lines more. A directory's size is whatever the storage reports; where
// the backend's own Stat has none, the line reads "size: unknown", as
// list_directory's "(size unknown)" does.
func (e *toolEnv) wantInfoDir(ts *tools.Set, path, target, head string, more ...string) {
	e.t.Helper()
	fi, err := backend.Stat(e.ctx, e.b, e.store(target))
	if err != nil {
		e.t.Fatalf("Stat(%q): %v", e.store(target), err)
	}
	size := fmt.Sprintf("size: %d bytes", fi.Size)
	if fi.Size < 0 {
		e.t.Logf("backend's Stat(%q) has no size: expecting \"size: unknown\"", e.store(target))
		size = "size: unknown"
	}
	e.want(ts, "file_info", args{"path": path}, lines(append([]string{head, size}, more...)...))
}

func (s *toolSuite) testInfoMissing(t *testing.T) {
	e := s.setup(t)
	e.put("f", "x")
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "file_info", args{"path": "nope"}, "Path not found: nope")
	e.wantRetry(ts, "file_info", args{"path": "d/nope"}, "Path not found: d/nope")
	e.wantRetry(ts, "file_info", args{"path": "f/x"}, "Path not found: f/x")
}
