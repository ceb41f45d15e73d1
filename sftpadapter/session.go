package sftpadapter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// session is one connection to the server with its SFTP client.
type session struct {
	client *sftp.Client
	reqs   *requestWatcher
	// abort tears the transport down at once, failing every request in
	// flight; it must not wait for the server.
	abort  func()
	dead   chan struct{} // closed once the SFTP client has shut down
	closed atomic.Bool   // set by close, before the client notices
	once   sync.Once
}

// newSession starts an SFTP client over the stream (r, w), with the
// directory-name filter between them, and watches it for shutdown.
func newSession(r io.Reader, w io.WriteCloser, abort func()) (*session, error) {
	ids := newIDSet()
	reqs := &requestWatcher{w: w, ids: ids}
	client, err := sftp.NewClientPipe(&nameFilter{r: r, ids: ids}, reqs, sftp.UseConcurrentWrites(true))
	if err != nil {
		abort()
		return nil, err
	}
	s := &session{client: client, reqs: reqs, abort: abort, dead: make(chan struct{})}
	go func() {
		_ = client.Wait()
		close(s.dead)
	}()
	return s, nil
}

// dialSSH connects to the server, logs in and starts the SFTP subsystem,
// giving up when ctx ends or the dial timeout passes.
func (f *FS) dialSSH(ctx context.Context) (*session, error) {
	ctx, cancel := context.WithTimeout(ctx, f.dialTO)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", f.addr)
	if err != nil {
		return nil, fmt.Errorf("sftpadapter: dial: %w", err)
	}
	// The handshake and the subsystem request block on the server; closing
	// the socket is the only way to stop them.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	s, err := startSSH(conn, f.addr, f.sshConf)
	if !stop() {
		if s != nil {
			s.close()
		}
		conn.Close()
		return nil, fmt.Errorf("sftpadapter: dial: %w", ctx.Err())
	}
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("sftpadapter: dial: %w", err)
	}
	return s, nil
}

// startSSH runs the SSH handshake on conn and opens the SFTP subsystem.
func startSSH(conn net.Conn, addr string, conf *ssh.ClientConfig) (*session, error) {
	c, chans, reqs, err := ssh.NewClientConn(conn, addr, conf)
	if err != nil {
		return nil, err
	}
	client := ssh.NewClient(c, chans, reqs)
	abort := func() { client.Close() }
	sess, err := client.NewSession()
	if err != nil {
		abort()
		return nil, err
	}
	w, err := sess.StdinPipe()
	if err != nil {
		abort()
		return nil, err
	}
	r, err := sess.StdoutPipe()
	if err != nil {
		abort()
		return nil, err
	}
	if err := sess.RequestSubsystem("sftp"); err != nil {
		abort()
		return nil, err
	}
	return newSession(r, w, abort)
}

// alive reports whether the session's connection still works, as far as
// the client knows.
func (s *session) alive() bool {
	if s.closed.Load() {
		return false
	}
	select {
	case <-s.dead:
		return false
	default:
		return true
	}
}

// close shuts the session down without waiting for the server.
func (s *session) close() {
	s.closed.Store(true)
	s.once.Do(s.abort)
}

// run calls fn with the session's client. When ctx ends before fn
// returns, the connection is closed so that fn stops waiting, and run
// returns the cause of ctx's end instead of fn's error.
func (s *session) run(ctx context.Context, fn func(s *session) error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	stop := context.AfterFunc(ctx, s.close)
	err := fn(s)
	if !stop() && err != nil {
		return context.Cause(ctx)
	}
	return err
}

// errClosed is returned by calls on a closed FS.
var errClosed = errors.New("sftpadapter: use of closed FS")

// session returns a live session, dialling a new one when there is none
// or the last one broke. fresh reports whether it was dialled just now.
// Temporary files left by abandoned writes are removed first.
func (f *FS) session(ctx context.Context) (s *session, fresh bool, err error) {
	s, err = f.current()
	if err != nil {
		return nil, false, err
	}
	if s == nil {
		if s, fresh, err = f.redial(ctx); err != nil {
			return nil, false, err
		}
	}
	f.removeOrphans(ctx, s)
	return s, fresh, nil
}

