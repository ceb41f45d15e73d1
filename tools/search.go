package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/policy"
	"github.com/fencefs/fencefs/tools/internal/textsearch"
)

func (s *Set) searchFilesTool() *Tool {
	return &Tool{
		Name: nameSearchFiles,
		Description: fmt.Sprintf("Search file contents with a regular expression (Go RE2 syntax), line by line. "+
			"path may name a file or a directory, which is searched recursively in sorted order; include_glob "+
			"limits the files searched (fnmatch, '*' also matches '/', against the path from the workspace root, "+
			"such as '*.py' or 'src/*.go'). Prints '<path>:<line>:<text>' for each matching line, at most %d; "+
			"lines longer than %d characters are cut. Binary files and hidden (dot-named) entries are skipped.",
			s.opts.MaxSearchResults, textsearch.DefaultMaxColumns),
		InputSchema: objectSchema([]string{"pattern"},
			prop{"pattern", `{"type":"string","description":"Regular expression (Go RE2 syntax) to look for in each line."}`},
			prop{"path", `{"type":"string","default":".","description":"File or directory to search, relative to the working directory or starting with '/'."}`},
			prop{"include_glob", `{"type":"string","description":"Optional fnmatch pattern a file's path from the workspace root must match, such as '*.py'."}`},
		),
		Annotations: Annotations{Title: "Search files", ReadOnly: true, Idempotent: true},
	}
}

func (s *Set) searchFiles(ctx context.Context, raw json.RawMessage) (string, error) {
	var pattern string
	p := "."
	var include *string
	if err := decodeArgs(raw, arg{"pattern", &pattern, true}, arg{"path", &p, false}, arg{"include_glob", &include, false}); err != nil {
		return "", err
	}
	m, err := textsearch.Compile(pattern, textsearch.Options{})
	if err != nil {
		return "", retryf(KindInvalid, "Invalid regex pattern: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	if include != nil && *include != "" {
		if err := policy.ValidatePattern(*include); err != nil {
			return "", retryf(KindInvalid, "Pattern '%s' is not a valid glob pattern.", *include)
		}
	}
	root, info, err := s.walkRoot(ctx, nameSearchFiles, p)
	if err != nil {
		return "", err
	}
	f := s.newWalkFilter(root)
	if include != nil && *include != "" {
		// A directory is counted: include_glob's "*" crosses "/", so it
		// may take files anywhere below.
		f.relevant = func(rel string, isDir bool) bool {
			return isDir || policy.Match(*include, backend.Join(root.written, rel))
		}
	}
	pr := newPrinter(ctx, s.opts.MaxSearchResults, false)
	if info.IsDir() {
		files := s.walkFiles(ctx, f, func(we walkEntry) bool {
			return include == nil || *include == "" || policy.Match(*include, we.Name)
		})
		err = s.searchAll(ctx, m, files, s.opts.MaxSearchResults, pr)
	} else if s.fileRootVisible(root, info) {
		err = s.searchOne(ctx, m, root, s.opts.MaxSearchResults, pr)
	}
	if err != nil {
		return "", s.storageErr(err, p)
	}
	capMarker := ""
	if pr.Truncated() {
		capMarker = fmt.Sprintf("[... truncated at %s]", count(s.opts.MaxSearchResults, "match", "matches"))
	}
	s.emit(ctx, FilesSearched{Path: s.canonical(root.resolved), Pattern: pattern, Search: "grep", MatchCount: pr.Matches(), Truncated: pr.Truncated()})
	reportPrinted(ctx, pr)
	var lines []string
	if out := pr.String(); out != "" {
		lines = []string{out}
	}
	return finishOutput(lines, "No matches found.", capMarker, f.notices()), nil
}

// fileJob is a file to search: the storage path to read, its name as
// listed (the output path is made from it, only for files that match),
// and the size (-1 when unknown) and version the listing gave.
type fileJob struct {
	read, name string
	size       int64
	version    string // as listed, empty when the listing gives none
}

// openJob opens the file of a job.
func (s *Set) openJob(ctx context.Context, job fileJob) (io.ReadCloser, error) {
	r, err := s.b.OpenRead(knownFile(ctx, job.read, job.size, job.version), job.read)
	if err != nil || job.size <= 0 {
		return r, err
	}
	return &listedSizeReader{r: r, left: job.size}, nil
}

// listedSizeReader ends a file at the size its listing gave, so that a
// file read whole in one call needs no further call to learn that it
// ended: one system call less per file on local disk. A file that grew
// since it was listed is searched as it was listed. (A size of 0 is not
// trusted: some special file systems report it for files with content.)
type listedSizeReader struct {
	r    io.ReadCloser
	left int64
}

func (l *listedSizeReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

func (l *listedSizeReader) Close() error { return l.r.Close() }

// walkedFiles is the sequence of files a walk yields, and the walk's
// error once the sequence is done.
type walkedFiles struct {
	seq iter.Seq[fileJob]
	err *error
}

// walkFiles walks f's root and yields the regular files the filter shows
// and keep accepts.
func (s *Set) walkFiles(ctx context.Context, f *walkFilter, keep func(walkEntry) bool) walkedFiles {
	var walkErr error
	seq := func(yield func(fileJob) bool) {
		walkErr = s.walk(ctx, f, walkHooks{}, func(we walkEntry, _ string, show bool) (bool, error) {
			if show && we.Info.IsRegular() && keep(we) {
				if !yield(fileJob{we.Resolved, we.Name, we.Info.Size, we.Info.Version}) {
					return false, errStopWalk
				}
			}
			return true, nil
		})
	}
	return walkedFiles{seq: seq, err: &walkErr}
}

// searchAll searches the walked files in parallel and prints their lines
// in walk order until the printer's cap.
func (s *Set) searchAll(ctx context.Context, m *textsearch.Matcher, files walkedFiles, limit int, pr *textsearch.Printer) error {
	var fileErr error
	err := textsearch.SearchJobs(ctx, m, s.openJob, files.seq, 0, limit, func(job fileJob, r textsearch.FileResult) bool {
		if r.Err != nil {
			if errors.Is(r.Err, textsearch.ErrBinary) || skippableReadErr(r.Err) {
				return true
			}
			fileErr = r.Err
			return false
		}
		if len(r.Lines) == 0 {
			return true
		}
		return pr.Add(s.outputPath(job.name), r.Lines)
	})
	switch {
	case err != nil:
		return err
	case fileErr != nil:
		return fileErr
	}
	return *files.err
}

// searchOne searches a single file named as the walk root.
func (s *Set) searchOne(ctx context.Context, m *textsearch.Matcher, root target, limit int, pr *textsearch.Printer) error {
	r := m.SearchFile(ctx, streams{s.b}, root.resolved, limit)
	if r.Err != nil {
		if errors.Is(r.Err, textsearch.ErrBinary) || skippableReadErr(r.Err) {
			return nil
		}
		return r.Err
	}
	pr.Add(s.outputPath(root.written), r.Lines)
	return nil
}

// streams adapts a backend to textsearch.Opener, which needs only the
// bytes of a file.
type streams struct{ b backend.Backend }

func (o streams) OpenRead(ctx context.Context, name string) (io.ReadCloser, error) {
	return o.b.OpenRead(ctx, name)
}
