// Package rg runs ripgrep for the grep tool, with care for what a model
// controls and what a workspace holds: the pattern and globs are passed
// as option values (never as arguments rg could read as options), paths
// follow "--", no shell is involved, the user's configuration and
// environment are kept out (--no-config, an empty environment), no
// ignore file is ever read (the --no-ignore family: the caller applies
// the ignore rules it reads through its storage), links are never
// followed, preprocessors are never run, file names in the output end
// with a NUL, so no file name can forge a line (see output.go), and
// nothing rg writes to its error output reaches the caller.
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
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
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

// DefaultMaxMemory bounds rg's address space when Runner.MaxMemory is
// zero. A search of ordinary files needs under 32 MiB.
const DefaultMaxMemory = 1 << 30

// ErrOutOfMemory is returned when rg ran out of the memory it may use
// (Runner.MaxMemory). rg holds a whole line while it searches it, so a
// file with a line of hundreds of megabytes ends the run.
var ErrOutOfMemory = errors.New("rg: ripgrep ran out of memory")

// ErrPattern is returned when rg could not use the pattern, and ErrGlob
// when it could not use a glob. Neither carries rg's words: the caller
// explains the fault itself.
var (
	ErrPattern = errors.New("rg: ripgrep could not use the pattern")
	ErrGlob    = errors.New("rg: ripgrep could not use a glob")
)

// ErrSpecialFile is returned when rg was stopped because it waited on a
// FIFO: rg skips the special files it lists, so one it opens was swapped
// in for a regular file after its directory was listed, and would hold
// the run until someone writes to it. The caller searches again with an
// engine that never opens a special file.
var ErrSpecialFile = errors.New("rg: ripgrep was held by a special file")

// ErrArgTooLong: the host refused to start ripgrep because an argument
// (a pattern or glob) is longer than it passes to a program (E2BIG).
var ErrArgTooLong = errors.New("rg: an argument is too long to start ripgrep")

// Runner runs rg. The zero value runs "rg" from PATH with DefaultTimeout.
type Runner struct {
	// Path is the rg executable; "" means "rg" looked up in PATH.
	Path string
	// Timeout bounds one run; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxMemory bounds rg's address space (RLIMIT_AS, set on Linux as
	// soon as rg starts); 0 means DefaultMaxMemory and a negative value
	// sets no bound.
	MaxMemory int64
	// Slots, when set, bounds how many rg processes run at once among the
	// runners sharing it: a run waits for a slot, until its context ends
	// or its deadline passes.
	Slots Slots
}

// Slots is the bound of Runner.Slots; *semaphore.Weighted is one.
type Slots interface {
	Acquire(ctx context.Context, n int64) error
	Release(n int64)
}

// Installed reports whether the rg executable can be found.
func (r *Runner) Installed() bool {
	_, err := exec.LookPath(r.path())
	return err == nil
}

// path returns the executable to look up.
func (r *Runner) path() string {
	if r.Path == "" {
		return "rg"
	}
	return r.Path
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
	// Prune names directories, relative to Dir, that rg need not enter:
	// each becomes an anchored excluding glob after Globs, so rg neither
	// lists nor searches below it. Those beyond maxBatchBytes of globs are
	// left out (rg then searches them), so Prune only saves work: the
	// caller still judges every file rg reports.
	Prune []string
}

// SearchQuery describes a content search. rg reports matching lines
// only: with --context, ripgrep 13 says nothing of a binary file whose
// NUL lies in its first read, so callers read context lines themselves.
type SearchQuery struct {
	Query
	// Pattern is a Rust regular expression, or text when Literal is set.
	Pattern    string
	IgnoreCase bool
	Literal    bool
	// MaxColumns is the display cut of textsearch.Display.
	MaxColumns int
	// MaxLines bounds the lines reported for one file; 0 means no bound.
	// A file with more is reported as soon as its first MaxLines lines
	// are known, and the rest of its report is read and dropped.
	MaxLines int
}

// File is one file's part of a search result.
type File struct {
	// Path is the path as rg printed it (raw bytes), relative to Dir.
	Path string
	// Lines are the file's matching lines, displayed with
	// textsearch.Display.
	Lines []textsearch.Line
	// BinaryOffset is the offset of the file's first NUL byte, or -1 when
	// rg saw none. With a NUL, rg stops early, so Lines may be incomplete.
	BinaryOffset int64
	// Incomplete is set when the runner stopped reading rg's report of
	// the file because it grew past MaxFileOutput: Lines hold only the
	// first of its lines, and BinaryOffset is unknown. The search goes on
	// with the files after it; the caller searches this file another way
	// if it wants all of it.
	Incomplete bool
}

// MaxFileOutput is how much of rg's output the runner reads for one file
// before it stops rg and reports the file Incomplete. A file's lines are
// cut for display, but a big file can have millions of them: reading them
// all only to drop them (for a file the caller does not show) would take
// longer than searching the rest of the tree.
const MaxFileOutput = 32 << 20

