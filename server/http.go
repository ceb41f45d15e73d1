package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
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
