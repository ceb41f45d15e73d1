package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fencefs/fencefs/backend"
)

// maxMatchLines is how many line numbers an ambiguous match lists.
const maxMatchLines = 10

func (s *Set) editFileTool() *Tool {
	desc := "Edit a text file by exact string replacement: old_text must occur exactly once and is replaced by new_text, " +
		"literally (no regular expressions, no $ expansion). For several changes pass replacements, a list of " +
		"{old_text, new_text} applied in order, each to the result of the previous; nothing is written unless every one " +
		"matches. Include enough surrounding lines to make each old_text unique. Line endings, tabs and a byte order " +
		"mark are kept."
	if !s.opts.NoContentHashes {
		desc += " Pass expected_hash from your last read to refuse the edit if the file changed since."
	}
	if s.opts.RequireRead {
		desc += " The file must be read with read_file before it is edited."
	}
	return &Tool{
		Name:        nameEditFile,
		Description: desc,
		InputSchema: objectSchema([]string{"path"}, s.withHash(
			prop{"path", `{"type":"string","description":"The file to edit, relative to the working directory, or starting with '/'."}`},
			prop{"old_text", `{"type":"string","description":"The exact text to replace; it must occur exactly once in the file."}`},
			prop{"new_text", `{"type":"string","description":"The text to put in its place."}`},
			prop{"replacements", `{"type":"array","description":"Several replacements, applied in order; use instead of old_text and new_text.","items":{"type":"object","properties":{"old_text":{"type":"string"},"new_text":{"type":"string"}},"required":["old_text","new_text"],"additionalProperties":false}}`},
		)...),
		Annotations: Annotations{Title: "Edit file", Destructive: true},
		call:        s.editFile,
	}
}

func (s *Set) editFile(ctx context.Context, raw json.RawMessage) (string, error) {
	var p string
	var oldText, newText, expected *string
	var reps *[]replacement
	args := append([]arg{{"path", &p, true}, {"old_text", &oldText, false}, {"new_text", &newText, false},
		{"replacements", &reps, false}}, s.hashArg(&expected)...)
	if err := decodeArgs(raw, args...); err != nil {
		return "", err
	}
	edits, err := editList(oldText, newText, reps)
	if err != nil {
		return "", err
	}
	t, err := s.resolve(ctx, nameEditFile, p, levelWrite)
	if err != nil {
		return "", err
	}
	unlock, err := s.locks.lock(ctx, t.resolved)
	if err != nil {
		return "", err
	}
	defer unlock()
	old, err := s.loadEditable(ctx, t)
	if err != nil {
		return "", err
	}
	if i := invalidUTF8(old.data); i >= 0 {
		return "", retryf("%s is not valid UTF-8 (invalid byte at offset %d); edit_file only edits UTF-8 text.", p, i)
	}
	if expected != nil {
		if err := checkExpected(p, *expected, old.hash); err != nil {
			return "", err
		}
	}
	if err := s.checkRead(t, old.hash); err != nil {
		return "", err
	}
	text, err := applyEdits(string(old.data), edits, p)
	if err != nil {
		return "", err
	}
	c := &change{t: t, op: OpEdit, old: old, oldText: string(old.data), oldOK: true, data: []byte(text)}
	diff, truncated, cancelled, err := s.apply(ctx, c, "edited")
	if err != nil || cancelled != "" {
		return cancelled, err
	}
	h := hashBytes(c.data)
	s.guard.remember(t.resolved, h)
	s.emit(ctx, FileEdited{FileWritten: FileWritten{Path: s.canonical(t.resolved), ContentHash: h}, Diff: diff, Truncated: truncated})
	res := fmt.Sprintf("Edited %s.", p)
	if !s.opts.NoContentHashes {
		res += fmt.Sprintf(" [hash:%s]", shortHash(h))
	}
	return res, nil
}

// loadEditable reads the whole existing regular text file t for
// edit_file. A directory, a missing file and a special file are refused
// without opening anything; a binary file from its first 8192 bytes, and
// a file larger than the edit limit before it is read (or, where storage
// reported less, as soon as more is read), so memory stays bounded by
// the limit whatever the storage serves.
func (s *Set) loadEditable(ctx context.Context, t target) (existing, error) {
	info, err := backend.Stat(ctx, s.b, t.resolved)
	switch {
	case err != nil:
		return existing{}, s.fileErr(err, t.display)
	case info.IsDir():
		return existing{}, s.fileErr(backend.ErrIsDir, t.display)
	case !info.IsRegular():
		return existing{}, s.fileErr(backend.ErrNotRegular, t.display)
	}
	r, err := s.b.OpenRead(ctx, t.resolved)
	if err != nil {
		return existing{}, s.fileErr(err, t.display)
	}
	defer r.Close()
	src := contextReader{ctx, r}
	head := make([]byte, binaryPrefix)
	n, err := io.ReadFull(src, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return existing{}, s.storageErr(err, t.display)
	}
	head = head[:n]
	if isBinaryPrefix(head) {
		return existing{}, retryf("%s is a binary file; edit_file only edits text files.", t.display)
	}
	if info.Size > s.maxEdit {
		return existing{}, s.tooBigToEdit(t.display, strconv.FormatInt(info.Size, 10))
	}
	data, err := readUpTo(src, head, info.Size, s.maxEdit)
	if err != nil {
		return existing{}, s.storageErr(err, t.display)
	}
	if int64(len(data)) > s.maxEdit {
		return existing{}, s.tooBigToEdit(t.display, fmt.Sprintf("more than %d", s.maxEdit))
	}
	return existing{exists: true, data: data, hash: hashBytes(data)}, nil
}

