//go:build !fencefs_oneshot

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/fencefs/fencefs/audit"
	"github.com/fencefs/fencefs/cmd/fencefs/internal/config"
	"github.com/fencefs/fencefs/mcpserver"
	"github.com/fencefs/fencefs/mountspec"
	"github.com/fencefs/fencefs/server"
	"github.com/fencefs/fencefs/tenant"
	"github.com/fencefs/fencefs/tools"
)

// serve runs the MCP server until the client goes away (stdio) or the
// process is asked to stop.
func serve(ctx context.Context, s *config.Settings, rest []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "fencefs: serve takes no arguments, got %q\n", rest)
		return exitFatal
	}
	logger := newLogger(stderr, s.LogLevel, s.LogFormat)
	tuneGC(os.Getenv)
	limitMemory(os.Getenv, s.MemoryLimit, logger)
	if err := serveWith(ctx, s, stdin, stdout, logger); err != nil {
		fmt.Fprintf(stderr, "fencefs: %v\n", err)
		return exitFatal
	}
	return exitOK
}

// serveWith serves s over stdio or HTTP until the end.
func serveWith(ctx context.Context, s *config.Settings, stdin io.Reader, stdout io.Writer, logger *slog.Logger) error {
	if s.Checkpoints == "" {
		switch {
		case s.CheckpointTools != "" && s.CheckpointTools != "none":
			return fmt.Errorf("--checkpoint-tools needs --checkpoints")
		case s.CheckpointKeep != 0 || s.CheckpointKeepAge != 0 || s.CheckpointKeepBytes != 0:
			return fmt.Errorf("--checkpoint-keep, --checkpoint-keep-age and --checkpoint-keep-bytes need --checkpoints")
		}
	}
	if s.ApprovalKeyFile != "" {
		key, err := readApprovalKey(s.ApprovalKeyFile)
		if err != nil {
			return fmt.Errorf("--approval-key-file: %w", err)
		}
		s.ApprovalKey = key
	}
	if s.HTTP == "" && s.Audit == "-" {
		return fmt.Errorf("--audit -: stdout carries the MCP protocol over stdio; name a file")
	}
	auditLog, err := openAudit(s.Audit, stdout)
	if err != nil {
		return err
	}
	if auditLog != nil {
		headCtx, stopHeads := context.WithCancel(ctx)
		go server.LogAuditHeads(headCtx, auditLog, logger, server.AuditHeadEvery, auditLog.Head())
		defer func() {
			stopHeads()
			logger.Info("audit log closed", "head", auditLog.Head())
			auditLog.Close()
		}()
	}
	cfg, err := serverConfig(ctx, s, auditLog, logger)
	if err != nil {
		return err
	}
	if s.Checkpoints != "" {
		if cfg.Checkpoints, err = checkpointsConfig(s); err != nil {
			return err
		}
	}
	if s.OTLPEndpoint != "" {
		cfg.Metrics = server.NewMetrics()
		tr, stop, err := startOTLP(ctx, s.OTLPEndpoint, s.OTLPPaths, cfg.Metrics.Gatherer(), logger)
		if err != nil {
			return err
		}
		defer stopOTLP(ctx, stop, logger)
		cfg.Tracing = tr
	}
	if s.HTTP == "" {
		srv, err := server.New(ctx, cfg)
		if err != nil {
			return err
		}
		defer srv.Close()
		return srv.ServeStdio(ctx, stdin, stdout)
	}
	return serveHTTP(ctx, s, cfg, logger)
}

// serveHTTP serves streamable HTTP on s.HTTP at /mcp until ctx ends.
func serveHTTP(ctx context.Context, s *config.Settings, cfg server.Config, logger *slog.Logger) error {
	ln, err := net.Listen("tcp", s.HTTP)
	if err != nil {
		return fmt.Errorf("--http: %w", err)
	}
	defer ln.Close()
	if err := checkListenAddr(ln.Addr(), s); err != nil {
		return err
	}
	scheme := "http"
	if s.TLSCert != "" {
		scheme = "https"
	}
	url := scheme + "://" + ln.Addr().String() + "/mcp"
	if cfg.ResourceURL == "" && cfg.Identity != nil {
		cfg.ResourceURL = url
	}
	srv, err := server.New(ctx, cfg)
	if err != nil {
		return err
	}
	defer srv.Close()
	maxConns := s.MaxConnections
	switch maxConns {
	case -1:
		maxConns = server.DefaultMaxConnections()
	case 0:
		maxConns = -1 // no bound
	}
	logger.Info("serving MCP over streamable HTTP", "url", url, "stateful", s.Stateful, "auth", s.Auth, "tenant_mounts", len(s.TenantMounts), "max_sessions", s.MaxSessions, "session_timeout", s.SessionTimeout, "max_connections", max(maxConns, 0))
	return server.Serve(ctx, ln, srv.Handler(), server.ServeOptions{Timeout: s.HTTPTimeout, TLSCert: s.TLSCert, TLSKey: s.TLSKey, Logger: logger, MaxConnections: maxConns})
}

