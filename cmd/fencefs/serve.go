package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/fencefs/fencefs/audit"
	"github.com/fencefs/fencefs/cmd/fencefs/internal/config"
	"github.com/fencefs/fencefs/mcpserver"
	"github.com/fencefs/fencefs/quota"
	"github.com/fencefs/fencefs/tenant"
	"github.com/fencefs/fencefs/tools"
)

// shutdownTimeout bounds how long the HTTP server waits for requests in
// flight when it is asked to stop.
const shutdownTimeout = 5 * time.Second

// shareServerBounds gives every tool set of one server (its sessions and
// tenants) one bound on ripgrep processes, so that N sessions cannot hold
// N times rg's memory.
func shareServerBounds(s *config.Settings) {
	if s.RipgrepSlots == nil {
		s.RipgrepSlots = tools.NewRipgrepSlots(0)
	}
}

// serve runs the MCP server until the client goes away (stdio) or the
// process is asked to stop.
func serve(ctx context.Context, s *config.Settings, rest []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "fencefs: serve takes no arguments, got %q\n", rest)
		return exitFatal
	}
	logger := newLogger(stderr, s.LogLevel, s.LogFormat)
	tuneGC(os.Getenv)
	if s.ApprovalKeyFile != "" {
		key, err := readApprovalKey(s.ApprovalKeyFile)
		if err != nil {
			fmt.Fprintf(stderr, "fencefs: --approval-key-file: %v\n", err)
			return exitFatal
		}
		s.ApprovalKey = key
	}
	shareServerBounds(s)
	auditLog, err := openAudit(s.Audit, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "fencefs: %v\n", err)
		return exitFatal
	}
	if auditLog != nil {
		headCtx, stopHeads := context.WithCancel(ctx)
		go logAuditHeads(headCtx, auditLog, logger, auditHeadEvery, auditLog.Head())
		defer func() {
			stopHeads()
			logger.Info("audit log closed", "head", auditLog.Head())
			auditLog.Close()
		}()
		if s.HTTP == "" && s.Audit == "-" {
			fmt.Fprintln(stderr, "fencefs: --audit -: stdout carries the MCP protocol over stdio; name a file")
			return exitFatal
		}
	}
	if s.HTTP != "" {
		if err := serveHTTPCommand(ctx, s, auditLog, logger); err != nil {
			fmt.Fprintf(stderr, "fencefs: %v\n", err)
			return exitFatal
		}
		return exitOK
	}
	ns, err := openNamespace(ctx, s, logger)
	if err != nil {
		fmt.Fprintf(stderr, "fencefs: %v\n", err)
		return exitFatal
	}
	defer ns.Close()
	q, err := newQuotas(s, func(ctx context.Context, _ string) (quota.Usage, error) { return ns.usage(ctx) })
	var build serverBuilder
	if err == nil {
		build, err = serverBuilderFor(ctx, ns, s, callHooks{audit: auditLog, quotas: q}, logger)
	}
	if err == nil {
		err = serveStdio(ctx, build(ns.set, s, newProbe(ns), nil), stdin, stdout, logger)
	}
	if err != nil {
		fmt.Fprintf(stderr, "fencefs: %v\n", err)
		return exitFatal
	}
	return exitOK
}

// serverBuilderFor returns the builder of the MCP servers over ns: the
// tools of a set, the files as resources, and the skills of --skills as
// prompts and resources, found again on storage every --skills-refresh until
// ctx ends.
func serverBuilderFor(ctx context.Context, ns *namespace, s *config.Settings, h callHooks, logger *slog.Logger) (serverBuilder, error) {
	var src *mcpserver.SkillSource
	if len(s.Skills) > 0 {
		loader, cat, err := discoverSkills(ctx, ns, s)
		if err != nil {
			return nil, err
		}
		logCatalog(logger, cat)
		// The skills' files are read for their digests by a set of their
		// own, so that reading them counts as no session's read.
		opts := ns.opts
		opts.OnEvent = nil
		set, err := tools.New(ns.b, opts)
		if err == nil {
			src, err = mcpserver.NewSkillSource(ctx, loader, set, logger)
		}
		if err != nil {
			return nil, skillsSettingError(err)
		}
		go src.Run(ctx, s.SkillsRefresh)
	}
	return func(set *tools.Set, s *config.Settings, probe *tools.Tool, changes *mcpserver.Changes) *mcp.Server {
		h := h
		h.probe = probe
		return newServer(set, s, h, src, changes, logger)
	}, nil
}

