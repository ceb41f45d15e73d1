package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/fencefs/fencefs/internal/udiff"
)

// diffKeep is how much of an existing file write_file keeps to diff: more
// than the longest side udiff will diff, so a longer file is recognised.
const diffKeep = utf8.UTFMax*udiff.MaxSourceChars + utf8.UTFMax

// keepForDiff is how much of a file's old content a change under ctx keeps:
// diffKeep when a listener reads the change's diff, none otherwise (the
// hash is taken of the whole content either way).
func (s *Set) keepForDiff(ctx context.Context) int64 {
	if s.changeDiffs(ctx) {
		return diffKeep
	}
	return 0
}

func (s *Set) writeFileTool() *Tool {
	desc := "Create a file or replace its whole content. The parent directory must exist (use create_directory first). " +
		"The write is atomic and keeps an existing file's permissions. Content is written exactly as given (UTF-8), " +
		"without adding or removing line endings."
	desc += s.pathRule()
	if !s.opts.NoContentHashes {
		desc += " Pass expected_hash from your last read to refuse the write if the file changed since."
	}
	if s.opts.RequireRead {
		desc += " An existing file must be read with read_file before it is replaced."
	}
	return &Tool{
		Name:        nameWriteFile,
		Description: desc,
		InputSchema: objectSchema([]string{"path", "content"}, s.withHash(
			prop{"path", `{"type":"string","description":"The file to write, relative to the working directory, or starting with '/'."}`},
			prop{"content", `{"type":"string","description":"The complete new content of the file."}`},
		)...),
		Annotations: Annotations{Title: "Write file", Destructive: true, Idempotent: true},
	}
}

func (s *Set) writeFile(ctx context.Context, raw json.RawMessage) (string, error) {
	var p, content string
	var expected *string
	args := append([]arg{{"path", &p, true}, {"content", &content, true}}, s.hashArg(&expected)...)
	if err := decodeArgs(raw, args...); err != nil {
		return "", err
	}
	t, err := s.resolve(ctx, nameWriteFile, p, levelWrite)
	if err != nil {
		return "", err
	}
	unlock, err := s.locks.lock(ctx, t.resolved)
	if err != nil {
		return "", err
	}
	defer unlock()
	old, err := s.loadTarget(ctx, t, s.keepForDiff(ctx))
	if err != nil {
		return "", err
	}
	if old.exists {
		if expected != nil {
			if err := checkExpected(p, *expected, old.hash); err != nil {
				return "", err
			}
		}
		if err := s.checkRead(t, old.hash); err != nil {
			return "", err
		}
	}
	c := &change{t: t, op: OpWrite, old: old, data: []byte(content)}
	// The old text serves the diff alone, which only a change listener
	// reads (see apply).
	c.oldOK = !old.partial && !isBinaryPrefix(old.data)
	if c.oldOK && s.changeDiffs(ctx) {
		c.oldText = displayText(old.data)
	}
	_, _, cancelled, err := s.apply(ctx, c, "written")
	if err != nil || cancelled != "" {
		return cancelled, err
	}
	h := hashBytes(c.data)
	s.guard.remember(t.resolved, h)
	s.emit(ctx, FileWritten{Path: s.canonical(t.resolved), ContentHash: h})
	runes, lines := utf8.RuneCountInString(content), countLines(content)
	res := fmt.Sprintf("Wrote %d %s (%d %s) to %s.", runes, plural(runes, "char", "chars"), lines, plural(lines, "line", "lines"), p)
	if !s.opts.NoContentHashes {
		res += fmt.Sprintf(" [hash:%s]", shortHash(h))
	}
	return res, nil
}
