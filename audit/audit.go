// Package audit writes a tamper-evident log of tool calls: one JSON line
// per call, each carrying the SHA-256 of the line before it, so a line
// removed from the middle, two lines swapped or one line edited breaks the
// chain at the next line, and Verify says where.
//
// A line looks like this (one line in the file; "prev" of the first line
// of a log is Genesis):
//
//	{"time":"2026-12-01T21:30:00.123456789Z","request_id":"r-17","tenant":"t1",
//	 "subject":"alice","tool":"write_file","paths":["/ws/a.txt"],"outcome":"ok",
//	 "old_hash":"sha256:…","new_hash":"sha256:…","bytes":42,"duration_ns":1830000,
//	 "prev":"5f0c…"}
//
// A chain proves order and integrity only up to its last line: whoever can
// write the file can cut lines off its end, or rewrite it from some line on
// and hash every line again. Logger.Head gives the hash of the last line
// written, for the server to report somewhere the writer of the file
// cannot reach (its metrics or its structured log); VerifyHead checks that
// the log still reaches it.
//
// A server that must not change storage unrecorded appends a change's
// record with Append (synced before it returns) before the change
// commits, and refuses changes while Err is not nil: once a write fails
// the Logger stays broken. Every record fits a line (see MaxFieldBytes).
package audit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"
)

// Genesis is the "prev" of a log's first line.
const Genesis = "0000000000000000000000000000000000000000000000000000000000000000"

// MaxLineBytes bounds one line, so Verify holds little of a corrupt file
// in memory. Every record fits: Log summarizes what would not (see
// MaxFieldBytes).
const MaxLineBytes = 1 << 20

// MaxFieldBytes bounds one string field of a line (one path, the reason,
// the tool, the identity), as JSON-escaped. Log replaces a longer value
// by a summary holding its length and SHA-256 ("[summarized: 70000 bytes,
// sha256:…]"), and keeps the paths of a record to at most half a line,
// counting the rest in PathsOmitted and hashing them all in PathsDigest,
// so a call with a huge argument, or a patch creating many files with
// long names, still leaves its line.
const MaxFieldBytes = 4096

// Outcomes of a call.
const (
	// OutcomeOK is a call that did what it was asked.
	OutcomeOK = "ok"
	// OutcomeRefused is a call refused before it touched storage: policy,
	// quota, rate limit, a failed precondition or bad arguments.
	OutcomeRefused = "refused"
	// OutcomeError is a call that failed on the way (storage, a
	// listener, the host).
	OutcomeError = "error"
	// OutcomeCancelled is a call its caller cancelled before it ended.
	OutcomeCancelled = "cancelled"
	// OutcomeTimedOut is a call that ended by a deadline, the caller's
	// or its own (tools.Options.CallTimeout).
	OutcomeTimedOut = "timed_out"
	// OutcomePending is a change about to commit, appended write-ahead
	// with Logger.Append before it touches storage; the line saying how
	// it ended follows, with the same RequestID and Tool. A pending line
	// with no such line after it is a change whose outcome the log does
	// not know (the server stopped in between): it may have committed.
	OutcomePending = "pending"
)

// Record is one call.
type Record struct {
	// Time is when the call started; zero means when Log is called.
	Time time.Time `json:"time"`
	// RequestID ties the line to the server's log and the client's
	// request.
	RequestID string `json:"request_id,omitempty"`
	// Tenant and Subject are the caller's verified identity.
	Tenant  string `json:"tenant,omitempty"`
	Subject string `json:"subject,omitempty"`
	// Tool is the tool called (required).
	Tool string `json:"tool"`
	// Paths are the namespace paths the call named: one for most tools,
	// source and destination for a copy or a move.
	Paths []string `json:"paths,omitempty"`
	// PathsOmitted counts paths Log left out of Paths for the line to
	// fit; PathsDigest is then the SHA-256 (hex) of all the paths given,
	// each followed by a newline.
	PathsOmitted int    `json:"paths_omitted,omitempty"`
	PathsDigest  string `json:"paths_sha256,omitempty"`
	// Outcome is one of OutcomeOK, OutcomeRefused, OutcomeError,
	// OutcomeCancelled, OutcomeTimedOut and OutcomePending.
	Outcome string `json:"outcome"`
	// Kind is the kind of a refusal (a tools.Kind: "not_found",
	// "denied", "quota", "rate_limited", ...), for a call refused or
	// timed out by a refusal.
	Kind string `json:"kind,omitempty"`
	// Reason says why a call was refused or failed, briefly.
	Reason string `json:"reason,omitempty"`
	// OldHash and NewHash are the content hashes before and after a
	// change ("" where there was no file).
	OldHash string `json:"old_hash,omitempty"`
	NewHash string `json:"new_hash,omitempty"`
	// Bytes is how many bytes the call wrote (or read, for a read).
	Bytes int64 `json:"bytes,omitempty"`
	// Duration is how long the call took.
	Duration time.Duration `json:"duration_ns"`
}

