package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/cmd/fencefs/internal/config"
	"github.com/fencefs/fencefs/mcpserver"
	"github.com/fencefs/fencefs/tenant"
	"github.com/fencefs/fencefs/tools"
)

// servers serves one namespace: one MCP server per tool list, built on
// first use, since tokens of one tenant may carry different scopes.
type servers struct {
	ns      *namespace
	probe   *tools.Tool
	s       *config.Settings
	offered []string
	build   serverBuilder
	// changes carries the namespace's changes to its sessions'
	// subscriptions, and no further: a tenant hears only of its own.
	changes *mcpserver.Changes

	mu     sync.Mutex
	byList map[string]*mcp.Server
}

// serverBuilder makes the MCP server of a tool set over the namespace
// the settings describe.
// The probe is a file_info over the namespace whatever the caller's
// tools, for the checks the server makes before a change; changes is
// shared by the servers of the namespace (nil: the server's own).
type serverBuilder func(set *tools.Set, s *config.Settings, probe *tools.Tool, changes *mcpserver.Changes) *mcp.Server

// newProbe returns a file_info tool over ns with its policy.
func newProbe(ns *namespace) *tools.Tool {
	opts := ns.opts
	opts.Tools = []string{"file_info"}
	opts.OnEvent = nil
	set, err := tools.New(ns.b, opts)
	if err != nil {
		return nil // the same options built ns.set: this does not happen
	}
	t, _ := set.Tool("file_info")
	return t
}

func newServers(ns *namespace, s *config.Settings, build serverBuilder) *servers {
	// Never nil, even for a namespace with no tools: nil would read as
	// "every tool" in server and in the grants.
	offered := []string{}
	for _, t := range ns.set.Tools() {
		offered = append(offered, t.Name)
	}
	return &servers{ns: ns, probe: newProbe(ns), s: s, offered: offered, build: build, changes: mcpserver.NewChanges(), byList: map[string]*mcp.Server{}}
}

// server returns the server offering list (nil: every configured tool).
// A new stateful session gets a tool set of its own, so that what one
// agent read does not count as read for another (--require-read).
func (v *servers) server(list []string, newSession bool) (*mcp.Server, error) {
	if list == nil {
		list = v.offered
	}
	key := strings.Join(list, ",")
	if !newSession {
		v.mu.Lock()
		defer v.mu.Unlock()
		if srv := v.byList[key]; srv != nil {
			return srv, nil
		}
	}
	opts := v.ns.opts
	opts.Tools = slices.Clone(list)
	if hashGuard(v.s) {
		opts.Tools = slices.DeleteFunc(opts.Tools, func(n string) bool { return n == "apply_patch" })
		// Reads remembered by one replica would refuse the writes that
		// reach another; the expected_hash the read returned stands in.
		opts.RequireRead = false
	}
	set, err := tools.New(v.ns.b, opts)
	if err != nil {
		return nil, err
	}
	srv := v.build(set, v.s, v.probe, v.changes)
	if !newSession {
		v.byList[key] = srv
	}
	return srv, nil
}

// httpAuth is the authentication of serve --http: the verifier, the
// scopes' grants and the protected-resource metadata.
type httpAuth struct {
	verifier tenant.Verifier
	grants   *tenant.Grants
	// reload, when set, reloads the static token file (SIGHUP).
	reload func() error
}

// newHTTPAuth builds the verifier --auth names; nil without --auth.
func newHTTPAuth(ctx context.Context, s *config.Settings) (*httpAuth, error) {
	a := &httpAuth{grants: tenant.DefaultGrants()}
	if s.Scopes != nil {
		g, err := tenant.NewGrants(s.Scopes)
		if err != nil {
			return nil, fmt.Errorf("scopes: %w", err) // checked while parsing: not reached
		}
		a.grants = g
	}
	switch s.Auth {
	case "":
		return nil, nil
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
		a.verifier = v
	case "tokens":
		v, err := tenant.NewStatic(s.TokenFile)
		if err != nil {
			return nil, fmt.Errorf("--token-file: %w", err)
		}
		a.verifier, a.reload = v, v.Reload
	}
	return a, nil
}

// reloadOnHangup reloads the token file on each SIGHUP until ctx ends; a
// file that fails to load keeps the tokens already loaded.
func (a *httpAuth) reloadOnHangup(ctx context.Context, logger *slog.Logger) {
	if a == nil || a.reload == nil {
		return
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				if err := a.reload(); err != nil {
					logger.Error("reloading the token file: the tokens loaded before stay", "error", err)
				} else {
					logger.Info("reloaded the token file")
				}
			}
		}
	}()
}

// toolList returns the tools the caller of ctx may use out of offered;
// nil without authentication (every configured tool). Scopes that grant
// none of offered give an empty list, never nil, which would offer all.
func (a *httpAuth) toolList(ctx context.Context, offered []string) []string {
	if a == nil {
		return nil
	}
	id, err := tenant.FromContext(ctx)
	if err != nil {
		return []string{} // not reached: Middleware let no such request through
	}
	if list := a.grants.Tools(id.Scopes, offered); list != nil {
		return list
	}
	return []string{}
}