// tooBigToEdit refuses a file above the edit limit; size says how large
// it is.
func (s *Set) tooBigToEdit(display, size string) error {
	return retryf("'%s' is %s bytes; edit_file edits files up to %d bytes. Use write_file to replace it.", display, size, s.maxEdit)
}

// readUpTo returns head followed by the rest of r, reading at most one
// byte more than limit in all, so a longer stream is recognised without
// being held. sizeHint, the size storage reported, sizes the buffer.
func readUpTo(r io.Reader, head []byte, sizeHint, limit int64) ([]byte, error) {
	var buf bytes.Buffer
	// MinRead more than the file, so reading up to its end never grows
	// the buffer.
	buf.Grow(int(min(max(sizeHint, int64(len(head))), limit)) + bytes.MinRead)
	buf.Write(head)
	if len(head) < binaryPrefix {
		// ReadFull stopped at the end of the file.
		return buf.Bytes(), nil
	}
	if _, err := io.CopyN(&buf, r, limit+1-int64(len(head))); err != nil && err != io.EOF {
		return nil, err
	}
	return buf.Bytes(), nil
}

// editList turns edit_file's arguments into the list of replacements.
func editList(oldText, newText *string, reps *[]replacement) ([]replacement, error) {
	pair := oldText != nil || newText != nil
	list := reps != nil && len(*reps) > 0
	switch {
	case pair && list:
		return nil, retryf("Provide either old_text and new_text or a non-empty replacements list, not both.")
	case list:
		return *reps, nil
	case oldText != nil && newText != nil:
		return []replacement{{OldText: *oldText, NewText: *newText}}, nil
	}
	return nil, retryf("Provide old_text and new_text, or a non-empty replacements list.")
}

// applyEdits applies edits in order to text, each to the result of the
// previous; every old text must occur exactly once. display names the
// file in the messages. It changes nothing but the matched text: line
// endings, tabs and a byte order mark elsewhere survive byte for byte.
func applyEdits(text string, edits []replacement, display string) (string, error) {
	for i, e := range edits {
		label := "old_text"
		if len(edits) > 1 {
			label = fmt.Sprintf("replacement %d", i+1)
		}
		var err error
		if text, err = applyEdit(text, e, label, display); err != nil {
			return "", err
		}
	}
	return text, nil
}

// applyEdit applies one replacement.
func applyEdit(text string, e replacement, label, display string) (string, error) {
	if e.OldText == "" {
		return "", retryf("%s is empty; old_text must be the exact text to replace.", label)
	}
	if strings.TrimFunc(e.OldText, unicode.IsSpace) == "" {
		return "", retryf("%s is only whitespace; include the surrounding text so the match is unambiguous.", label)
	}
	old, repl := e.OldText, e.NewText
	starts := matchStarts(text, old)
	if len(starts) == 0 {
		// A model often sends "\n" where a CRLF file has "\r\n": match
		// those line endings as the file has them, in both texts.
		if crOld, ok := toCRLF(old, text); ok {
			if s := matchStarts(text, crOld); len(s) > 0 {
				starts, old, repl = s, crOld, crlfText(repl)
			}
		}
	}
	switch len(starts) {
	case 0:
		return "", retryf("%s not found in %s. No changes were written.", label, display)
	case 1:
		return text[:starts[0]] + repl + text[starts[0]+len(old):], nil
	}
	return "", retryf("%s found %d times in %s (%s). Include more surrounding context to make the match unique. No changes were written.",
		label, len(starts), display, lineList(text, starts))
}

// matchStarts returns the byte offsets of every occurrence of sub in
// text, overlapping ones included: "aa" occurs twice in "aaa", which is
// ambiguous.
func matchStarts(text, sub string) []int {
	if sub == "" {
		return nil
	}
	var out []int
	for from := 0; from <= len(text)-len(sub); {
		i := strings.Index(text[from:], sub)
		if i < 0 {
			break
		}
		out = append(out, from+i)
		_, size := utf8.DecodeRuneInString(text[from+i:])
		from += i + max(size, 1)
	}
	return out
}

// toCRLF returns old with its bare "\n" line endings as "\r\n", when that
// could match in text (a CRLF file) and differs from old.
func toCRLF(old, text string) (string, bool) {
	if !strings.Contains(old, "\n") || !strings.Contains(text, "\r\n") {
		return "", false
	}
	c := crlfText(old)
	return c, c != old
}

// crlfText turns every line ending of s into "\r\n".
func crlfText(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}

// lineList renders the distinct line numbers where matches start:
// "line 4" or "lines 3, 7", at most ten then ", ...".
func lineList(text string, starts []int) string {
	var lines []string
	line, pos := 1, 0
	for _, st := range starts {
		line += strings.Count(text[pos:st], "\n")
		pos = st
		n := fmt.Sprint(line)
		if len(lines) > 0 && lines[len(lines)-1] == n {
			continue
		}
		lines = append(lines, n)
	}
	word := "lines"
	if len(lines) == 1 {
		word = "line"
	}
	if len(lines) > maxMatchLines {
		return word + " " + strings.Join(lines[:maxMatchLines], ", ") + ", ..."
	}
	return word + " " + strings.Join(lines, ", ")
}

// invalidUTF8 returns the byte offset of the first invalid UTF-8 in b, or
// -1 when b is valid.
func invalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}
