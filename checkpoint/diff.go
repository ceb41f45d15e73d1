package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/fencefs/fencefs/backend"
)

// maxDiffBytes bounds each side of a file Diff shows line by line.
const maxDiffBytes = 1 << 20

// Diff renders what restoring to checkpoint to would change, as a
// unified diff from each path's current state to its state at to (a
// removal from the current content, a re-creation to the stored one, a
// directory as a line of its own), conflicts marked, for people to read
// before a restore. It changes nothing.
func (j *Journal) Diff(ctx context.Context, to uint64, opts RestoreOptions) (string, error) {
	p, err := j.Plan(ctx, to, opts)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, it := range p.Items {
		if it.Conflict != "" {
			fmt.Fprintf(&b, "# conflict: %s: %s\n", it.Path, it.Conflict)
		}
		if it.Current.Kind != File && it.Target.Kind != File {
			fmt.Fprintf(&b, "# %s: %s -> %s\n", it.Path, it.Current, it.Target)
			continue
		}
		cur, err := j.side(ctx, it.Path, it.Current, false)
		if err != nil {
			return "", err
		}
		tgt, err := j.side(ctx, it.Path, it.Target, true)
		if err != nil {
			return "", err
		}
		from, to := "a/"+it.Path, "b/"+it.Path
		if it.Current.Kind != File {
			from = "/dev/null"
		}
		if it.Target.Kind != File {
			to = "/dev/null"
		}
		fmt.Fprintf(&b, "--- %s\n+++ %s\n", from, to)
		if cur == nil || tgt == nil {
			b.WriteString("Binary or large files differ\n")
			continue
		}
		writeHunk(&b, string(cur), string(tgt))
	}
	return b.String(), nil
}

// side returns the content of one side of a diff: nil when it cannot be
// shown line by line (binary, or larger than maxDiffBytes), empty for no
// file.
func (j *Journal) side(ctx context.Context, path string, st State, stored bool) ([]byte, error) {
	if st.Kind != File {
		return []byte{}, nil
	}
	if st.Size > maxDiffBytes {
		return nil, nil
	}
	var (
		r   io.ReadCloser
		err error
	)
	if stored {
		j.mu.Lock()
		r, err = j.openContent(ctx, st.Hash)
		j.mu.Unlock()
	} else {
		r, err = j.ns.OpenRead(ctx, path)
	}
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, maxDiffBytes+1))
	if err != nil {
		return nil, backend.PathError("read", path, err)
	}
	if len(data) > maxDiffBytes || bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		return nil, nil
	}
	return data, nil
}

// writeHunk writes the line diff of old to new as one hunk holding every
// line.
func writeHunk(b *strings.Builder, old, new string) {
	dmp := diffmatchpatch.New()
	a, c, lines := dmp.DiffLinesToChars(old, new)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(a, c, false), lines)
	fmt.Fprintf(b, "@@ -1,%d +1,%d @@\n", countLines(old), countLines(new))
	for _, d := range diffs {
		prefix := " "
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			prefix = "-"
		case diffmatchpatch.DiffInsert:
			prefix = "+"
		}
		text := d.Text
		for text != "" {
			line, rest, found := strings.Cut(text, "\n")
			b.WriteString(prefix + line + "\n")
			if !found {
				b.WriteString("\\ No newline at end of file\n")
			}
			text = rest
		}
	}
}

// countLines counts the lines of s, a last line without a line break
// included.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}