// serveHTTPCommand serves streamable HTTP: one namespace, or with
// --tenant-mount one per tenant; with --auth every request carries a
// verified token, and its scopes choose the tools.
func serveHTTPCommand(ctx context.Context, s *config.Settings, auditLog *audit.Logger, logger *slog.Logger) error {
	a, err := newHTTPAuth(ctx, s)
	if err != nil {
		return err
	}
	a.reloadOnHangup(ctx, logger)
	var (
		single  *servers
		tenants *tenant.Cache[tenant.ID, *servers]
		ready   func(context.Context) error
	)
	hooks := callHooks{audit: auditLog, metrics: newMetrics()}
	st := newStorage(hooks.metrics.storage)
	defer st.Close()
	if len(s.TenantMounts) > 0 {
		build := func(set *tools.Set, ts *config.Settings, probe *tools.Tool, changes *mcpserver.Changes) *mcp.Server {
			h := hooks
			h.probe = probe
			return newServer(set, ts, h, nil, changes, logger)
		}
		if len(s.Skills) > 0 {
			return errors.New("--skills: not yet served with --tenant-mount")
		}
		tenants, err = tenantServers(s, logger, build, st)
		if err != nil {
			return err
		}
		if ready, err = tenantReadiness(s, st, logger); err != nil {
			return err
		}
		defer tenants.Close()
		hooks.quotas, err = newQuotas(s, func(ctx context.Context, t string) (quota.Usage, error) {
			v, release, err := tenants.Get(ctx, tenant.ID(t))
			if err != nil {
				return quota.Usage{}, err
			}
			defer release()
			return v.ns.usage(ctx)
		})
		if err != nil {
			return err
		}
	} else {
		ns, err := openSharing(ctx, s, logger, st)
		if err != nil {
			return err
		}
		defer ns.Close()
		hooks.quotas, err = newQuotas(s, func(ctx context.Context, _ string) (quota.Usage, error) { return ns.usage(ctx) })
		if err != nil {
			return err
		}
		build, err := serverBuilderFor(ctx, ns, s, hooks, logger)
		if err != nil {
			return err
		}
		single = newServers(ns, s, build)
		ready = readiness(ns, s)
		if a != nil {
			logger.Warn("--auth without --tenant-mount: every authenticated caller shares one namespace")
		}
	}
	return serveHTTP(ctx, func(req *http.Request) *mcp.Server {
		v := single
		if tenants != nil {
			v, _ = tenant.ValueFrom[*servers](req.Context())
		}
		if v == nil {
			return nil // not reached: WithValue answered already
		}
		newSession := s.Stateful && req.Header.Get("Mcp-Session-Id") == ""
		server, err := v.server(a.toolList(req.Context(), v.offered), newSession)
		if err != nil {
			// The options built the namespace's first set: this does not happen.
			logger.Error("building a tool set", "error", err)
			return nil
		}
		if newSession {
			recordServer(req, server)
		}
		return server
	}, tenants, a, ready, hooks.metrics, s, logger)
}

// callHooks are what every tool call passes through besides the tool: the
// audit log, the tenant's quotas, and a file_info over the namespace for
// the checks before a change (nil fields are left out).
type callHooks struct {
	audit   *audit.Logger
	metrics *metrics
	quotas  *quota.Manager
	probe   *tools.Tool
}

