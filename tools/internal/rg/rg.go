// Package rg runs ripgrep for the list_files and grep tools, with care
// for what a model controls: the pattern and globs are passed as option
// values (never as arguments rg could read as options), paths follow "--",
// no shell is involved, the user's configuration and environment are kept
// out (--no-config, an empty environment), links are never followed,
// preprocessors are never run, and output is read as JSON or NUL-separated
// names, so no file name can forge a line.
//
// The runner reports paths exactly as ripgrep printed them, relative to
// the directory it ran in; mapping them back onto storage and judging them
// is the caller's job.
package rg

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/fencefs/fencefs/tools/internal/textsearch"
)

// DefaultTimeout bounds one rg run when Runner.Timeout is zero.
const DefaultTimeout = 60 * time.Second

// maxStderr bounds how much of rg's error output is kept.
const maxStderr = 16 << 10

// ErrNotInstalled is returned when the rg executable cannot be found.
var ErrNotInstalled = errors.New("rg: ripgrep is not installed")

// ErrTimeout is returned when a run exceeds the runner's timeout.
var ErrTimeout = errors.New("rg: ripgrep timed out")

// UsageError is an error rg reported about its arguments: an invalid
// regular expression, glob or file type. The model can correct it.
type UsageError struct {
	// Message is rg's own message, with the run directory replaced by ".".
	Message string
}

// Error returns rg's message.
func (e *UsageError) Error() string { return e.Message }

// Runner runs rg. The zero value runs "rg" from PATH with DefaultTimeout.
type Runner struct {
	// Path is the rg executable; "" means "rg" looked up in PATH.
	Path string
	// Timeout bounds one run; 0 means DefaultTimeout.
	Timeout time.Duration
}

// Query describes what to search.
type Query struct {
	// Dir is the host directory rg runs in. Paths are given and printed
	// relative to it.
	Dir string
	// Paths are the paths to search, relative to Dir; nil means ".".
	Paths []string
	// Globs are rg --glob values (gitignore syntax, "!" excludes), matched
	// relative to Dir.
	Globs []string
	// Type is an rg --type name ("go", "py"); "" for none.
	Type string
}

// SearchQuery describes a content search.
type SearchQuery struct {
	Query
	// Pattern is a Rust regular expression, or text when Literal is set.
	Pattern    string
	IgnoreCase bool
	Literal    bool
	// Context is the number of lines shown around each match.
	Context int
	// MaxColumns is the display cut of textsearch.Display.
	MaxColumns int
}

// File is one file's part of a search result.
type File struct {
	// Path is the path as rg printed it (raw bytes), relative to Dir.
	Path string
	// Lines are the file's match and context lines, displayed with
	// textsearch.Display.
	Lines []textsearch.Line
	// BinaryOffset is the offset of the file's first NUL byte, or -1 when
	// rg saw none. With a NUL, rg stops early, so Lines may be incomplete.
	BinaryOffset int64
}

// Files lists the files rg would search under q, in path order, calling
// fn with each path as rg printed it; fn returning false stops rg.
func (r *Runner) Files(ctx context.Context, q Query, fn func(path string) bool) error {
	args := []string{"--files", "--null"}
	args = append(args, q.args()...)
	return r.run(ctx, q.Dir, args, func(out *bufio.Reader) (bool, error) {
		for {
			name, err := out.ReadString(0)
			if err == io.EOF {
				return true, nil
			}
			if err != nil {
				return false, err
			}
			if !fn(name[:len(name)-1]) {
				return false, nil
			}
		}
	})
}

// Search runs a content search and calls fn with each file's lines, in
// path order; fn returning false stops rg.
func (r *Runner) Search(ctx context.Context, q SearchQuery, fn func(File) bool) error {
	args := []string{"--json", "--binary"}
	if q.IgnoreCase {
		args = append(args, "--ignore-case")
	} else {
		args = append(args, "--case-sensitive")
	}
	if q.Literal {
		args = append(args, "--fixed-strings")
	}
	if q.Context > 0 {
		args = append(args, "--context="+strconv.Itoa(q.Context))
	}
	args = append(args, "--regexp="+q.Pattern)
	args = append(args, q.args()...)
	return r.run(ctx, q.Dir, args, func(out *bufio.Reader) (bool, error) {
		return parseJSON(out, q.MaxColumns, fn)
	})
}

// args returns the options and paths shared by both runs.
func (q Query) args() []string {
	var args []string
	for _, g := range q.Globs {
		args = append(args, "--glob="+g)
	}
	if q.Type != "" {
		args = append(args, "--type="+q.Type)
	}
	args = append(args, "--")
	if len(q.Paths) == 0 {
		return append(args, ".")
	}
	for _, p := range q.Paths {
		// A relative path that looks like an option is harmless after
		// "--", but "./" keeps it unambiguous for any reader of the call.
		if !strings.HasPrefix(p, "./") && p != "." {
			p = "./" + p
		}
		args = append(args, p)
	}
	return args
}

