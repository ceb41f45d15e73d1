package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/fencefs/fencefs/backend"
)

func (s *Set) fileInfoTool() *Tool {
	return &Tool{
		Name: nameFileInfo,
		Description: "Show metadata of a file or directory: type, size in bytes, and for files whether they are binary; " +
			"for text files the number of lines and the content hash; for symbolic links their target.",
		InputSchema: objectSchema([]string{"path"},
			prop{"path", `{"type":"string","description":"The file or directory, relative to the working directory, or starting with '/'."}`},
		),
		Annotations: Annotations{Title: "File info", ReadOnly: true, Idempotent: true},
	}
}

func (s *Set) fileInfo(ctx context.Context, raw json.RawMessage) (string, error) {
	var p string
	if err := decodeArgs(raw, arg{"path", &p, true}); err != nil {
		return "", err
	}
	t, err := s.resolve(ctx, nameFileInfo, p, levelRead)
	if err != nil {
		return "", err
	}
	linkTarget, err := s.linkTarget(ctx, t)
	if err != nil {
		return "", err
	}
	lines := []string{"path: " + p}
	// A file answers from one read: the stream says what it serves. Only
	// what is not a regular file costs a Stat.
	r, err := s.b.OpenRead(ctx, t.resolved)
	switch {
	case err == nil:
		defer r.Close()
		more, err := s.fileFacts(ctx, t, r)
		if err != nil {
			return "", err
		}
		lines = append(append(lines, "type: file"), more...)
	case errors.Is(err, backend.ErrIsDir) || errors.Is(err, backend.ErrNotRegular):
		info, err := backend.Stat(ctx, s.b, t.resolved)
		if err != nil {
			return "", s.infoErr(err, p)
		}
		if !info.IsDir() {
			return "", retryf(KindNotRegular, "Path '%s' is not a regular file or directory.", p)
		}
		lines = append(lines, "type: directory", sizeLine(info.Size))
	default:
		return "", s.infoErr(err, p)
	}
	if linkTarget != "" {
		lines = append(lines, "symlink_target: "+linkTarget)
	}
	return strings.Join(lines, "\n"), nil
}

// fileFacts reads a regular file once for file_info: its size, whether it
// is binary, and for text its line count and hash (shown even when
// content hashes are off: file_info is where a model asks for one).
func (s *Set) fileFacts(ctx context.Context, t target, r backend.FileReader) ([]string, error) {
	scan, err := s.scanFile(ctx, r, window{offset: 0, limit: 0})
	if err != nil {
		return nil, s.storageErr(err, t.display)
	}
	defer s.releaseScan(scan)
	if scan.binary {
		size := scan.size
		if !scan.complete {
			size = r.Info().Size
		}
		return []string{sizeLine(size), "binary: true"}, nil
	}
	return []string{sizeLine(scan.size), "binary: false",
		fmt.Sprintf("lines: %d", scan.lines), "hash: " + shortHash(scan.hash)}, nil
}

func sizeLine(n int64) string {
	if n < 0 {
		return "size: unknown"
	}
	return "size: " + count(n, "byte", "bytes")
}

// linkTarget returns the stored target of t when its final component is
// a symlink, and "" otherwise.
func (s *Set) linkTarget(ctx context.Context, t target) (string, error) {
	if s.links == nil || t.written == "." {
		return "", nil
	}
	dir, base := backend.Split(t.written)
	parent, err := s.followLinks(ctx, dir, t.display, nil)
	if err != nil {
		return "", err
	}
	name := backend.Join(parent, base)
	if !backend.CapabilitiesAt(s.b, name).Symlinks {
		// Storage without links (an S3 mount) needs no Stat to say so.
		return "", nil
	}
	info, err := backend.Stat(ctx, s.b, name)
	if err != nil || !info.IsSymlink() {
		return "", nil
	}
	target, err := s.links.Readlink(ctx, name)
	if err == nil || errors.Is(err, backend.ErrUnsupported) {
		return target, nil
	}
	if m := s.pathErr(err, t.display); m != nil {
		return "", m
	}
	if errors.Is(err, fs.ErrInvalid) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, backend.ErrNotDir) {
		// The link was replaced or removed since the stat: no longer a
		// link (EINVAL), or gone.
		return "", retryf(KindConflict, "Path '%s' changed while it was being used. Try again.", t.display)
	}
	return "", s.storageErr(err, t.display)
}

// infoErr maps the errors of file_info.
func (s *Set) infoErr(err error, display string) error {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, backend.ErrNotDir):
		return retryf(KindNotFound, "Path not found: %s", display)
	case errors.Is(err, backend.ErrNotRegular):
		return retryf(KindNotRegular, "Path '%s' is not a regular file or directory.", display)
	}
	return s.storageErr(err, display)
}