// newServer serves every tool of the set on a new MCP server, each call
// passing through h; the files are resources when the set offers
// read_file, and src's skills are prompts and resources. Servers sharing
// changes (those of one namespace) tell each other's subscribers of
// their changes.
func newServer(set *tools.Set, s *config.Settings, h callHooks, src *mcpserver.SkillSource, changes *mcpserver.Changes, logger *slog.Logger) *mcp.Server {
	// Settings were checked at start-up: the names parse.
	approve, _ := mcpserver.ParseApproval(s.Approve)
	_, reads := set.Tool("read_file")
	if !reads {
		// Skills are files of the namespace: a caller who may not read
		// files gets neither their resources nor their prompts.
		src = nil
	}
	srv := mcpserver.New(set, mcpserver.Options{
		Name:             "fencefs",
		Version:          readVersion().short(),
		Instructions:     instructions(s),
		Logger:           logger,
		Approve:          approve,
		ApprovalFallback: approvalFallback(s.ApproveFallback),
		ApprovalKey:      s.ApprovalKey,
		Resources:        reads,
		Skills:           src,
		Changes:          changes,
		Wrap: func(t *tools.Tool, th mcp.ToolHandler) mcp.ToolHandler {
			if hashGuard(s) {
				th = requireHash(t.Name, h.probe, th)
			}
			th = limited(h.quotas, t, th)
			th = audited(h.audit, t, s.AuditReads, th)
			return logged(h.metrics.measured(t, th))
		},
	})
	if h.quotas != nil {
		srv.AddReceivingMiddleware(admitted(h.quotas))
	}
	if h.audit != nil && s.AuditReads {
		srv.AddReceivingMiddleware(auditedResourceReads(h.audit))
	}
	return srv
}

// readsStorage reports whether a request other than tools/call reads the
// namespace's storage for its answer.
func readsStorage(method string) bool {
	switch method {
	case "resources/read", "resources/directory/read", "completion/complete", "prompts/get":
		return true
	}
	return false
}

// admitted puts the requests besides tool calls that read storage under
// the caller's rate and concurrency limits, as limited does tool calls,
// so that resources and completion are no way around them.
func admitted(q *quota.Manager) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if !readsStorage(method) {
				return next(ctx, method, req)
			}
			release, err := q.Admit(tenantKey(req.GetExtra()))
			if err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: err.Error()}
			}
			defer release()
			return next(ctx, method, req)
		}
	}
}

// noElicitationReason is what the model is told of a change --approve
// changes cancelled because the client cannot ask its user
// (--approve-fallback cancel).
const noElicitationReason = "this client cannot ask the user to approve it (the server makes changes only with the user's approval)"

// minApprovalKey is the shortest secret --approval-key-file takes.
const minApprovalKey = 32

// readApprovalKey reads the secret of --approval-key-file, whose final
// newline, if any, is not part of it.
func readApprovalKey(file string) ([]byte, error) {
	key, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	key = bytes.TrimSuffix(bytes.TrimSuffix(key, []byte("\n")), []byte("\r"))
	if len(key) < minApprovalKey {
		return nil, fmt.Errorf("%s holds %d bytes; a key needs at least %d (such as the output of 'openssl rand -hex 32')", file, len(key), minApprovalKey)
	}
	return key, nil
}

// approvalFallback decides the changes of a session whose client cannot
// elicit: nil (refuse) gives each an error result; cancel gives the
// library's text of a cancelled change. Neither writes anything.
func approvalFallback(name string) func(context.Context, *tools.ChangeRequest) error {
	if name != "cancel" {
		return nil
	}
	return func(_ context.Context, r *tools.ChangeRequest) error {
		r.Cancel(noElicitationReason)
		return nil
	}
}

// instructions tell the model where relative paths start and, when the
// namespace is made of mounts, how paths are rooted. They never name a
// host path.
func instructions(s *config.Settings) string {
	if len(s.Mounts) == 0 {
		cwd := "the workspace root"
		if s.Cwd != "" {
			cwd = "'" + s.Cwd + "' (in the workspace)"
		}
		return "Relative file paths start at the working directory, " + cwd + "."
	}
	var mounts []string
	for _, m := range s.Mounts {
		name := "/" + m.Name
		if m.Spec.ReadOnly {
			name += " (read-only)"
		}
		mounts = append(mounts, name)
	}
	cwd := "/"
	if s.Cwd != "" {
		cwd = s.Cwd
	}
	return "File paths are rooted: each mount is a top-level directory. Mounts: " + strings.Join(mounts, ", ") +
		". The working directory is " + cwd + "; relative paths start there."
}

// serveStdio serves one session over stdin and stdout until the client
// closes stdin or ctx ends.
func serveStdio(ctx context.Context, server *mcp.Server, stdin io.Reader, stdout io.Writer, logger *slog.Logger) error {
	in, ok := stdin.(io.ReadCloser)
	if !ok {
		in = io.NopCloser(stdin)
	}
	logger.Info("serving MCP over stdio")
	err := server.Run(ctx, &mcp.IOTransport{Reader: in, Writer: nopWriteCloser{stdout}})
	if err != nil && ctx.Err() != nil {
		return nil // asked to stop
	}
	return err
}