// serverConfig turns the settings into the server's configuration.
func serverConfig(ctx context.Context, s *config.Settings, auditLog *audit.Logger, logger *slog.Logger) (server.Config, error) {
	// Settings were checked while parsing: the names parse.
	approve, _ := mcpserver.ParseApproval(s.Approve)
	cfg := server.Config{
		Namespace:     namespaceConfig(s, logger),
		TenantCache:   s.TenantCache,
		Skills:        s.Skills,
		SkillsRefresh: s.SkillsRefresh,
		MCP: mcpserver.Options{
			Name:             "fencefs",
			Version:          readVersion().short(),
			Approve:          approve,
			ApprovalFallback: approvalFallback(s.ApproveFallback),
			ApprovalKey:      s.ApprovalKey,
		},
		Stateless:               s.HTTP != "" && !s.Stateful,
		SessionRetention:        sessionRetention(s.SessionRetention),
		SessionCollectLeftovers: s.SessionCollectLeftovers,
		HTTP: server.HTTPConfig{
			SessionTimeout:  s.SessionTimeout,
			MaxSessions:     s.MaxSessions,
			MaxRequestBytes: s.MaxRequestBytes,
			Timeout:         s.HTTPTimeout,
		},
		ResourceURL:  s.ResourceURL,
		Audit:        server.Audit{Log: auditLog, Reads: s.AuditReads},
		Quota:        s.Quota,
		QuotaTenants: s.QuotaTenants,
		Logger:       logger,
		Schemes:      s.Schemes,
	}
	for _, tm := range s.TenantMounts {
		name, t, err := config.SplitTenantMount(tm)
		if err != nil {
			return cfg, fmt.Errorf("--tenant-mount %s: %w", tm, err)
		}
		cfg.TenantMounts = append(cfg.TenantMounts, server.TenantMount{Name: name, Template: t})
	}
	var err error
	if cfg.TenantPolicies, err = tenant.NewPolicies(s.TenantPolicies); err != nil {
		return cfg, fmt.Errorf("tenant_policy: %w", err) // checked while parsing: not reached
	}
	if s.Scopes != nil {
		if cfg.Grants, err = tenant.NewGrants(s.Scopes); err != nil {
			return cfg, fmt.Errorf("scopes: %w", err) // checked while parsing: not reached
		}
	}
	cfg.Identity, err = authenticator(ctx, s, logger)
	if s.Auth == "jwt" {
		cfg.AuthorizationServers = []string{s.OIDCIssuer}
	}
	return cfg, err
}

// namespaceConfig returns the namespace the settings describe.
func namespaceConfig(s *config.Settings, logger *slog.Logger) server.NamespaceConfig {
	nc := server.NamespaceConfig{Root: s.Root, Tools: s.ToolOptions(), StorageTimeout: s.StorageTimeout, Logger: logger}
	for _, m := range s.Mounts {
		nc.Mounts = append(nc.Mounts, server.Mount{Name: m.Name, Spec: m.Spec})
	}
	return nc
}

// openNamespace opens the namespace the settings describe, for the
// one-shot commands.
func openNamespace(ctx context.Context, s *config.Settings, logger *slog.Logger) (*server.Namespace, error) {
	return server.OpenNamespace(ctx, namespaceConfig(s, logger), mountspec.New(mountspec.Options{Schemes: s.Schemes}))
}

// authenticator returns the authenticator --auth names, nil without
// --auth; a token file is reloaded on each SIGHUP until ctx ends.
func authenticator(ctx context.Context, s *config.Settings, logger *slog.Logger) (server.Authenticator, error) {
	switch s.Auth {
	case "jwt":
		v, err := tenant.NewJWT(ctx, tenant.JWTConfig{
			Issuer:      s.OIDCIssuer,
			JWKSURL:     s.OIDCJWKS,
			Audience:    s.OIDCAudience,
			Algorithms:  s.OIDCAlgs,
			TenantClaim: s.TenantClaim,
			ScopeClaim:  s.ScopeClaim,
			TokenType:   s.OIDCTokenType,
			HTTPClient:  &http.Client{Timeout: s.StorageTimeout},
		})
		if err != nil {
			return nil, fmt.Errorf("--auth jwt: %w", err)
		}
		return server.Bearer{Verifier: v}, nil
	case "tokens":
		v, err := tenant.NewStatic(s.TokenFile)
		if err != nil {
			return nil, fmt.Errorf("--token-file: %w", err)
		}
		reloadOnHangup(ctx, v.Reload, logger)
		return server.Bearer{Verifier: v}, nil
	}
	return nil, nil
}

// reloadOnHangup calls reload on each SIGHUP until ctx ends; a file that
// fails to load keeps the tokens already loaded.
func reloadOnHangup(ctx context.Context, reload func() error, logger *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				if err := reload(); err != nil {
					logger.Error("reloading the token file: the tokens loaded before stay", "error", err)
				} else {
					logger.Info("reloaded the token file")
				}
			}
		}
	}()
}

// checkListenAddr refuses, without --auth, an address other than loopback:
// anyone who can reach the port could use the tools.
func checkListenAddr(addr net.Addr, s *config.Settings) error {
	if s.Auth != "" {
		return nil
	}
	host, _, _ := net.SplitHostPort(addr.String())
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--http %s: without --auth the server binds only a loopback address (127.0.0.1, [::1]): anyone who can reach %s could use the tools; add --auth jwt or --auth tokens", s.HTTP, host)
}

// newLogger logs to w at level, as text or (format "json") one JSON
// object a line, each line naming its tenant and request id.
func newLogger(w io.Writer, level slog.Level, format string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if format == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(server.LogHandler{Handler: h})
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

// sessionRetention is the server's SessionRetention of the
// --session-retention flag: the default is the server's too (0), 0
// RemoveSessionsAtOnce, negative (never) KeepSessions.
func sessionRetention(d time.Duration) time.Duration {
	switch {
	case d == config.DefaultSessionRetention:
		return 0
	case d < 0:
		return server.KeepSessions
	case d == 0:
		return server.RemoveSessionsAtOnce
	}
	return d
}
