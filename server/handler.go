package server

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/fencefs/fencefs/mcpserver"
	"github.com/fencefs/fencefs/tenant"
	"github.com/fencefs/fencefs/tools"
)

// Defaults of HTTPConfig.
const (
	// DefaultSessionTimeout closes a session after 10 idle minutes.
	DefaultSessionTimeout = 10 * time.Minute
	// DefaultMaxSessions bounds the open sessions; each holds about
	// 100 KB.
	DefaultMaxSessions = 1000
	// DefaultHTTPTimeout bounds the arrival of a request and each write
	// of an answer.
	DefaultHTTPTimeout = 30 * time.Second
)

// shutdownTimeout bounds how long Serve waits for requests in flight
// when it is asked to stop.
const shutdownTimeout = 5 * time.Second

// metadataPath is where RFC 9728 puts the metadata of the resource /mcp.
const metadataPath = "/.well-known/oauth-protected-resource/mcp"

// Handler returns the server's HTTP handler: the MCP endpoint at /mcp,
// /healthz (the process answers), /readyz (Ready passes), /metrics, and
// with Identity the RFC 9728 protected-resource metadata. Serve it with
// Serve, or mount MCPHandler on a mux of your own.
func (s *Server) Handler() http.Handler { return s.handler }

// MCPHandler returns the MCP endpoint alone, with identity, tenants,
// session limits and request ids, for a platform's own mux.
func (s *Server) MCPHandler() http.Handler { return s.mcpHandler }

func (s *Server) newHandler() http.Handler {
	hc := s.cfg.HTTP
	var handler http.Handler = mcp.NewStreamableHTTPHandler(s.getServer,
		&mcp.StreamableHTTPOptions{Logger: mcpserver.SDKLogger(s.logger), SessionTimeout: cmp.Or(hc.SessionTimeout, DefaultSessionTimeout), Stateless: s.cfg.Stateless, MaxRequestBodyBytes: hc.MaxRequestBytes})
	// The SDK's lines find their request's tenant and id by goroutine.
	handler = bindLogs(handler)
	mux := http.NewServeMux()
	s.health(mux)
	mux.Handle("GET /metrics", s.metrics.Handler())
	var limit *sessionLimit
	if !s.cfg.Stateless {
		limit = &sessionLimit{max: cmp.Or(hc.MaxSessions, DefaultMaxSessions), logger: s.logger}
		handler = limit.handler(handler)
	}
	s.metrics.gauge("fencefs_open_sessions", "Open MCP sessions (--stateful; stateless HTTP keeps none).", func() float64 {
		if limit == nil {
			return 0
		}
		return float64(limit.count())
	})
	health := s.cfg.Audit.Health
	s.metrics.gauge("fencefs_audit_broken", "1 when the audit log cannot be written and changes are refused.", func() float64 {
		if health.Err() != nil {
			return 1
		}
		return 0
	})
	s.metrics.gauge("fencefs_shared_mcp_servers", "MCP servers the namespaces share: one per tool list and tool texts, whatever the number of tenants (a stateful session's own are not counted).", func() float64 {
		s.sharedMu.Lock()
		defer s.sharedMu.Unlock()
		return float64(s.sharedCount)
	})
	slots := s.cfg.Namespace.Tools.RipgrepSlots
	s.metrics.gauge("fencefs_ripgrep_running", "ripgrep processes running (the server runs at most one per CPU at once).", func() float64 {
		return float64(slots.Running())
	})
	handler = promhttp.InstrumentHandlerInFlight(s.metrics.inFlight, handler)
	if s.tenants != nil {
		handler = tenant.WithValue(s.tenants, handler)
	} else if s.sessions != nil {
		handler = s.sessionHandler(handler)
	}
	if s.cfg.Identity != nil {
		handler = s.identify(mux, handler)
	}
	s.mcpHandler = RequestID(http.NewCrossOriginProtection().Handler(handler))
	mux.Handle("/mcp", s.mcpHandler)
	return mux
}

// getServer gives the MCP server of a request (see
// mcp.NewStreamableHTTPHandler): the one of its tenant's namespace and
// the tools its identity's scopes grant.
func (s *Server) getServer(req *http.Request) *mcp.Server {
	if s.sessions != nil {
		return s.sessionServer(req)
	}
	v := s.single
	if s.tenants != nil {
		v, _ = tenant.ValueFrom[*Servers](req.Context())
	}
	if v == nil {
		return nil // not reached: WithValue answered already
	}
	newSession := !s.cfg.Stateless && req.Header.Get("Mcp-Session-Id") == ""
	if newSession {
		// The SDK asks twice for the server of a request; a session's
		// is built once.
		if srv := recordedServer(req); srv != nil {
			return srv
		}
	}
	server, err := v.Server(s.toolList(req.Context(), v.offered), newSession)
	if err != nil {
		// The options built the namespace's first set: this does not happen.
		s.logger.Error("building a tool set", "error", err)
		return nil
	}
	if newSession {
		recordServer(req, server)
	}
	return server
}

// recordedServer returns the server recordServer recorded for req, if
// any.
func recordedServer(req *http.Request) *mcp.Server {
	if slot, ok := req.Context().Value(serverSlotKey{}).(*serverSlot); ok {
		return slot.server
	}
	return nil
}