// current returns the live session, or nil when there is none.
func (f *FS) current() (*session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, errClosed
	}
	if f.cur != nil && f.cur.alive() {
		return f.cur, nil
	}
	return nil, nil
}

// redial dials a new session, one dial at a time; callers that waited for
// another caller's dial use its session.
func (f *FS) redial(ctx context.Context) (*session, bool, error) {
	select {
	case f.dialing <- struct{}{}:
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
	defer func() { <-f.dialing }()
	if s, err := f.current(); s != nil || err != nil {
		return s, false, err
	}
	s, err := f.newSession(ctx)
	if err != nil {
		return nil, false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		s.close()
		return nil, false, errClosed
	}
	if f.cur != nil {
		f.cur.close()
	}
	f.cur = s
	return s, true, nil
}

// newSession dials a session that reports its requests to onRequest.
func (f *FS) newSession(ctx context.Context) (*session, error) {
	s, err := f.dialSession(ctx)
	if err != nil {
		return nil, err
	}
	// Set before any caller sees s, so no request goes uncounted.
	s.reqs.onRequest = f.onRequest
	return s, nil
}

// drop forgets s after a transport failure, so the next call redials.
func (f *FS) drop(s *session) {
	s.close()
	f.mu.Lock()
	if f.cur == s {
		f.cur = nil
	}
	f.mu.Unlock()
}

// opContext applies the FS's per-call timeout to ctx.
func (f *FS) opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if f.opTO > 0 {
		return context.WithTimeout(ctx, f.opTO)
	}
	return context.WithCancel(ctx)
}

// do runs fn on a live session with ctx's deadline. A transport failure
// drops the session; when retry is set and the session was not dialled
// for this call (the failure is then most likely a connection that broke
// between calls), fn runs once more on a new session. Only calls that may
// safely run twice set retry.
func (f *FS) do(ctx context.Context, retry bool, fn func(s *session) error) error {
	for attempt := 0; ; attempt++ {
		s, fresh, err := f.session(ctx)
		if err != nil {
			return err
		}
		err = s.run(ctx, fn)
		if err == nil || (!isTransportErr(err) && s.alive()) {
			return err
		}
		f.drop(s)
		if ctx.Err() != nil || !retry || fresh || attempt > 0 {
			return err
		}
	}
}

// isTransportErr reports whether err came from the connection rather than
// from an answer of the server, so that the session should be dropped. A
// context error is neither: when the context ended during a call, run
// has closed the session already.
func isTransportErr(err error) bool {
	var pe *fs.PathError
	for errors.As(err, &pe) && pe.Err != err {
		err = pe.Err
	}
	switch {
	case err == nil, err == io.EOF,
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		// A bare EOF is the server's end-of-file or end-of-listing answer.
		return false
	case errors.Is(err, sftp.ErrSSHFxConnectionLost),
		errors.Is(err, io.EOF), // wrapped: a send on a closed channel
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ECONNRESET):
		return true
	}
	// An error of the network, but not any errno: syscall.Errno too
	// satisfies net.Error, and a file system's errno (EFBIG, EMFILE)
	// says nothing of the connection.
	var ne net.Error
	if !errors.As(err, &ne) {
		return false
	}
	_, errno := ne.(syscall.Errno)
	return !errno
}

// removeOrphans deletes temporary files left by writes that were
// abandoned while the server could not be reached. Files it cannot remove
// stay listed for a later call.
func (f *FS) removeOrphans(ctx context.Context, s *session) {
	f.mu.Lock()
	if len(f.orphans) == 0 {
		f.mu.Unlock()
		return
	}
	paths := make([]string, 0, len(f.orphans))
	for p := range f.orphans {
		paths = append(paths, p)
	}
	clear(f.orphans)
	f.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
	defer cancel()
	for _, p := range paths {
		err := s.run(ctx, func(s *session) error { return s.client.Remove(p) })
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			f.addOrphan(p)
		}
	}
}

// cleanupTimeout bounds the removal of a temporary file once its write's
// own context has ended.
const cleanupTimeout = 5 * time.Second

// addOrphan remembers a temporary file that could not be removed.
func (f *FS) addOrphan(p string) {
	f.mu.Lock()
	f.orphans[p] = struct{}{}
	f.mu.Unlock()
}
