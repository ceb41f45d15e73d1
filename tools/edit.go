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
)

// maxMatchLines is how many line numbers an ambiguous match lists.
const maxMatchLines = 10

func (s *Set) editFileTool() *Tool {
	desc := "Edit a text file by exact string replacement: old_text must occur exactly once and is replaced by new_text, " +
		"literally (no regular expressions, no $ expansion). For several changes pass replacements, a list of " +
		"{old_text, new_text} applied in order, each to the result of the previous; nothing is written unless every one " +
		"matches. Include enough surrounding lines to make each old_text unique. Line endings, tabs and a byte order " +
		"mark are kept."
	desc += s.pathRule()
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
		return "", retryf(KindNotText, "%s is not valid UTF-8 (invalid byte at offset %d); edit_file only edits UTF-8 text.", p, i)
	}
	if expected != nil {
		if err := checkExpected(p, *expected, old.hash); err != nil {
			return "", err
		}
	}
	if err := s.checkRead(t, old.hash); err != nil {
		return "", err
	}
	prev := string(old.data)
	out, err := applyEdits(ctx, prev, edits, p, s.opts.EditTolerance == ToleranceWhitespace)
	if err != nil {
		return "", err
	}
	if out.text == prev {
		res := fmt.Sprintf("No changes to %s: the new text equals the old text, so nothing was written.", p)
		if !s.opts.NoContentHashes {
			res += fmt.Sprintf(" [hash:%s]", shortHash(old.hash))
		}
		return res, nil
	}
	links := s.otherLinks(t.resolved)
	c := &change{t: t, op: OpEdit, old: old, oldText: prev, oldOK: true, data: []byte(out.text)}
	diff, truncated, cancelled, err := s.apply(ctx, c, "edited")
	if err != nil || cancelled != "" {
		return cancelled, err
	}
	h := hashBytes(c.data)
	s.guard.remember(t.resolved, h)
	s.emit(ctx, FileEdited{FileWritten: FileWritten{Path: s.canonical(t.resolved), ContentHash: h}, Diff: diff, Truncated: truncated})
	res := fmt.Sprintf("Edited %s (%s).%s", p, changedLines(c.oldText, out.text), toleranceNote(out.tolerant))
	switch {
	case links == 1:
		res += " Its other hard link keeps the old content: the edit replaced the file, as every atomic write does."
	case links > 1:
		res += fmt.Sprintf(" Its %d other hard links keep the old content: the edit replaced the file, as every atomic write does.", links)
	}
	if !s.opts.NoContentHashes {
		res += fmt.Sprintf(" [hash:%s]", shortHash(h))
	}
	return res, nil
}

// changedLines returns the lines of next that differ from prev: from the
// first differing byte to the last, in linear time. A pure deletion
// names the line where text was removed.
func changedLines(prev, next string) lineSpan {
	p := commonPrefix(prev, next)
	q := commonSuffix(prev[p:], next[p:])
	first := strings.Count(next[:p], "\n") + 1
	end := len(next) - q
	if end <= p {
		return lineSpan{first, first}
	}
	return lineSpan{first, first + strings.Count(next[p:end-1], "\n")}
}

