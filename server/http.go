package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionLimit admits at most max MCP sessions at once. A request that
// may open a session (a POST without a session id) takes a slot first;
// the slot is given back when the session it opened closes (by the
// client, or idle for the session timeout), or at once when it opened
// none.
type sessionLimit struct {
	max    int
	logger *slog.Logger

	mu   sync.Mutex
	open int
	// ended holds, per open session id, a channel closed once its slot is
	// given back, so that a DELETE answers only when the slot is free.
	ended map[string]chan struct{}
}

// count returns the number of open sessions.
func (l *sessionLimit) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

func (l *sessionLimit) acquire() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open >= l.max {
		return false
	}
	l.open++
	return true
}

func (l *sessionLimit) release() {
	l.mu.Lock()
	l.open--
	l.mu.Unlock()
}

// watch gives the slot back when ss closes.
func (l *sessionLimit) watch(ss *mcp.ServerSession) {
	ended := make(chan struct{})
	l.mu.Lock()
	if l.ended == nil {
		l.ended = map[string]chan struct{}{}
	}
	l.ended[ss.ID()] = ended
	l.mu.Unlock()
	go func() {
		ss.Wait()
		l.mu.Lock()
		l.open--
		delete(l.ended, ss.ID())
		open := l.open
		l.mu.Unlock()
		close(ended)
		l.logger.Info("MCP session ended", "session", ss.ID(), "open_sessions", open)
	}()
}

// endedChan returns the channel watch closes for the session id, or nil.
func (l *sessionLimit) endedChan(id string) chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ended[id]
}

// handler admits new sessions to next within the limit; beyond it the
// client gets 503 Service Unavailable saying why.
func (l *sessionLimit) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("Mcp-Session-Id")
		switch {
		case r.Method == http.MethodDelete && id != "":
			ended := l.endedChan(id)
			next.ServeHTTP(w, r)
			if ended != nil {
				// The answer goes out when the handler returns: by then
				// the slot is free for the client's next session.
				select {
				case <-ended:
				case <-time.After(shutdownTimeout):
				}
			}
			return
		case r.Method != http.MethodPost || id != "" || !isInitialize(r):
			// Only an initialize opens a session that lasts; the handler
			// closes any other session it opens before it answers.
			next.ServeHTTP(w, r)
			return
		}
		if !l.acquire() {
			l.logger.Warn("refused a new MCP session: too many open", "max_sessions", l.max, "remote", r.RemoteAddr)
			w.Header().Set("Retry-After", "60")
			http.Error(w, fmt.Sprintf("fencefs: too many open MCP sessions (--max-sessions %d); end one (HTTP DELETE) or wait for idle ones to expire (--session-timeout)", l.max), http.StatusServiceUnavailable)
			return
		}
		slot := &serverSlot{}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), serverSlotKey{}, slot)))
		if slot.server != nil {
			for ss := range slot.server.Sessions() {
				l.watch(ss)
				return
			}
		}
		l.release()
	})
}

// isInitialize reports whether the body of r is an initialize request,
// and leaves the body to be read again. A body larger than the handler
// accepts is left to the handler to refuse.
func isInitialize(r *http.Request) bool {
	head, err := io.ReadAll(io.LimitReader(r.Body, mcp.DefaultMaxRequestBodyBytes+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
	if err != nil {
		return false
	}
	var msg struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(head, &msg) == nil && msg.Method == "initialize"
}

// serverSlot receives the server getServer made for a request that opens
// a session.
type serverSlot struct{ server *mcp.Server }

type serverSlotKey struct{}

// recordServer tells the session limit which server serves the session req
// opens.
func recordServer(req *http.Request, server *mcp.Server) {
	if slot, ok := req.Context().Value(serverSlotKey{}).(*serverSlot); ok {
		slot.server = server
	}
}

// progressDeadlines bounds a request's reading and each of its writes by
// timeout (see serveHTTP): the connection's read deadline, set by
// http.Server.ReadTimeout when the request starts, is lifted once the body
// has been read, and the write deadline is renewed before every write and
// flush.
func progressDeadlines(next http.Handler, timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if r.Body == nil || r.Body == http.NoBody {
			rc.SetReadDeadline(time.Time{})
		} else {
			r.Body = &liftAtEOF{ReadCloser: r.Body, rc: rc}
		}
		next.ServeHTTP(&renewingWriter{ResponseWriter: w, rc: rc, timeout: timeout}, r)
	})
}

// liftAtEOF lifts the connection's read deadline when the body has been
// read to its end.
type liftAtEOF struct {
	io.ReadCloser
	rc *http.ResponseController
}

func (b *liftAtEOF) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		// Only a body read whole: after a timeout the deadline must stay,
		// or discarding the rest of the body would wait forever.
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// renewingWriter renews the connection's write deadline before each write
// and flush.
type renewingWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func (w *renewingWriter) renew() { w.rc.SetWriteDeadline(time.Now().Add(w.timeout)) }

func (w *renewingWriter) Write(p []byte) (int, error) {
	w.renew()
	return w.ResponseWriter.Write(p)
}

func (w *renewingWriter) WriteHeader(code int) {
	w.renew()
	w.ResponseWriter.WriteHeader(code)
}