// line is a Record as written, with the hash of the line before it.
type line struct {
	Record
	Prev string `json:"prev"`
}

func (r *Record) check() error {
	switch {
	case r.Time.IsZero():
		return errors.New("no time")
	case r.Tool == "":
		return errors.New("no tool")
	case !slices.Contains([]string{OutcomeOK, OutcomeRefused, OutcomeError, OutcomeCancelled, OutcomeTimedOut, OutcomePending}, r.Outcome):
		return fmt.Errorf("outcome %q is none of ok, refused, error, cancelled, timed_out, pending", r.Outcome)
	case r.Duration < 0:
		return errors.New("negative duration")
	}
	return nil
}

// fit makes r's line fit MaxLineBytes: string fields over MaxFieldBytes
// become summaries, and paths beyond half a line are left out, counted
// and hashed.
func (r *Record) fit() {
	for _, f := range []*string{&r.RequestID, &r.Tenant, &r.Subject, &r.Tool, &r.Kind, &r.Reason, &r.OldHash, &r.NewHash, &r.PathsDigest} {
		*f = summarize(*f)
	}
	budget := MaxLineBytes / 2
	all := r.Paths
	kept := make([]string, 0, len(all))
	for _, p := range all {
		p = summarize(p)
		n := jsonLen(p) + 1
		if n > budget {
			break
		}
		budget -= n
		kept = append(kept, p)
	}
	if len(kept) < len(all) {
		h := sha256.New()
		for _, p := range all {
			io.WriteString(h, p)
			io.WriteString(h, "\n")
		}
		r.PathsOmitted += len(all) - len(kept)
		r.PathsDigest = hex.EncodeToString(h.Sum(nil))
	}
	r.Paths = kept
}

