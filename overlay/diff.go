package overlay

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"strings"
	"unicode/utf8"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/internal/udiff"
)

// MaxDiffFileBytes is the largest side of a file change that Diff shows
// line by line; a larger or binary file shows as a one-line notice.
const MaxDiffFileBytes = 1 << 20

// Diff returns the unified diff of the changes that paths select (all of
// them without paths; see Commit) against the base as it is now: one
// section per file, "a/" for the base's side and "b/" for the overlay's,
// /dev/null for a side that does not exist, in the format of `git diff`
// (three lines of context, "\ No newline at end of file"). Binary files
// and files over MaxDiffFileBytes show as "Binary files ... differ".
// Directories are left out.
func (o *FS) Diff(ctx context.Context, paths ...string) (string, error) {
	all, err := o.Changes(ctx)
	if err != nil {
		return "", err
	}
	cs, err := selectChanges(all, paths)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	for _, c := range cs {
		if c.Dir {
			continue
		}
		oldName, newName := c.Path, c.Path
		var old, cur []byte
		if c.Kind == Renamed {
			oldName = c.From
		}
		if c.Kind != Created {
			if old, err = readOrNil(ctx, o.base, oldName); err != nil {
				return "", err
			}
		}
		if c.Kind != Deleted {
			if cur, err = backend.ReadFile(ctx, o.upper, c.Path); err != nil {
				return "", err
			}
		}
		a, b := "a/"+oldName, "b/"+newName
		if c.Kind == Created {
			a = "/dev/null"
		}
		if c.Kind == Deleted {
			b = "/dev/null"
		}
		sb.WriteString(unified(a, b, old, cur))
	}
	return sb.String(), nil
}

// readOrNil reads name from b; a file gone since is empty.
func readOrNil(ctx context.Context, b backend.Reader, name string) ([]byte, error) {
	data, err := backend.ReadFile(ctx, b, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// unified returns the diff section turning old (named a) into cur (named
// b), ending with a newline, or "" when they are equal and the names are
// too.
func unified(a, b string, old, cur []byte) string {
	if bytes.Equal(old, cur) && a == b {
		return ""
	}
	header := "--- " + a + "\n+++ " + b + "\n"
	if bytes.Equal(old, cur) {
		return header
	}
	if binary(old) || binary(cur) {
		return "Binary files " + a + " and " + b + " differ\n"
	}
	return header + udiff.Hunks(string(old), string(cur))
}

// binary reports whether data is shown as binary: too large, not UTF-8,
// or holding a NUL byte.
func binary(data []byte) bool {
	return len(data) > MaxDiffFileBytes || !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0
}