func (w *renewingWriter) FlushError() error {
	w.renew()
	return w.rc.Flush()
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *renewingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// A server's connections are bounded below the process's descriptor
// limit: each holds a descriptor, and a process that has none left can
// neither accept a connection (the listener's accept fails with EMFILE
// and the client waits in the kernel's backlog) nor open a tenant's file.
// Up to the bound a connection is served as usual. Beyond it, a few
// spare connections are still accepted and answered at once: GET
// /healthz is served (the process answers), anything else gets 503 with
// a body that says why, and the connection is closed after the answer.
// While every spare connection is answering, the next one waits in the
// kernel's backlog for one of them to close (a spare connection lasts an
// answer, or the read timeout for a client that sends nothing). Either
// way the listener keeps accepting, and connections come back as clients
// close theirs.

// DefaultMaxConnections returns the bound on the connections Serve keeps
// open when ServeOptions.MaxConnections is 0: a quarter of the process's
// soft limit on open files, at least 8, or 0, no bound, when the limit
// cannot be read or is unlimited. Local storage keeps up to another
// quarter for its idle roots, which it gives back when a call finds no
// descriptor left; the rest is for the files calls open.
func DefaultMaxConnections() int {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) != nil || rl.Cur == 0 || rl.Cur >= 1<<40 {
		return 0
	}
	return int(max(rl.Cur/4, 8))
}

// spareConnections returns how many connections beyond the bound are
// still accepted to be answered and closed.
func spareConnections(bound int) int {
	return min(max(bound/8, 2), 64)
}

// connectionLimitText is the body of the 503 a connection beyond the
// bound gets.
func connectionLimitText(bound int) string {
	return fmt.Sprintf("fencefs: the server has %d connections open, its bound below the process's limit on open files; retry later", bound)
}

// boundedListener bounds the connections it hands out (see
// DefaultMaxConnections).
type boundedListener struct {
	net.Listener
	max, spare int
	logger     *slog.Logger

	mu          sync.Mutex
	slot        *sync.Cond // signalled when a connection closes, or the listener
	open, over  int        // connections within the bound, and spare ones
	done        bool       // Close was called
	lastWarning time.Time  // of the last warning, so that a flood logs a line a second
	events      int        // refusals and failed accepts since the last warning
}

func newBoundedListener(ln net.Listener, bound int, logger *slog.Logger) *boundedListener {
	l := &boundedListener{Listener: ln, max: bound, spare: spareConnections(bound), logger: logger}
	l.slot = sync.NewCond(&l.mu)
	return l
}

// boundedConn is a connection that boundedListener counts until it is
// closed.
type boundedConn struct {
	net.Conn
	l     *boundedListener
	spare bool
	once  sync.Once
}

func (c *boundedConn) Close() error {
	c.once.Do(func() { c.l.closed(c.spare) })
	return c.Conn.Close()
}

// Accept waits for a slot, within the bound or spare, and returns the
// next connection in it.
func (l *boundedListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	for !l.done && l.open >= l.max && l.over >= l.spare {
		l.slot.Wait()
	}
	l.mu.Unlock()
	c, err := l.Listener.Accept()
	if err != nil {
		if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
			l.warn("no file descriptor left to accept a connection; retrying", err)
		}
		return nil, err
	}
	l.mu.Lock()
	if l.open < l.max {
		l.open++
		l.mu.Unlock()
		return &boundedConn{Conn: c, l: l}, nil
	}
	l.over++
	l.mu.Unlock()
	l.warn("refusing connections: too many open", nil)
	return &boundedConn{Conn: c, l: l, spare: true}, nil
}

// Close closes the listener and ends a wait for a slot.
func (l *boundedListener) Close() error {
	l.mu.Lock()
	l.done = true
	l.slot.Broadcast()
	l.mu.Unlock()
	return l.Listener.Close()
}

// closed gives back the slot of a connection.
func (l *boundedListener) closed(spare bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if spare {
		l.over--
	} else {
		l.open--
	}
	l.slot.Signal()
}

// warn logs msg at most once a second, with the number of events
// (refused connections, failed accepts) since the last line.
func (l *boundedListener) warn(msg string, err error) {
	l.mu.Lock()
	l.events++
	now := time.Now()
	if now.Sub(l.lastWarning) < time.Second {
		l.mu.Unlock()
		return
	}
	events := l.events
	l.lastWarning, l.events = now, 0
	open, over := l.open, l.over
	l.mu.Unlock()
	args := []any{"max_connections", l.max, "open_connections", open + over, "events", events}
	if err != nil {
		args = append(args, "error", err)
	}
	l.logger.Warn(msg, args...)
}

type spareConnKey struct{}

// connContext marks the requests of a spare connection.
func connContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if bc, ok := c.(*boundedConn); ok && bc.spare {
		return context.WithValue(ctx, spareConnKey{}, true)
	}
	return ctx
}

// answerSpare serves the requests of a spare connection: GET /healthz by
// next, anything else 503 saying why; the connection closes after the
// answer.
func answerSpare(next http.Handler, bound int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Context().Value(spareConnKey{}) == nil {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Connection", "close")
		if r.Method == http.MethodGet && r.URL.Path == "/healthz" {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Retry-After", "5")
		http.Error(w, connectionLimitText(bound), http.StatusServiceUnavailable)
	})
}