// metadataPath is where RFC 9728 puts the metadata of the resource /mcp.
const metadataPath = "/.well-known/oauth-protected-resource/mcp"

// handle wraps the MCP handler with the bearer-token check, and serves the
// protected-resource metadata, so that an OAuth client learns from a 401
// where to get a token.
func (a *httpAuth) handle(mux *http.ServeMux, mcpHandler http.Handler, s *config.Settings, base string) http.Handler {
	resource := s.ResourceURL
	if resource == "" {
		resource = base + "/mcp"
	}
	meta := &oauthex.ProtectedResourceMetadata{
		Resource:               resource,
		ScopesSupported:        a.grants.Scopes(),
		BearerMethodsSupported: []string{"header"},
	}
	if s.Auth == "jwt" {
		meta.AuthorizationServers = []string{s.OIDCIssuer}
	}
	metaURL := strings.TrimSuffix(resource, "/mcp") + metadataPath
	mh := auth.ProtectedResourceMetadataHandler(meta)
	mux.Handle(metadataPath, mh)
	mux.Handle("/.well-known/oauth-protected-resource", mh)
	return tenant.Middleware(a.verifier, &tenant.MiddlewareOptions{
		ResourceMetadataURL: metaURL,
		Grants:              a.grants,
		ClockSkew:           30 * time.Second,
	})(mcpHandler)
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

// tenantServers opens each tenant's namespace from the --tenant-mount
// templates on its first request, and keeps the most recent ones open;
// their S3 clients come from st, shared between tenants.
func tenantServers(s *config.Settings, logger *slog.Logger, build serverBuilder, st *storage) (*tenant.Cache[tenant.ID, *servers], error) {
	type tmpl struct {
		name string
		t    tenant.Template
	}
	var templates []tmpl
	for _, tm := range s.TenantMounts {
		name, t, err := config.SplitTenantMount(tm)
		if err != nil {
			return nil, fmt.Errorf("--tenant-mount %s: %w", tm, err)
		}
		templates = append(templates, tmpl{name, t})
	}
	policies, err := tenant.NewPolicies(s.TenantPolicies)
	if err != nil {
		return nil, fmt.Errorf("tenant_policy: %w", err) // checked while parsing: not reached
	}
	return tenant.NewCache(tenant.CacheOptions[tenant.ID, *servers]{
		Size: s.TenantCache,
		Build: func(ctx context.Context, id tenant.ID) (*servers, error) {
			ts := *s
			ts.Mounts = nil
			// The tenant's policy narrows the server's: more denied and
			// protected patterns, fewer tools.
			narrowed := policies.For(id).Narrow(s.ToolOptions())
			ts.Deny, ts.Protect, ts.Tools = narrowed.Denied, narrowed.Protected, narrowed.Tools
			for _, tm := range templates {
				spec, err := tm.t.Expand(id)
				if err != nil {
					return nil, err
				}
				ms, err := config.ParseMountSpec(spec)
				if err != nil {
					return nil, fmt.Errorf("mount %q: %w", tm.name, err)
				}
				ts.Mounts = append(ts.Mounts, config.Mount{Name: tm.name, Spec: ms})
			}
			slices.SortFunc(ts.Mounts, func(a, b config.Mount) int { return strings.Compare(a.Name, b.Name) })
			// The tenant rides in the context, as in its calls' lines.
			ctx = withCallInfo(ctx, callInfo{tenant: string(id)})
			ns, err := openSharing(ctx, &ts, logger, st)
			if err != nil {
				logger.ErrorContext(ctx, "opening a tenant's namespace", "error", err)
				return nil, errors.New("its storage could not be opened")
			}
			for _, tm := range templates {
				if tm.t.Shared() {
					delete(ns.counted, tm.name) // the same for every tenant: no one's quota
				}
			}
			return newServers(ns, &ts, build), nil
		},
		OnEvict: func(_ tenant.ID, v *servers) { v.ns.Close() },
	})
}

// hashGuard reports whether --require-read is enforced by expected_hash:
// stateless HTTP, where the requests of one agent may reach different
// replicas and no replica can remember what the agent read.
func hashGuard(s *config.Settings) bool {
	return s.RequireRead && s.HTTP != "" && !s.Stateful
}

// hashRule names an argument of a change that, under hashGuard, must come
// with the hash of the read the change is based on.
type hashRule struct {
	path, hash string
	// always: the hash is needed even before looking (the file must exist
	// for the tool to work at all).
	always bool
	// overwrite: needed only when the call's overwrite is true.
	overwrite bool
}

// hashRules returns the rules of tool: every file a change replaces or
// removes is named with the hash of its read.
func hashRules(tool string) []hashRule {
	switch tool {
	case "write_file", "delete_file":
		return []hashRule{{path: "path", hash: "expected_hash"}}
	case "edit_file":
		return []hashRule{{path: "path", hash: "expected_hash", always: true}}
	case "move_file":
		return []hashRule{{path: "source", hash: "expected_hash"}, {path: "destination", hash: "destination_hash", overwrite: true}}
	case "copy_file":
		return []hashRule{{path: "destination", hash: "destination_hash", overwrite: true}}
	}
	return nil
}

// requireHash wraps the handler of a changing tool under hashGuard: a
// change that replaces or removes an existing file must carry the hash of
// the read it is based on (expected_hash, or destination_hash for the
// file a move or copy replaces), which the storage then checks. probe is
// a file_info tool over the same namespace, or nil when the caller may
// not use it: then every such argument needs its hash (fail closed).
// apply_patch, which carries no hashes, is not offered (see servers).
func requireHash(name string, probe *tools.Tool, next mcp.ToolHandler) mcp.ToolHandler {
	rules := hashRules(name)
	if rules == nil {
		return next
	}
	refuse := func(msg string) *mcp.CallToolResult {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
	}
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args map[string]json.RawMessage
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			return next(ctx, req) // the tool itself refuses bad arguments
		}
		var overwrite bool
		json.Unmarshal(args["overwrite"], &overwrite)
		for _, r := range rules {
			var p string
			if json.Unmarshal(args[r.path], &p) != nil || p == "" || hashGiven(args[r.hash]) || r.overwrite && !overwrite {
				continue
			}
			need := fmt.Sprintf("'%s': pass %s from your read_file of it (this server requires reading a file before changing it).", p, r.hash)
			if r.always || probe == nil {
				return refuse(need), nil
			}
			raw, _ := json.Marshal(map[string]string{"path": p})
			text, err := probe.Call(ctx, raw)
			switch {
			case err == nil && strings.Contains(text, "\ntype: file\n"):
				return refuse(fmt.Sprintf("'%s' exists: read it with read_file and pass the hash it returned as %s (this server requires reading a file before changing it).", p, r.hash)), nil
			case err == nil, strings.HasPrefix(tools.Message(err), "Path not found"):
			default:
				return refuse(tools.Message(err)), nil
			}
		}
		return next(ctx, req)
	}
}