// summarize returns s, or when its JSON form is longer than
// MaxFieldBytes a summary of its length and SHA-256.
func summarize(s string) string {
	if len(s) <= MaxFieldBytes/6 || jsonLen(s) <= MaxFieldBytes {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return fmt.Sprintf("[summarized: %d bytes, sha256:%x]", len(s), sum)
}

// jsonLen returns the length of s as a JSON string.
func jsonLen(s string) int {
	b, _ := json.Marshal(s)
	return len(b)
}

// hashLine returns the chain value of a line written as b (without its
// newline).
func hashLine(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Logger appends records to a log. It is safe for concurrent use: lines
// are written whole, one at a time, in the order their Log calls got the
// lock. After a write fails every later Log returns that error, since a
// chain with a hole in it could not be verified past the hole.
type Logger struct {
	mu     sync.Mutex
	w      io.Writer
	prev   string
	err    error
	sync   func() error // after each line, when set
	syncer func() error // after a line of Append, when sync is nil
	closer io.Closer
}

// New returns a Logger writing to w. prev is the hash the first line
// chains to: Genesis for a new log, or the Head of the log this one
// continues (a rotated file's last line).
func New(w io.Writer, prev string) *Logger {
	l := &Logger{w: w, prev: prev}
	if s, ok := w.(interface{ Sync() error }); ok {
		l.syncer = s.Sync
	}
	return l
}

// FileOptions configure OpenFile.
type FileOptions struct {
	// Sync flushes the file to stable storage after every line, so a
	// crash loses no line whose call returned; it costs a disk flush per
	// call.
	Sync bool
}

// OpenFile returns a Logger appending to the file at path, created with
// mode 0600 when missing. The chain goes on from the file's last line.
// A last line that a crash cut short is ended with a newline and chained
// to as it is: Verify reports it, which is the truth about the file.
func OpenFile(path string, opts *FileOptions) (*Logger, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	last, torn, err := lastLine(f)
	if err == nil && torn {
		_, err = f.Write([]byte{'\n'})
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("audit: %s: %w", path, err)
	}
	l := &Logger{w: f, prev: Genesis, closer: f, syncer: f.Sync}
	if last != nil {
		l.prev = hashLine(last)
	}
	if opts != nil && opts.Sync {
		l.sync = f.Sync
	}
	return l, nil
}

// lastLine returns the file's last line without its newline, nil for an
// empty file, and whether that line lacks its newline.
func lastLine(f *os.File) ([]byte, bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	size := fi.Size()
	if size == 0 {
		return nil, false, nil
	}
	end := size
	var tail []byte
	for chunk := int64(4096); ; chunk *= 2 {
		start := max(size-chunk, 0)
		tail = make([]byte, size-start)
		if _, err := f.ReadAt(tail, start); err != nil && !errors.Is(err, io.EOF) {
			return nil, false, err
		}
		torn := tail[len(tail)-1] != '\n'
		body := tail
		if !torn {
			body = tail[:len(tail)-1]
		}
		if i := bytes.LastIndexByte(body, '\n'); i >= 0 || start == 0 {
			return bytes.Clone(body[i+1:]), torn, nil
		}
		if end-start > MaxLineBytes+1 {
			return nil, false, fmt.Errorf("last line longer than %d bytes", MaxLineBytes)
		}
	}
}

// Log appends r as one line, synced to stable storage when the Logger
// was opened with FileOptions.Sync. After a write or a sync fails, the
// Logger is broken for good: Log and Append return that error (see Err).
func (l *Logger) Log(r Record) error {
	return l.log(r, false)
}

// Append appends r as one line and returns only once the line is on
// stable storage (the file is synced, whatever FileOptions.Sync says; a
// Logger from New syncs a writer with a Sync method), so a server can
// append a change's record (OutcomePending) write-ahead, before the
// change commits, and refuse the change when Append fails.
func (l *Logger) Append(r Record) error {
	return l.log(r, true)
}

// Err returns nil while the Logger can write, and the error that broke
// it once a write or a sync failed (a full disk, a file size limit) or
// it was closed. A server refuses changes while Err is not nil, and says
// so in its log, metrics and readiness.
func (l *Logger) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

func (l *Logger) log(r Record, durable bool) error {
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	r.Time = r.Time.UTC()
	if err := r.check(); err != nil {
		return fmt.Errorf("audit: record: %w", err)
	}
	r.fit()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	b, err := json.Marshal(line{Record: r, Prev: l.prev})
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if len(b) > MaxLineBytes {
		return fmt.Errorf("audit: record of %d bytes, more than %d", len(b), MaxLineBytes)
	}
	if _, err := l.w.Write(append(b, '\n')); err != nil {
		l.err = fmt.Errorf("audit: log broken by a failed write: %w", err)
		return l.err
	}
	sync := l.sync
	if durable && sync == nil {
		sync = l.syncer
	}
	if sync != nil {
		if err := sync(); err != nil {
			l.err = fmt.Errorf("audit: log broken by a failed sync: %w", err)
			return l.err
		}
	}
	l.prev = hashLine(b)
	return nil
}

// Head returns the hash of the last line written (the prev the next line
// will carry).
func (l *Logger) Head() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.prev
}

// Close closes the file of a Logger from OpenFile; for one from New it
// does nothing. Log fails after Close.
func (l *Logger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = errors.New("audit: log closed")
	}
	if l.closer == nil {
		return nil
	}
	c := l.closer
	l.closer = nil
	return c.Close()
}

// Result is what Verify found in a log that verified.
type Result struct {
	// Lines is how many lines the log has.
	Lines int
	// Head is the hash of the last line (the prev the next line would
	// carry): compare it with an anchor kept elsewhere, since lines cut
	// off the end leave a chain that verifies (VerifyHead does).
	Head string
	// HeadLine is, for VerifyHead, the line that hashes to the head it
	// was given (0 when that head is the prev the log starts from).
	HeadLine int
}

// ErrTruncated is the error of VerifyHead for a log whose chain holds but
// never reaches the head it was given: lines were cut off its end after
// that head was reported, or it was rewritten from some line on.
var ErrTruncated = errors.New("audit: the chain holds but never reaches the head given: lines were cut off its end or rewritten")