// toolList returns the tools the caller of ctx may use out of offered;
// nil without authentication (every tool). Scopes that grant none of
// offered give an empty list, never nil, which would offer all.
func (s *Server) toolList(ctx context.Context, offered []string) []string {
	if s.cfg.Identity == nil {
		return nil
	}
	id, err := tenant.FromContext(ctx)
	if err != nil {
		return []string{} // not reached: Identify let no such request through
	}
	if list := s.grants.Tools(id.Scopes, offered); list != nil {
		return list
	}
	return []string{}
}

// identify wraps the MCP handler with the identity check, and serves the
// protected-resource metadata, so that an OAuth client learns from a 401
// where to get a token.
func (s *Server) identify(mux *http.ServeMux, mcpHandler http.Handler) http.Handler {
	opts := &IdentifyOptions{Grants: s.grants, ClockSkew: cmp.Or(s.cfg.ClockSkew, 30*time.Second)}
	if s.cfg.ResourceURL != "" {
		meta := &oauthex.ProtectedResourceMetadata{
			Resource:               s.cfg.ResourceURL,
			ScopesSupported:        s.grants.Scopes(),
			BearerMethodsSupported: []string{"header"},
			AuthorizationServers:   s.cfg.AuthorizationServers,
		}
		opts.ResourceMetadataURL = strings.TrimSuffix(s.cfg.ResourceURL, "/mcp") + metadataPath
		mh := auth.ProtectedResourceMetadataHandler(meta)
		mux.Handle(metadataPath, mh)
		mux.Handle("/.well-known/oauth-protected-resource", mh)
	}
	return Identify(s.cfg.Identity, opts)(mcpHandler)
}

// health serves /healthz (the process answers) and /readyz (Ready
// passes).
func (s *Server) health(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := s.Ready(r.Context()); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
}

// readiness returns the check of /readyz for ns: every mount (or the
// root) answers a file_info within the storage deadline.
func readiness(ns *Namespace, c NamespaceConfig) func(context.Context) error {
	paths := []string{"."}
	if len(c.Mounts) > 0 {
		paths = nil
		for _, m := range c.Mounts {
			paths = append(paths, "/"+m.Name)
		}
	}
	return func(ctx context.Context) error {
		set, err := tools.New(ns.b, tools.Options{Tools: []string{"file_info"}, NoDefaultProtect: true})
		if err != nil {
			return err
		}
		for _, p := range paths {
			cctx, cancel := context.WithTimeout(ctx, c.StorageTimeout)
			raw, _ := json.Marshal(map[string]string{"path": p})
			_, err := set.Call(cctx, "file_info", raw)
			cancel()
			if err != nil {
				return fmt.Errorf("%s: %s", p, tools.Message(err))
			}
		}
		return nil
	}
}

// ServeOptions configure Serve.
type ServeOptions struct {
	// Timeout bounds a request's arrival and each write of its answer
	// (default DefaultHTTPTimeout).
	Timeout time.Duration
	// TLSCert and TLSKey, given together, serve HTTPS.
	TLSCert, TLSKey string
	// Logger receives the HTTP server's errors.
	Logger *slog.Logger
	// MaxConnections bounds the connections kept open; 0 takes
	// DefaultMaxConnections, a negative value sets no bound. Beyond it a
	// few more are accepted and answered at once (GET /healthz is served,
	// anything else gets 503) and closed; while those are all answering,
	// the next connection waits to be accepted.
	MaxConnections int
}

// httpIdleTimeout closes a keep-alive connection without a request for
// that long; a client opens a new one at no cost.
const httpIdleTimeout = 2 * time.Minute

// Serve serves h on ln until ctx ends, then stops within a few seconds,
// ending the long-lived event streams too.
//
// Hostile clients are bounded: a request's headers and body must arrive
// within opts.Timeout, after which the connection's read deadline is
// lifted (net/http cancels a request whose connection read times out, and
// a tool call or an event stream legitimately lasts longer); each write of
// an answer must go through within opts.Timeout, renewed before every
// write, so a client that stops reading is dropped while a long call or
// an idle event stream is not cut.
//
// Connections are bounded by opts.MaxConnections, below the process's
// limit on open files (see DefaultMaxConnections): a server out of
// descriptors could neither accept nor open a tenant's file.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, opts ServeOptions) error {
	timeout := cmp.Or(opts.Timeout, DefaultHTTPTimeout)
	logger := cmp.Or(opts.Logger, slog.New(slog.DiscardHandler))
	// Requests run under base, so that stopping also ends the long-lived
	// event streams that would otherwise hold Shutdown until its timeout.
	base, stopRequests := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRequests()
	bound := opts.MaxConnections
	if bound == 0 {
		bound = DefaultMaxConnections()
	}
	var connCtx func(context.Context, net.Conn) context.Context
	if bound > 0 {
		ln = newBoundedListener(ln, bound, logger)
		h = answerSpare(h, bound)
		connCtx = connContext
	}
	srv := &http.Server{
		Handler:           progressDeadlines(h, timeout),
		ConnContext:       connCtx,
		ReadHeaderTimeout: timeout,
		ReadTimeout:       timeout,
		WriteTimeout:      timeout,
		IdleTimeout:       httpIdleTimeout,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() {
		if opts.TLSCert != "" {
			served <- srv.ServeTLS(ln, opts.TLSCert, opts.TLSKey)
		} else {
			served <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	logger.Info("stopping")
	stopRequests()
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	<-served
	return nil
}
