package tools

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/fencefs/fencefs/backend"
)

// The methods below serve adapters that hand files to a host rather than
// to the model (an MCP server's resources and completions). They apply
// the same containment, policy and Permission checks as the tools, and
// refuse with the same *RetryError texts.

// ReadFile reads the file at name, a path from the namespace root without
// a leading '/' ("ws/notes.md" in a rooted namespace, "notes.md" in a
// plain one: an event's canonical path with its '/' dropped), whole,
// under read_file's policy. A file of
// more than max bytes is refused with a retry naming the limit; the
// call is bounded by Options.CallTimeout like a tool call. The FileRead
// event is emitted as for read_file.
func (s *Set) ReadFile(ctx context.Context, name string, max int64) ([]byte, error) {
	p, err := s.toolPath(name)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); s.opts.CallTimeout > 0 && (!ok || time.Until(dl) > s.opts.CallTimeout) {
		// The call deadline's context, as for a tool call: no timer
		// unless something waits.
		c := newCallContext(ctx, s.opts.CallTimeout)
		defer c.release()
		ctx = c
	}
	t, err := s.resolve(ctx, nameReadFile, p, levelRead)
	if err != nil {
		return nil, err
	}
	r, err := s.openFile(ctx, t)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(contextReader{ctx, r}, max+1))
	if err != nil {
		return nil, s.storageErr(err, p)
	}
	if int64(len(data)) > max {
		return nil, retryf(KindTooLarge, "File '%s' is larger than %s; read it with read_file in parts.", name, count(max, "byte", "bytes"))
	}
	h := hashBytes(data)
	s.guard.remember(t.resolved, h)
	s.emit(ctx, FileRead{Path: s.canonical(t.resolved), ContentHash: h})
	return data, nil
}

// CompletePath returns up to max paths from the namespace root (as
// ReadFile takes them) that start with prefix, among the entries the
// policy lets list_directory show in prefix's directory; directories end
// with '/'. more reports that there were more than max.
func (s *Set) CompletePath(ctx context.Context, prefix string, max int) (paths []string, more bool, err error) {
	dir, base := "", prefix
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		dir, base = prefix[:i+1], prefix[i+1:]
	}
	p, err := s.toolPath(strings.TrimSuffix(dir, "/"))
	if err != nil {
		return nil, false, err
	}
	t, err := s.resolve(ctx, nameListDirectory, p, levelList)
	if err != nil {
		return nil, false, err
	}
	entries, err := s.b.List(ctx, t.resolved)
	if err != nil {
		return nil, false, s.listErr(err, p)
	}
	backend.SortEntries(entries)
	f := s.newWalkFilter(t)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name, base) {
			continue
		}
		we, show, _, err := f.check(ctx, backend.Join(t.resolved, e.Name), e)
		if err != nil {
			return nil, false, err
		}
		if !show {
			continue
		}
		if len(paths) == max {
			return paths, true, nil
		}
		name := dir + e.Name
		if we.IsDir() {
			name += "/"
		}
		paths = append(paths, name)
	}
	return paths, false, nil
}

// toolPath turns a path from the namespace root into the tool path that
// names it from the working directory, refusing what is not clean.
func (s *Set) toolPath(name string) (string, error) {
	if name == "" {
		name = "."
	}
	clean, err := backend.CleanRelative(name)
	if err != nil || clean != name {
		return "", retryf(KindInvalid, "Path '%s' is not a clean path from the namespace root.", name)
	}
	if s.rooted {
		return backend.StorageToVirtual(name), nil
	}
	return backend.Rel(s.cwd, name), nil
}