// LineError is Verify's error: the first line that is not what the chain
// says it must be.
type LineError struct {
	// Line is the line's number, from 1.
	Line int
	// Err says what is wrong with it.
	Err error
}

func (e *LineError) Error() string { return fmt.Sprintf("audit: line %d: %v", e.Line, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }

// ErrChain is matched by a LineError whose line does not carry the hash of
// the line before it: that line, or the one before, was edited, removed,
// moved or inserted.
var ErrChain = errors.New("chain broken")

// Verify reads a log from r and checks every line: well-formed, and
// chained to the line before it, the first to Genesis. It returns a
// *LineError for the first bad line, or another error when r fails.
func Verify(r io.Reader) (Result, error) {
	return VerifyFrom(r, Genesis)
}

// VerifyHead is VerifyFrom for a log that must reach head, a Head the
// server reported (to its log or metrics, out of the audit file writer's
// reach) at some time: the log verifies only when head is prev or the
// hash of one of its lines, so lines cut off after head was reported are
// found (ErrTruncated) while lines appended since are not a fault. Given
// the last head a server reported (at its shutdown), lines after it are
// none of that server's: check also that Result.Head equals head (the
// lines after HeadLine were appended later, or forged after a cut).
func VerifyHead(r io.Reader, prev, head string) (Result, error) {
	res, err := verify(r, prev, head)
	if err != nil {
		return res, err
	}
	if head != prev && res.HeadLine == 0 {
		return res, ErrTruncated
	}
	return res, nil
}

// VerifyFrom is Verify for a log whose first line chains to prev, such as
// a file that continues a rotated one (prev is the rotated file's Head).
func VerifyFrom(r io.Reader, prev string) (Result, error) {
	return verify(r, prev, "")
}

// verify checks the log from r chained to prev, noting in HeadLine the
// first line that hashes to head.
func verify(r io.Reader, prev, head string) (Result, error) {
	br := newLineReader(r)
	res := Result{Head: prev}
	for {
		b, err := br.next()
		if errors.Is(err, io.EOF) {
			return res, nil
		}
		if err != nil {
			var le *LineError
			if errors.As(err, &le) {
				le.Line = res.Lines + 1
			}
			return res, err
		}
		res.Lines++
		if err := checkLine(b, res.Head); err != nil {
			return res, &LineError{Line: res.Lines, Err: err}
		}
		res.Head = hashLine(b)
		if head != "" && res.Head == head && res.HeadLine == 0 {
			res.HeadLine = res.Lines
		}
	}
}

// checkLine checks one line (without its newline) against the hash the
// line before it has.
func checkLine(b []byte, prev string) error {
	if len(b) == 0 {
		return errors.New("empty line")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var l line
	if err := dec.Decode(&l); err != nil {
		return fmt.Errorf("not a record: %w", err)
	}
	if dec.More() || dec.InputOffset() != int64(len(b)) {
		return errors.New("text after the record")
	}
	if l.Prev != prev {
		return fmt.Errorf("%w: prev is %s, the line before hashes to %s", ErrChain, short(l.Prev), short(prev))
	}
	if err := l.check(); err != nil {
		return err
	}
	return nil
}

func short(h string) string {
	if len(h) > 16 {
		return h[:16] + "…"
	}
	return fmt.Sprintf("%q", h)
}

// lineReader splits a log into lines of at most MaxLineBytes, each ended
// by a newline.
type lineReader struct {
	r *bufio.Reader
}

func newLineReader(r io.Reader) *lineReader { return &lineReader{r: bufio.NewReaderSize(r, 64<<10)} }

// next returns the next line without its newline, io.EOF after the last,
// or a *LineError (Line unset) for a line too long or cut short.
func (lr *lineReader) next() ([]byte, error) {
	var b []byte
	for {
		chunk, err := lr.r.ReadSlice('\n')
		b = append(b, chunk...)
		if len(b) > MaxLineBytes+1 {
			return nil, &LineError{Err: fmt.Errorf("longer than %d bytes", MaxLineBytes)}
		}
		switch {
		case err == nil:
			return b[:len(b)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF) && len(b) == 0:
			return nil, io.EOF
		case errors.Is(err, io.EOF):
			return nil, &LineError{Err: errors.New("cut short: no newline at the end")}
		default:
			return nil, fmt.Errorf("audit: %w", err)
		}
	}
}