// nopWriteCloser keeps the transport from closing stdout, which belongs
// to the process.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// serveHTTP serves streamable HTTP on s.HTTP at /mcp until ctx ends;
// getServer gives the server of a request (see
// mcp.NewStreamableHTTPHandler) and records a new session's server with
// recordServer.
//
// Hostile clients are bounded four ways. Sessions idle for
// s.SessionTimeout are closed, and at most s.MaxSessions are open at once.
// A request's headers and body must arrive within s.HTTPTimeout, after
// which the connection's read deadline is lifted: net/http cancels a
// request whose connection read times out, and a tool call or an event
// stream legitimately lasts longer. Each write of an answer must go
// through within s.HTTPTimeout, renewed before every write, so a client
// that stops reading is dropped while a long call or an idle event stream
// is not cut.
func serveHTTP(ctx context.Context, getServer func(*http.Request) *mcp.Server, tenants *tenant.Cache[tenant.ID, *servers], a *httpAuth, ready func(context.Context) error, m *metrics, s *config.Settings, logger *slog.Logger) error {
	ln, err := net.Listen("tcp", s.HTTP)
	if err != nil {
		return fmt.Errorf("--http: %w", err)
	}
	if err := checkListenAddr(ln.Addr(), s); err != nil {
		ln.Close()
		return err
	}
	scheme := "http"
	if s.TLSCert != "" {
		scheme = "https"
	}
	base := scheme + "://" + ln.Addr().String()
	var handler http.Handler = mcp.NewStreamableHTTPHandler(getServer,
		&mcp.StreamableHTTPOptions{Logger: logger, SessionTimeout: s.SessionTimeout, Stateless: !s.Stateful, MaxRequestBodyBytes: s.MaxRequestBytes})
	mux := http.NewServeMux()
	health(mux, ready)
	mux.Handle("GET /metrics", m.handler())
	var limit *sessionLimit
	if s.Stateful {
		limit = &sessionLimit{max: s.MaxSessions, logger: logger}
		handler = limit.handler(handler)
	}
	m.gauge("fencefs_open_sessions", "Open MCP sessions (--stateful; stateless HTTP keeps none).", func() float64 {
		if limit == nil {
			return 0
		}
		return float64(limit.count())
	})
	m.gauge("fencefs_ripgrep_running", "ripgrep processes running (the server runs at most one per CPU at once).", func() float64 {
		return float64(s.RipgrepSlots.Running())
	})
	handler = promhttp.InstrumentHandlerInFlight(m.inFlight, handler)
	if tenants != nil {
		handler = tenant.WithValue(tenants, handler)
	}
	if a != nil {
		handler = a.handle(mux, handler, s, base)
	}
	mux.Handle("/mcp", withRequestID(http.NewCrossOriginProtection().Handler(handler)))
	// Requests run under base, so that stopping also ends the long-lived
	// event streams that would otherwise hold Shutdown until its timeout.
	reqBase, stopRequests := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRequests()
	srv := &http.Server{
		Handler:           progressDeadlines(mux, s.HTTPTimeout),
		ReadHeaderTimeout: s.HTTPTimeout,
		ReadTimeout:       s.HTTPTimeout,
		WriteTimeout:      s.HTTPTimeout,
		IdleTimeout:       httpIdleTimeout,
		BaseContext:       func(net.Listener) context.Context { return reqBase },
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	url := base + "/mcp"
	logger.Info("serving MCP over streamable HTTP", "url", url, "stateful", s.Stateful, "auth", s.Auth, "tenant_mounts", len(s.TenantMounts), "max_sessions", s.MaxSessions, "session_timeout", s.SessionTimeout)
	served := make(chan error, 1)
	go func() {
		if s.TLSCert != "" {
			served <- srv.ServeTLS(ln, s.TLSCert, s.TLSKey)
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

// httpIdleTimeout closes a keep-alive connection without a request for
// that long; a client opens a new one at no cost.
const httpIdleTimeout = 2 * time.Minute