// commonArgs come first in every run. --sort=path makes output
// deterministic (and rg single-threaded); --no-config ignores
// RIPGREP_CONFIG_PATH even if the environment had it;
// --no-ignore-parent keeps rg from reading ignore files above the
// directory it runs in, which may lie outside the namespace (and which
// the built-in engine, reading only through the backend, cannot see).
var commonArgs = []string{"--no-config", "--sort=path", "--color=never", "--no-follow", "--no-ignore-parent"}

// run starts rg in dir with args, hands its stdout to read, and maps the
// exit status. read reports whether it consumed the whole output; when it
// stops early, rg is killed and its exit status ignored.
func (r *Runner) run(ctx context.Context, dir string, args []string, read func(*bufio.Reader) (bool, error)) error {
	path := r.Path
	if path == "" {
		path = "rg"
	}
	exe, err := exec.LookPath(path)
	if err != nil {
		return ErrNotInstalled
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	cmd := exec.CommandContext(runCtx, exe, append(append([]string(nil), commonArgs...), args...)...)
	cmd.Dir = dir
	// An empty, non-nil environment: no RIPGREP_CONFIG_PATH, no HOME (so no
	// global git excludes), nothing the host set for itself.
	cmd.Env = []string{}
	configureProcess(cmd)
	var stderr limitedBuffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case runCtx.Err() != nil:
			return ErrTimeout
		case errors.Is(err, exec.ErrNotFound):
			return ErrNotInstalled
		}
		return fmt.Errorf("rg: start: %w", err)
	}
	complete, readErr := read(bufio.NewReaderSize(stdout, 64<<10))
	if !complete || readErr != nil {
		cancel()
	}
	// Drain what is left so rg is not blocked on a full pipe when it was
	// not killed; after a kill this returns at once.
	_, _ = io.Copy(io.Discard, stdout)
	waitErr := cmd.Wait()
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case runCtx.Err() == context.DeadlineExceeded:
		return ErrTimeout
	case readErr != nil:
		return fmt.Errorf("rg: reading output: %w", readErr)
	case !complete:
		return nil
	}
	return exitError(waitErr, stderr.String(), dir)
}

// exitError maps rg's exit status: 0 (matches) and 1 (none) are success;
// 2 with a usage message is a UsageError; 2 otherwise means some files
// could not be read, which a search reports by leaving them out, as the
// other walkers do.
func exitError(err error, stderr, dir string) error {
	if err == nil {
		return nil
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return fmt.Errorf("rg: %w", err)
	}
	switch exit.ExitCode() {
	case 1:
		return nil
	case 2:
		if msg, ok := usageMessage(stderr, dir); ok {
			return &UsageError{Message: msg}
		}
		return nil
	}
	return fmt.Errorf("rg: exit status %d: %s", exit.ExitCode(), sanitize(stderr, dir))
}

// usageMessage picks out rg's complaints about its arguments, as opposed
// to complaints about files it could not read.
func usageMessage(stderr, dir string) (string, bool) {
	for _, marker := range []string{"regex parse error", "error parsing glob", "unrecognized file type", "the literal"} {
		if i := strings.Index(stderr, marker); i >= 0 {
			return strings.TrimSpace(sanitize(stderr[i:], dir)), true
		}
	}
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "error:") {
			return strings.TrimSpace(sanitize(stderr, dir)), true
		}
	}
	return "", false
}

// sanitize replaces the run directory, a host path, by ".".
func sanitize(msg, dir string) string {
	if dir == "" {
		return msg
	}
	msg = strings.ReplaceAll(msg, strings.TrimSuffix(dir, "/")+"/", "./")
	return strings.ReplaceAll(msg, dir, ".")
}

// limitedBuffer keeps the first maxStderr bytes written to it.
type limitedBuffer struct{ b bytes.Buffer }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := maxStderr - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string { return l.b.String() }

// parseJSON reads rg --json messages and calls fn per file at its "end"
// message. It reports whether it read to the end of the output.
func parseJSON(out *bufio.Reader, maxCols int, fn func(File) bool) (bool, error) {
	d := newDecoder(out, maxCols)
	var m message
	var cur File
	for {
		err := d.message(&m)
		if err == io.EOF {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		switch m.typ {
		case "begin":
			if m.path.cut {
				return false, errJSON
			}
			cur = File{Path: string(m.path.data), BinaryOffset: -1}
		case "match", "context":
			text := m.lines.data
			if !m.lines.cut {
				text = bytes.TrimSuffix(text, []byte{'\n'})
			}
			cur.Lines = append(cur.Lines, textsearch.Line{
				Number: m.lineNumber,
				Text:   textsearch.Display(text, maxCols),
				Match:  m.typ == "match",
			})
		case "end":
			cur.BinaryOffset = m.binaryOffset
			if !fn(cur) {
				return false, nil
			}
			cur = File{}
		}
	}
}