// hashGiven reports whether raw is a hash the tool will check: a
// non-empty string. A JSON null is no precondition to the tools, so it
// must be none to the guard either; an empty string is the hash of no
// read.
func hashGiven(raw json.RawMessage) bool {
	var h string
	return json.Unmarshal(raw, &h) == nil && h != ""
}

// readiness returns the check of /readyz for ns: every mount (or the
// root) answers a file_info within the storage deadline.
func readiness(ns *namespace, s *config.Settings) func(context.Context) error {
	paths := []string{"."}
	if len(s.Mounts) > 0 {
		paths = nil
		for _, m := range s.Mounts {
			paths = append(paths, "/"+m.Name)
		}
	}
	return func(ctx context.Context) error {
		set, err := tools.New(ns.b, tools.Options{Tools: []string{"file_info"}, NoDefaultProtect: true})
		if err != nil {
			return err
		}
		for _, p := range paths {
			cctx, cancel := context.WithTimeout(ctx, s.StorageTimeout)
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

// tenantReadiness returns the check of /readyz with tenant mounts: every
// template that all tenants share (no {tenant}) opens and answers a stat
// within its storage deadline; nil when there is none. A tenant's own
// mounts open at its first request, and there is no tenant to check them
// for here. The answer names the mount only: the cause, which may name an
// endpoint or a host path, goes to the log.
func tenantReadiness(s *config.Settings, st *storage, logger *slog.Logger) (func(context.Context) error, error) {
	var shared []config.Mount
	for _, tm := range s.TenantMounts {
		name, t, err := config.SplitTenantMount(tm)
		if err != nil {
			return nil, fmt.Errorf("--tenant-mount %s: %w", tm, err)
		}
		if !t.Shared() {
			continue
		}
		ms, err := config.ParseMountSpec(t.String())
		if err != nil {
			return nil, fmt.Errorf("--tenant-mount %s: %w", tm, err)
		}
		shared = append(shared, config.Mount{Name: name, Spec: ms})
	}
	if len(shared) == 0 {
		return nil, nil
	}
	return func(ctx context.Context) error {
		for _, m := range shared {
			timeout := cmp.Or(m.Spec.Timeout, s.StorageTimeout)
			n := &namespace{storage: st}
			b, err := n.openMount(ctx, m.Name, m.Spec, timeout)
			if err == nil {
				cctx, cancel := context.WithTimeout(ctx, timeout)
				_, err = backend.Stat(cctx, b, ".")
				cancel()
			}
			n.Close()
			if err != nil {
				logger.WarnContext(ctx, "not ready", "mount", "/"+m.Name, "error", mountErr(ctx, m, timeout, err))
				return fmt.Errorf("/%s: the storage did not answer", m.Name)
			}
		}
		return nil
	}, nil
}

// health serves /healthz (the process answers) and /readyz (ready, when
// set, passes).
func health(mux *http.ServeMux, ready func(context.Context) error) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if ready != nil {
			if err := ready(r.Context()); err != nil {
				http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		fmt.Fprintln(w, "ok")
	})
}