// maxFileOutput is MaxFileOutput, lowered by tests.
var maxFileOutput int64 = MaxFileOutput

// maxBatchBytes bounds the file names given to one rg run when a search
// goes on after an Incomplete file, well below the kernel's limit on the
// size of a command line.
var maxBatchBytes = 128 << 10

// Files lists the files rg would search under q, in path order, calling
// fn with each path as rg printed it; fn returning false stops rg.
func (r *Runner) Files(ctx context.Context, q Query, fn func(path string) bool) error {
	return r.files(ctx, time.Now().Add(r.timeout()), q, fn)
}

// files is Files with a deadline.
func (r *Runner) files(ctx context.Context, deadline time.Time, q Query, fn func(path string) bool) error {
	args := []string{"--files", "--null"}
	args = append(args, q.args()...)
	return r.run(ctx, deadline, q.Dir, args, func(out *bufio.Reader, _ func() int64) (bool, error) {
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
// path order; fn returning false stops rg. The runner's timeout bounds
// the whole search.
//
// When one file's report outgrows MaxFileOutput, rg is stopped, the file
// is reported Incomplete, and the search goes on after it: rg lists the
// files it would search, and those after the file are searched by name.
func (r *Runner) Search(ctx context.Context, q SearchQuery, fn func(File) bool) error {
	deadline := time.Now().Add(r.timeout())
	more, abandoned, err := r.searchOnce(ctx, deadline, q, fn)
	if err != nil || !more || abandoned == "" {
		return err
	}
	var rest []string
	err = r.files(ctx, deadline, q.Query, func(name string) bool {
		if pathLess(abandoned, name) {
			rest = append(rest, name)
		}
		return true
	})
	for err == nil && len(rest) > 0 {
		n := fitArgs(rest, maxBatchBytes)
		if n == 0 {
			n = 1
		}
		bq := q
		// rg prints a name it is given as it was given, and the listed
		// names already passed the globs, type and ignore files.
		bq.Paths = rest[:n]
		if more, abandoned, err = r.searchOnce(ctx, deadline, bq, fn); err != nil || !more {
			return err
		}
		if abandoned == "" {
			rest = rest[n:]
			continue
		}
		i := slices.Index(rest[:n], abandoned)
		if i < 0 {
			return fmt.Errorf("rg: reported %q, which it was not given", abandoned)
		}
		rest = rest[i+1:]
	}
	return err
}

// searchOnce runs rg once. more is false when fn stopped the search;
// abandoned names the Incomplete file rg was stopped in, leaving the
// files after it unsearched.
func (r *Runner) searchOnce(ctx context.Context, deadline time.Time, q SearchQuery, fn func(File) bool) (more bool, abandoned string, err error) {
	args := []string{"--null", "--with-filename", "--line-number", "--no-heading", "--no-context-separator", "--binary"}
	if keep := textsearch.DisplayBytes(q.MaxColumns); keep > 0 {
		// rg cuts a longer line to a preview of keep bytes, which shows
		// the MaxColumns characters displayed and that there are more.
		args = append(args, "--max-columns="+strconv.Itoa(keep), "--max-columns-preview")
	}
	if q.IgnoreCase {
		args = append(args, "--ignore-case")
	} else {
		args = append(args, "--case-sensitive")
	}
	if q.Literal {
		args = append(args, "--fixed-strings")
	}
	args = append(args, "--regexp="+q.Pattern)
	args = append(args, q.args()...)
	more = true
	err = r.run(ctx, deadline, q.Dir, args, func(out *bufio.Reader, offset func() int64) (bool, error) {
		lim := limits{maxLines: q.MaxLines, maxOutput: maxFileOutput, offset: offset}
		complete, p, err := parseOutput(out, q.MaxColumns, lim, fn)
		more, abandoned = complete || p != "", p
		return complete, err
	})
	return more, abandoned, err
}

// pathLess reports whether rg --sort=path meets path a before path b:
// it sorts the entries of each directory by name, so paths compare name
// by name.
func pathLess(a, b string) bool {
	for {
		i, j := strings.IndexByte(a, '/'), strings.IndexByte(b, '/')
		x, y := a, b
		if i >= 0 {
			x = a[:i]
		}
		if j >= 0 {
			y = b[:j]
		}
		if x != y {
			return x < y
		}
		if i < 0 || j < 0 {
			return i < 0 && j >= 0
		}
		a, b = a[i+1:], b[j+1:]
	}
}

// fitArgs returns how many of args, from the first, fit in limit bytes
// of a command line.
func fitArgs(args []string, limit int) int {
	n, size := 0, 0
	for n < len(args) && size+len(args[n])+1 <= limit {
		size += len(args[n]) + 1
		n++
	}
	return n
}

// args returns the options and paths shared by both runs.
func (q Query) args() []string {
	var args []string
	for _, g := range q.Globs {
		args = append(args, "--glob="+g)
	}
	// The excluding globs come after the caller's, since the last glob
	// that matches a path decides.
	prune := make([]string, 0, len(q.Prune))
	for _, d := range q.Prune {
		prune = append(prune, "--glob=!/"+EscapeGlob(d)+"/")
	}
	args = append(args, prune[:fitArgs(prune, maxBatchBytes)]...)
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

// EscapeGlob returns a glob matching the path p literally: each of rg's
// glob metacharacters (and "#", "!" and spaces, which mean something at
// the ends of a gitignore line) behind a backslash.
func EscapeGlob(p string) string {
	var b strings.Builder
	for _, c := range p {
		if strings.ContainsRune(`*?[]{}\!# `, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// commonArgs come first in every run. --sort=path makes output
// deterministic (and rg single-threaded); --no-config ignores
// RIPGREP_CONFIG_PATH even if the environment had it; the --no-ignore
// family keeps rg from opening any ignore file (in a directory, above
// it, git's exclude file a .git file may lead anywhere to, a global
// excludes file, or one named by an option): rg opens them by host path,
// following links and blocking on FIFOs, so the caller applies the rules
// of those it reads through its storage instead; --no-messages keeps
// the names of files rg could not read out of its error output.
var commonArgs = []string{"--no-config", "--sort=path", "--color=never", "--no-follow",
	"--no-ignore", "--no-ignore-dot", "--no-ignore-vcs", "--no-ignore-exclude", "--no-ignore-global",
	"--no-ignore-parent", "--no-ignore-files", "--no-messages"}

// timeout returns the bound of one Files or Search call.
func (r *Runner) timeout() time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return DefaultTimeout
}

// run starts rg in dir with args, hands its stdout to read with a
// function telling how many bytes of it read consumed, and maps the exit
// status. read reports whether it consumed the whole output; when it
// stops early, rg is killed and its exit status ignored. At the deadline
// rg is killed and run returns ErrTimeout.
func (r *Runner) run(ctx context.Context, deadline time.Time, dir string, args []string, read func(out *bufio.Reader, offset func() int64) (bool, error)) error {
	exe, err := exec.LookPath(r.path())
	if err != nil {
		return ErrNotInstalled
	}
	runCtx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	if r.Slots != nil {
		if err := r.Slots.Acquire(runCtx, 1); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return ErrTimeout
		}
		defer r.Slots.Release(1)
	}

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
		case argTooLong(err):
			return ErrArgTooLong
		}
		return fmt.Errorf("rg: start: %w", err)
	}
	if r.MaxMemory >= 0 {
		limit := r.MaxMemory
		if limit == 0 {
			limit = DefaultMaxMemory
		}
		if err := limitMemory(cmd.Process.Pid, limit); err != nil {
			cancel()
			_ = cmd.Wait()
			return fmt.Errorf("rg: bounding its memory: %w", err)
		}
	}
	var held atomic.Bool
	stopWatch := watchFIFOs(cmd.Process.Pid, func() { held.Store(true); cancel() })
	defer stopWatch()
	cr := &countingReader{r: stdout}
	br := bufio.NewReaderSize(cr, 64<<10)
	complete, readErr := read(br, func() int64 { return cr.n - int64(br.Buffered()) })
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
	case held.Load():
		return ErrSpecialFile
	case runCtx.Err() == context.DeadlineExceeded:
		return ErrTimeout
	case outOfMemory(waitErr, stderr.String()):
		return ErrOutOfMemory
	case readErr != nil:
		return fmt.Errorf("rg: reading output: %w", readErr)
	case !complete:
		return nil
	}
	return exitError(waitErr, stderr.String())
}

// outOfMemory reports whether rg ended for want of memory: Rust aborts a
// process whose allocation fails, after saying so.
func outOfMemory(waitErr error, stderr string) bool {
	var exit *exec.ExitError
	if !errors.As(waitErr, &exit) {
		return false
	}
	return strings.Contains(stderr, "memory allocation of") || aborted(exit)
}

// exitError maps rg's exit status: 0 (matches) and 1 (none) are success;
// 2 after a complaint about the pattern or a glob is ErrPattern or
// ErrGlob; 2 otherwise means some files could not be read, which a
// search reports by leaving them out, as the other walkers do. rg's own
// words never leave the package: they may quote what it read.
func exitError(err error, stderr string) error {
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
		// With --no-messages rg says nothing of files it could not read:
		// what it says is about its arguments ("regex parse error", "the
		// literal '\n' is not allowed", "error parsing glob").
		switch {
		case strings.HasPrefix(stderr, "error parsing glob"):
			return ErrGlob
		case strings.TrimSpace(stderr) != "":
			return ErrPattern
		}
		return nil
	}
	return fmt.Errorf("rg: exit status %d", exit.ExitCode())
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

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