// commonPrefix is the length of the longest common prefix of a and b,
// compared a block at a time.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i+4096 <= n && a[i:i+4096] == b[i:i+4096] {
		i += 4096
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix is the length of the longest common suffix of a and b.
func commonSuffix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i+4096 <= n && a[len(a)-i-4096:len(a)-i] == b[len(b)-i-4096:len(b)-i] {
		i += 4096
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// loadEditable reads the whole existing regular text file t for
// edit_file, once: the stream's Info gives the size and version. A
// directory, a missing file and a special file are refused by the open; a
// binary file from its first 8192 bytes, and
// a file larger than the edit limit before it is read (or, where storage
// reported less, as soon as more is read), so memory stays bounded by
// the limit whatever the storage serves.
func (s *Set) loadEditable(ctx context.Context, t target) (existing, error) {
	return s.loadText(ctx, t, nameEditFile)
}

// loadText is loadEditable for the named tool, whose refusals say what
// that tool does.
func (s *Set) loadText(ctx context.Context, t target, tool string) (existing, error) {
	r, err := s.openFile(ctx, t)
	if err != nil {
		return existing{}, err
	}
	defer r.Close()
	info := r.Info()
	src := contextReader{ctx, r}
	// The head is read into the buffer the whole file will fill, when
	// the stream's size is known and within the limit.
	size := binaryPrefix
	if info.Size >= 0 && info.Size <= s.maxEdit {
		size = max(size, int(info.Size)+bytes.MinRead)
	}
	head := make([]byte, binaryPrefix, size)
	n, err := io.ReadFull(src, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return existing{}, s.storageErr(err, t.display)
	}
	head = head[:n]
	if isBinaryPrefix(head) {
		return existing{}, retryf(KindNotText, "%s is a binary file; %s only %ss text files.", t.display, tool, editVerb(tool))
	}
	if info.Size > s.maxEdit {
		return existing{}, s.tooBigToEdit(tool, t.display, strconv.FormatInt(info.Size, 10))
	}
	data, err := readUpTo(src, head, info.Size, s.maxEdit)
	if err != nil {
		return existing{}, s.storageErr(err, t.display)
	}
	if int64(len(data)) > s.maxEdit {
		return existing{}, s.tooBigToEdit(tool, t.display, fmt.Sprintf("more than %d", s.maxEdit))
	}
	return existing{exists: true, data: data, size: int64(len(data)), hash: hashBytes(data), version: info.Version}, nil
}

// tooBigToEdit refuses a file above the edit limit; size says how large
// it is.
func (s *Set) tooBigToEdit(tool, display, size string) error {
	return retryf(KindTooLarge, "'%s' is %s bytes; %s %s files up to %d bytes. Use write_file to replace it.", display, size, tool, editVerb(tool)+"s", s.maxEdit)
}

// editVerb is what the tool does to a text file: edit_file edits,
// apply_patch updates.
func editVerb(tool string) string {
	if tool == nameApplyPatch {
		return "update"
	}
	return "edit"
}

// readUpTo returns head followed by the rest of r, reading at most one
// byte more than limit in all, so a longer stream is recognised without
// being held. sizeHint, the size storage reported, sizes the buffer.
func readUpTo(r io.Reader, head []byte, sizeHint, limit int64) ([]byte, error) {
	// MinRead more than the file, so reading up to its end never grows
	// the buffer; head's own spare capacity serves when it is enough.
	buf := bytes.NewBuffer(head)
	buf.Grow(max(0, int(min(max(sizeHint, int64(len(head))), limit))+bytes.MinRead-len(head)))
	if len(head) < binaryPrefix {
		// ReadFull stopped at the end of the file.
		return buf.Bytes(), nil
	}
	if _, err := io.CopyN(buf, r, limit+1-int64(len(head))); err != nil && err != io.EOF {
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
		return nil, retryf(KindInvalid, "Provide either old_text and new_text or a non-empty replacements list, not both.")
	case list && len(*reps) > MaxReplacements:
		return nil, retryf(KindTooLarge, "replacements has %d items; edit_file applies at most %d per call. Send them in several calls of at most %d each. No changes were written.",
			len(*reps), MaxReplacements, MaxReplacements)
	case list:
		return *reps, nil
	case oldText != nil && newText != nil:
		return []replacement{{OldText: *oldText, NewText: *newText}}, nil
	}
	return nil, retryf(KindInvalid, "Provide old_text and new_text, or a non-empty replacements list.")
}

// editOutcome is what applyEdits did: the new text, and the labels of
// the replacements that matched only under the whitespace tolerance.
type editOutcome struct {
	text     string
	tolerant []string
}

// applyEdits applies edits in order to text, each to the result of the
// previous; every old text must occur exactly once (with tolerant, once
// after ignoring indentation and trailing whitespace when it does not
// occur as given). display names the file in the messages. It changes
// nothing but the matched text: line endings, tabs and a byte order mark
// elsewhere survive byte for byte. The text is held as pieces, so a
// replacement never copies it whole, and ctx is checked as it goes.
func applyEdits(ctx context.Context, text string, edits []replacement, display string, tolerant bool) (editOutcome, error) {
	pt := newPieceText(text)
	var out editOutcome
	for i, e := range edits {
		if err := ctx.Err(); err != nil {
			return editOutcome{}, err
		}
		label := "old_text"
		if len(edits) > 1 {
			label = fmt.Sprintf("replacement %d", i+1)
		}
		used, err := applyEdit(ctx, pt, e, label, display, tolerant)
		if err != nil {
			return editOutcome{}, err
		}
		if used {
			out.tolerant = append(out.tolerant, label)
		}
	}
	out.text = pt.String()
	return out, nil
}

// applyEdit applies one replacement to pt; tolerantUsed reports that it
// matched only under the whitespace tolerance.
func applyEdit(ctx context.Context, pt *pieceText, e replacement, label, display string, tolerant bool) (tolerantUsed bool, err error) {
	if e.OldText == "" {
		return false, retryf(KindInvalid, "%s is empty; old_text must be the exact text to replace.", label)
	}
	if strings.TrimFunc(e.OldText, unicode.IsSpace) == "" {
		return false, retryf(KindInvalid, "%s is only whitespace; include the surrounding text so the match is unambiguous.", label)
	}
	old, repl := e.OldText, e.NewText
	m, err := pt.find(ctx, old)
	if err != nil {
		return false, err
	}
	if crOld := crlfText(old); m.count == 0 && crOld != old {
		// A model often sends "\n" where a CRLF file has "\r\n": match
		// those line endings as the file has them, in both texts.
		cm, err := pt.find(ctx, crOld)
		if err != nil {
			return false, err
		}
		if cm.count > 0 {
			m, old, repl = cm, crOld, crlfText(repl)
		}
	}
	switch {
	case m.count == 1:
		pt.replace(m.starts[0], m.starts[0]+len(old), repl)
		return false, nil
	case m.count > 1:
		return false, retryf(KindNoMatch, "%s found %s times in %s (%s). Include more surrounding context to make the match unique. No changes were written.",
			label, countText(m), display, lineList(pt, m))
	}
	text := pt.String()
	if tolerant {
		done, err := applyTolerant(ctx, pt, text, e, label, display)
		if done || err != nil {
			return done, err
		}
	}
	msg := fmt.Sprintf("%s not found in %s.", label, display)
	if hint := notFoundHint(ctx, text, e.OldText, "old_text"); hint != "" {
		msg += " " + hint
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	return false, retryf(KindNoMatch, "%s No changes were written.", msg)
}

// countText renders a match count, "more than N" past the counting cap.
func countText(m matches) string {
	if m.more {
		return fmt.Sprintf("more than %d", m.count)
	}
	return fmt.Sprint(m.count)
}

// crlfText turns every line ending of s into "\r\n".
func crlfText(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}

// lineList renders the distinct line numbers where matches start:
// "line 4" or "lines 3, 7", at most ten then ", ...".
func lineList(pt *pieceText, m matches) string {
	text := pt.String()
	var lines []string
	line, pos := 1, 0
	for _, st := range m.starts {
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
	if len(lines) > maxMatchLines || (len(m.starts) < m.count && len(lines) > 1) {
		return word + " " + strings.Join(lines[:min(len(lines), maxMatchLines)], ", ") + ", ..."
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
