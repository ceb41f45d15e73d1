package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/mcpserver"
	"github.com/fencefs/fencefs/mountspec"
	"github.com/fencefs/fencefs/quota"
	"github.com/fencefs/fencefs/telemetry"
	"github.com/fencefs/fencefs/tenant"
	"github.com/fencefs/fencefs/tools"
)

// TenantMount is a mount of every tenant's namespace: its spec is the
// template expanded with the tenant's id.
type TenantMount struct {
	// Name is the mount's name: it is mounted at /Name.
	Name string
	// Template is the spec with {tenant} where the tenant's id goes; a
	// template without it is the same mount for every tenant (Shared),
	// whose files count against no tenant's quota.
	Template tenant.Template
}

// HTTPConfig bounds what hostile HTTP clients can hold.
type HTTPConfig struct {
	// SessionTimeout closes a stateful session idle for that long.
	SessionTimeout time.Duration
	// MaxSessions bounds the open stateful sessions; beyond it a new
	// session gets 503.
	MaxSessions int
	// MaxRequestBytes bounds the body of one request.
	MaxRequestBytes int64
	// Timeout bounds the arrival of a request (headers and body) and each
	// write of an answer (see Serve).
	Timeout time.Duration
}

// Config configures a Server. The zero values of the limits are the
// defaults of the fencefs command.
type Config struct {
	// Namespace is the storage and the tools of the server's one
	// namespace, or with TenantMounts the tools of every tenant's (Root
	// and Mounts are then unused).
	Namespace NamespaceConfig
	// TenantMounts, when set, give each tenant a namespace of its own,
	// built from the templates on its first request and kept open in a
	// bounded cache. They need Identity: the tenant is the identity's.
	TenantMounts []TenantMount
	// TenantPolicies narrow the tools and policy of named tenants.
	TenantPolicies *tenant.Policies
	// TenantCache bounds the tenants whose namespaces stay open (default
	// 1000).
	TenantCache int
	// Schemes open the mount kinds mountspec does not know, for
	// TenantMounts' expanded templates.
	Schemes mountspec.Schemes

	// MCP are the options of every MCP server: name, version,
	// instructions (default: where paths start), approvals. Wrap,
	// Resources, Skills, Changes and Logger are the Server's own.
	MCP mcpserver.Options
	// Skills are the roots whose skills are offered as prompts and
	// resources, found again every SkillsRefresh (one namespace only).
	Skills        []string
	SkillsRefresh time.Duration

	// Stateless answers each HTTP request on its own, so any replica
	// answers any request: no session is kept, and --require-read is
	// enforced by the hashes of reads (RequireRead). Otherwise sessions
	// live in the process's memory.
	Stateless bool
	// HTTP bounds the HTTP clients.
	HTTP HTTPConfig

	// Identity authenticates HTTP requests; nil serves everyone (bind a
	// loopback address only).
	Identity Authenticator
	// Grants map an identity's scopes to tools (nil: the defaults).
	Grants *tenant.Grants
	// ResourceURL is the public URL of the MCP endpoint, announced in the
	// RFC 9728 protected-resource metadata with AuthorizationServers.
	ResourceURL          string
	AuthorizationServers []string
	// ClockSkew is how long after its expiry a bearer token is accepted.
	ClockSkew time.Duration

	// Audit logs the calls.
	Audit Audit
	// Quota limits every tenant (the whole server without Identity);
	// QuotaTenants replace it for named tenants.
	Quota        quota.Limits
	QuotaTenants map[string]quota.Limits
	// Metrics, when set, are the server's; nil makes new ones.
	Metrics *Metrics
	// Tracing, when set, makes a span of each call (tool, tenant,
	// outcome), of each storage operation of the mounts and of each S3
	// request, continuing the caller's trace (traceparent in the HTTP
	// headers or the call's _meta). Nil builds nothing.
	Tracing *telemetry.Tracing
	// Links are more links around each call, inside the server's own
	// (after the audit and quota, before the tool).
	Links []Link
	// Checkpoints, when set, journal every namespace's changes (one
	// journal per tenant with TenantMounts, per session when they name
	// {session}) and may offer the checkpoint tools.
	Checkpoints *Checkpoints
	// SessionRetention is how long the storage of an ended session (a
	// {session} in TenantMounts or in the checkpoint store) is kept for
	// review before it is removed: 0 is DefaultSessionRetention (24h),
	// RemoveSessionsAtOnce removes it as the session ends, KeepSessions
	// (negative) never removes it. Set to another value without a
	// {session} template, it (as SessionCollectLeftovers) makes New fail:
	// there is no session storage to keep.
	SessionRetention time.Duration
	// SessionCollectLeftovers says that this server alone uses the
	// locations of its {session} templates: at start-up it then also
	// removes the storage of sessions it did not see end (an earlier
	// process's), each once both the retention and the session timeout
	// passed since the newest change in its whole tree. Off (the
	// default), such storage is left to the operator: replicas sharing
	// the locations (sticky routing, or a rolling restart) never remove
	// the sessions live in one another.
	SessionCollectLeftovers bool
	// sessionClock, set by a test, is the clock of the sessions'
	// retention, whose collection the test then runs.
	sessionClock func() time.Time
	// OnMCPServer, when set, is called with every MCP server built (one
	// per tool list, and per stateful session), before it serves, so that
	// a host can offer more of its own (checkpointmcp.Add). What it adds
	// bypasses Links, and is offered to every tenant of the tool list:
	// its handlers find the caller's tenant with tenant.FromContext.
	OnMCPServer func(srv *mcp.Server)
	// Logger receives the server's log lines; wrap its handler in
	// LogHandler to have each line name its tenant and request id.
	Logger *slog.Logger
}

// A Server serves the file tools of one namespace, or of one namespace
// per tenant, over MCP: every call passing through the chain of links
// (scopes, limits, quotas, require-read, audit, metrics). Handler serves
// it over streamable HTTP, ServeStdio over a stream.
type Server struct {
	cfg     Config
	logger  *slog.Logger
	opener  *mountspec.Opener
	metrics *Metrics
	quotas  *quota.Manager
	grants  *tenant.Grants
	skills  *mcpserver.SkillSource
	// single serves the one namespace; nil with tenants.
	single  *Servers
	tenants *tenant.Cache[tenant.ID, *Servers]
	// sessions hold the namespaces of the stateful sessions when a
	// template names {session} (tenants is then nil); see sessions.go.
	sessions *tenant.Cache[sessionKey, *Servers]
	// collector removes ended sessions' storage (sessionstorage.go).
	collector *sessionCollector
	// stub answers the SDK's protocol-version check of a request of an
	// open session, which its session's own server then serves.
	stub *mcp.Server
	// ended are closed as the sessions' namespaces close, by session.
	endedMu sync.Mutex
	ended   map[sessionKey]chan struct{}
	ready   func(context.Context) error
	handler http.Handler
	// mcpHandler is the MCP endpoint within handler.
	mcpHandler http.Handler
	// stop ends the skills' refresh.
	stop context.CancelFunc

	// shared are the MCP servers the namespaces share, by tool list.
	sharedMu    sync.Mutex
	shared      map[sharedKey][]*shared
	sharedCount int
}

// New opens the server's storage (the one namespace, or with TenantMounts
// the mounts every tenant shares are checked at readiness) and builds its
// MCP servers and HTTP handler. Close it when done.
func New(ctx context.Context, cfg Config) (*Server, error) {
	s := &Server{cfg: cfg, logger: cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)), metrics: cfg.Metrics, grants: cfg.Grants}
	if s.metrics == nil {
		s.metrics = NewMetrics()
	}
	if s.grants == nil {
		s.grants = tenant.DefaultGrants()
	}
	if cfg.Audit.Log != nil && cfg.Audit.Health == nil {
		s.cfg.Audit.Health = NewAuditHealth(s.logger)
	}
	nc := &s.cfg.Namespace
	nc.Logger = s.logger
	// Every tool set of the server (its sessions and tenants) shares one
	// bound on ripgrep processes, so that N sessions cannot hold N times
	// rg's memory.
	if nc.Tools.RipgrepSlots == nil {
		nc.Tools.RipgrepSlots = tools.NewRipgrepSlots(0)
	}
	nc.Metered = nc.Metered || cfg.Audit.Log != nil || LimitsStorage(cfg.Quota, cfg.QuotaTenants) || s.hashGuard(false)
	s.opener = mountspec.New(mountspec.Options{Requests: s.metrics.StorageRequests(), Schemes: cfg.Schemes, Tracing: cfg.Tracing})
	nc.Tracing = cfg.Tracing
	var sctx context.Context
	sctx, s.stop = context.WithCancel(context.WithoutCancel(ctx))
	err := s.checkCheckpoints()
	retains := cfg.SessionRetention != 0 && cfg.SessionRetention != DefaultSessionRetention
	if err == nil && (retains || cfg.SessionCollectLeftovers) && !perSession(cfg.TenantMounts) {
		err = fmt.Errorf("session retention: no tenant mount names the session (%s), so no session has storage of its own to keep or remove", tenant.SessionPlaceholder)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	if len(cfg.TenantMounts) > 0 {
		err = s.openTenants()
	} else {
		err = s.openSingle(ctx, sctx)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	s.handler = s.newHandler()
	return s, nil
}

// openSingle opens the one namespace.
func (s *Server) openSingle(ctx, sctx context.Context) error {
	ns, err := OpenNamespace(ctx, s.cfg.Namespace, s.opener)
	if err != nil {
		return err
	}
	if err := s.openJournal(ctx, ns, "", ""); err != nil {
		ns.Close()
		return err
	}
	s.quotas, err = NewQuotas(s.cfg.Quota, s.cfg.QuotaTenants, func(ctx context.Context, _ string) (quota.Usage, error) { return ns.Usage(ctx) })
	if err == nil && len(s.cfg.Skills) > 0 {
		s.skills, err = s.openSkills(ctx, sctx, ns)
	}
	if err != nil {
		ns.Close()
		return err
	}
	s.single = s.newServers(ns)
	s.ready = readiness(ns, s.cfg.Namespace)
	if s.cfg.Identity != nil {
		s.logger.Warn("--auth without --tenant-mount: every authenticated caller shares one namespace")
	}
	return nil
}

// openSkills finds the skills of the namespace and refreshes them every
// SkillsRefresh until sctx ends.
func (s *Server) openSkills(ctx, sctx context.Context, ns *Namespace) (*mcpserver.SkillSource, error) {
	loader, cat, err := DiscoverSkills(ctx, ns, s.cfg.Skills)
	if err != nil {
		return nil, err
	}
	LogCatalog(s.logger, cat)
	// The skills' files are read for their digests by a set of their own,
	// so that reading them counts as no session's read.
	opts := ns.opts
	opts.OnEvent = nil
	set, err := tools.New(ns.b, opts)
	var src *mcpserver.SkillSource
	if err == nil {
		src, err = mcpserver.NewSkillSource(ctx, loader, set, s.logger)
	}
	if err != nil {
		return nil, skillsSettingError(err)
	}
	go src.Run(sctx, s.cfg.SkillsRefresh)
	return src, nil
}

// openTenants builds the cache of the tenants' namespaces.
func (s *Server) openTenants() error {
	if s.cfg.Identity == nil {
		return errors.New("tenant mounts need an identity: the tenant is the authenticated caller's")
	}
	if len(s.cfg.Skills) > 0 {
		return errors.New("--skills: not yet served with --tenant-mount")
	}
	if err := checkDisjoint(s.cfg.Schemes, s.cfg.TenantMounts); err != nil {
		return err
	}
	if perSession(s.cfg.TenantMounts) {
		s.ready = s.tenantReadiness()
		return s.openSessions()
	}
	var err error
	s.tenants, err = tenant.NewCache(tenant.CacheOptions[tenant.ID, *Servers]{
		Size:    cmp.Or(s.cfg.TenantCache, 1000),
		Build:   s.openTenant,
		OnEvict: func(_ tenant.ID, v *Servers) { v.ns.Close() },
		Logger:  s.logger,
	})
	if err != nil {
		return err
	}
	s.ready = s.tenantReadiness()
	s.quotas, err = NewQuotas(s.cfg.Quota, s.cfg.QuotaTenants, s.tenantUsage)
	return err
}

// tenantUsage scans the stored files of tenant t.
func (s *Server) tenantUsage(ctx context.Context, t string) (quota.Usage, error) {
	v, release, err := s.tenants.Get(ctx, tenant.ID(t))
	if err != nil {
		return quota.Usage{}, err
	}
	defer release()
	return v.ns.Usage(ctx)
}

// openTenant opens the namespace of tenant id from the templates.
func (s *Server) openTenant(ctx context.Context, id tenant.ID) (*Servers, error) {
	return s.openNamespace(ctx, id, "")
}

// openNamespace opens the namespace of session sid of tenant id ("" for
// the tenant's, when no template names {session}) from the templates.
func (s *Server) openNamespace(ctx context.Context, id tenant.ID, sid tenant.SessionID) (*Servers, error) {
	nc := s.cfg.Namespace
	nc.Root, nc.Mounts = "", nil
	// The tenant's policy narrows the server's: more denied and protected
	// patterns, fewer tools.
	if s.cfg.TenantPolicies != nil {
		nc.Tools = s.cfg.TenantPolicies.For(id).Narrow(nc.Tools)
	}
	for _, tm := range s.cfg.TenantMounts {
		spec, err := tm.Template.ExpandSession(id, sid)
		if err != nil {
			return nil, err
		}
		ms, err := s.cfg.Schemes.Parse(spec)
		if err != nil {
			return nil, fmt.Errorf("mount %q: %w", tm.Name, err)
		}
		if tm.Template.PerSession() {
			if err := s.makeSessionDirs(tm.Name, ms, sid); err != nil {
				return nil, err
			}
		}
		nc.Mounts = append(nc.Mounts, Mount{Name: tm.Name, Spec: ms, Shared: tm.Template.Shared()})
	}
	slices.SortFunc(nc.Mounts, func(a, b Mount) int { return strings.Compare(a.Name, b.Name) })
	// The tenant rides in the context, as in its calls' lines.
	ctx = withCallInfo(ctx, callInfo{tenant: string(id)})
	ns, err := OpenNamespace(ctx, nc, s.opener)
	if err == nil {
		if err = s.openJournal(ctx, ns, id, sid); err != nil {
			ns.Close()
		}
	}
	if err != nil {
		s.logger.ErrorContext(ctx, "opening a tenant's namespace", "error", err)
		return nil, errors.New("its storage could not be opened")
	}
	v := s.newServers(ns)
	v.session, v.tenant = sid, id
	return v, nil
}

// tenantReadiness returns the check of /readyz with tenant mounts: every
// template that all tenants share (no {tenant}) opens and answers a stat
// within its storage deadline; nil when there is none. A tenant's own
// mounts open at its first request, and there is no tenant to check them
// for here. The answer names the mount only: the cause, which may name an
// endpoint or a host path, goes to the log.
func (s *Server) tenantReadiness() func(context.Context) error {
	var shared []Mount
	for _, tm := range s.cfg.TenantMounts {
		if !tm.Template.Shared() {
			continue
		}
		ms, err := s.cfg.Schemes.Parse(tm.Template.String())
		if err != nil {
			continue // checked by the caller; the tenants' opening says so
		}
		shared = append(shared, Mount{Name: tm.Name, Spec: ms})
	}
	if len(shared) == 0 {
		return nil
	}
	return func(ctx context.Context) error {
		for _, m := range shared {
			timeout := cmp.Or(m.Spec.Timeout, s.cfg.Namespace.StorageTimeout)
			if err := s.opener.Probe(ctx, m.Name, m.Spec, timeout); err != nil {
				s.logger.WarnContext(ctx, "not ready", "mount", "/"+m.Name, "error", err)
				return fmt.Errorf("/%s: the storage did not answer", m.Name)
			}
		}
		return nil
	}
}

// Ready reports whether the server can serve: its audit log (if any) can
// be written, and its storage answers (every mount of its one namespace,
// or every mount its tenants share). It is /readyz's check.
func (s *Server) Ready(ctx context.Context) error {
	if err := s.cfg.Audit.Health.Err(); err != nil {
		return errors.New("the audit log cannot be written; changes are refused")
	}
	if s.ready == nil {
		return nil
	}
	return s.ready(ctx)
}

// Close closes the namespaces and the storage connections.
func (s *Server) Close() error {
	s.stop()
	if s.tenants != nil {
		s.tenants.Close()
	}
	if s.collector != nil {
		s.collector.stop()
	}
	if s.sessions != nil {
		s.sessions.Close()
	}
	var err error
	if s.single != nil {
		err = s.single.ns.Close()
	}
	s.opener.Close()
	return err
}

// Metrics returns the server's metrics.
func (s *Server) Metrics() *Metrics { return s.metrics }

// hashGuard reports whether --require-read is enforced by expected_hash:
// stateless HTTP, where the requests of one agent may reach different
// replicas and no replica can remember what the agent read.
func (s *Server) hashGuard(stdio bool) bool {
	return s.cfg.Namespace.Tools.RequireRead && s.cfg.Stateless && !stdio
}

// Servers is the state of one namespace (the server's one, or a
// tenant's) that its requests find when they arrive: the namespace, the
// tool set and links of each tool list its callers use, and the changes
// its subscribers hear of. The MCP servers are the Server's, one per tool
// list (and set of tool texts), shared by every namespace that offers
// that list: a tenant costs its namespace and a target per tool list, not
// a server of its own. A stateful session or stdio gets a server of its
// own, over a tool set of its own.
type Servers struct {
	s       *Server
	ns      *Namespace
	probe   *tools.Tool
	offered []string
	// changes carries the namespace's changes to its sessions'
	// subscriptions, and no further: a tenant hears only of its own.
	changes *mcpserver.Changes
	// session is the id of the one stateful session the namespace is
	// for (a {session} template), which its server gives the SDK.
	session tenant.SessionID
	// tenant is the tenant the namespace is for ("" for the one
	// namespace of a server without tenants).
	tenant tenant.ID

	mu sync.Mutex
	// first is the target of the first tool list asked for (almost every
	// tenant's only one), more those of the others, by list.
	first *target
	more  map[string]*target
}

// target is what the calls of one tool list reach in a namespace: its
// tool set and links, and the MCP server that offers the list.
type target struct {
	key string
	t   *mcpserver.Target
	srv *mcp.Server
}

func (s *Server) newServers(ns *Namespace) *Servers {
	// Never nil, even for a namespace with no tools: nil would read as
	// "every tool" in the server and in the grants.
	offered := []string{}
	for _, t := range ns.set.Tools() {
		offered = append(offered, t.Name)
	}
	offered = append(offered, ns.checkpointTools()...)
	v := &Servers{s: s, ns: ns, offered: offered, changes: mcpserver.NewChanges()}
	if s.hashGuard(false) {
		// Only the stateless require-read check uses the probe: a
		// tenant without it does not pay for a tool set of its own.
		v.probe = ns.probe()
	}
	return v
}

// Namespace returns the namespace the servers serve.
func (v *Servers) Namespace() *Namespace { return v.ns }

// Server returns the MCP server offering list (nil: every tool of the
// namespace). A new stateful session gets a server and a tool set of its
// own, so that what one agent read does not count as read for another
// (RequireRead); otherwise the server is shared with every namespace that
// offers the same tools, and finds this namespace's tools from the
// request's context (see Server.MCPHandler).
func (v *Servers) Server(list []string, newSession bool) (*mcp.Server, error) {
	return v.server(list, newSession, false)
}

func (v *Servers) server(list []string, newSession, stdio bool) (*mcp.Server, error) {
	if list == nil {
		list = v.offered
	}
	guard := v.s.hashGuard(stdio)
	if newSession {
		set, err := v.newSet(list, guard, true)
		if err != nil {
			return nil, err
		}
		t := v.newTarget(set, guard)
		srv := v.s.ownMCPServer(set, v, guard, stdio, t)
		v.addCheckpointTools(srv, list, guard)
		return srv, nil
	}
	tg, err := v.target(list)
	if err != nil {
		return nil, err
	}
	return tg.srv, nil
}

// target returns the target of list, built on its first use.
func (v *Servers) target(list []string) (*target, error) {
	return v.targetKey(strings.Join(list, ","), list)
}

// targetKey is target with list's key.
func (v *Servers) targetKey(key string, list []string) (*target, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if tg := v.lookup(key); tg != nil {
		return tg, nil
	}
	guard := v.s.hashGuard(false)
	set, err := v.newSet(list, guard, false)
	if err != nil {
		return nil, err
	}
	tg := &target{key: key, t: v.newTarget(set, guard)}
	if v.ns.journal != nil && slices.ContainsFunc(list, isCheckpointTool) {
		// The checkpoint tools are bound to this namespace's journal
		// (checkpointmcp.Add): a list that offers them gets a server of
		// its own.
		t := tg.t
		tg.srv = v.s.ownMCPServer(set, v, guard, false, t)
		v.addCheckpointTools(tg.srv, list, guard)
	} else {
		tg.srv = v.s.sharedServer(key, list, set, v, guard, tg.t)
	}
	if v.first == nil {
		v.first = tg
	} else {
		if v.more == nil {
			v.more = map[string]*target{}
		}
		v.more[key] = tg
	}
	return tg, nil
}

func (v *Servers) lookup(key string) *target {
	if v.first != nil && v.first.key == key {
		return v.first
	}
	return v.more[key]
}

// newSet returns the tool set of list: the namespace's own when it serves
// as it is, else one of its own (a session's reads, other tools, the
// stateless require-read's options).
func (v *Servers) newSet(list []string, guard, newSession bool) (*tools.Set, error) {
	opts := v.ns.opts
	opts.Tools = fileTools(list)
	if guard {
		opts.Tools = slices.DeleteFunc(opts.Tools, func(n string) bool { return n == "apply_patch" })
		// Reads remembered by one replica would refuse the writes that
		// reach another; the expected_hash the read returned stands in.
		opts.RequireRead = false
	}
	if !newSession && !guard && !opts.RequireRead && slices.Equal(list, v.offered) {
		return v.ns.set, nil
	}
	return tools.New(v.ns.b, opts)
}

// newTarget returns the target of the calls of set: the namespace's
// changes, and the server's chain with the namespace's own links.
func (v *Servers) newTarget(set *tools.Set, guard bool) *mcpserver.Target {
	return &mcpserver.Target{Set: set, Changes: v.changes, Wrap: v.s.chain(v, guard).Wrap}
}

// maxShared bounds the shared MCP servers: tool lists and texts are few
// (scopes times tenant policies), but a process whose tool texts were
// not shared (tools keeps a bounded number) would otherwise build one
// per tenant and keep it. Beyond it, a namespace gets a server of its
// own, freed with it.
const maxShared = 256

// shared is an MCP server a Server shares between namespaces: the one of
// a tool list, its tools' texts and the instructions.
type shared struct {
	defs         []*tools.Tool
	instructions string
	srv          *mcp.Server
}

// sharedKey picks the shared servers that may offer a tool list.
type sharedKey struct {
	list         string
	guard        bool
	instructions string
}

// sharedServer returns the MCP server offering the tools of set (the
// tools of list, keyed key) to every namespace whose tools read the same,
// building it on first use; its requests find their namespace's target
// from their context. t is the target of v, for a server of its own.
func (s *Server) sharedServer(key string, list []string, set *tools.Set, v *Servers, guard bool, t *mcpserver.Target) *mcp.Server {
	k := sharedKey{list: key, guard: guard, instructions: s.instructions(v)}
	defs := set.Tools()
	s.sharedMu.Lock()
	defer s.sharedMu.Unlock()
	for _, sh := range s.shared[k] {
		if sameTools(sh.defs, defs) {
			return sh.srv
		}
	}
	if s.sharedCount >= maxShared {
		return s.ownMCPServer(set, v, guard, false, t)
	}
	find := func(ctx context.Context) (*mcpserver.Target, error) {
		v := s.namespaceOf(ctx)
		if v == nil {
			return nil, errNoNamespace
		}
		tg, err := v.targetKey(key, list)
		if err != nil {
			return nil, err
		}
		return tg.t, nil
	}
	sh := &shared{defs: defs, srv: s.newMCPServer(set, v, guard, false, s.logger, find)}
	if s.shared == nil {
		s.shared = map[sharedKey][]*shared{}
	}
	s.shared[k] = append(s.shared[k], sh)
	s.sharedCount++
	return sh.srv
}

// errNoNamespace answers a request of a shared server that carries no
// namespace: not reached, as the handler puts the tenant's in every
// request's context.
var errNoNamespace = errors.New("server: the request carries no namespace")

// namespaceOf returns the namespace of the request of ctx: the one of the
// server, or the tenant's that the handler put in the context.
func (s *Server) namespaceOf(ctx context.Context) *Servers {
	if s.single != nil {
		return s.single
	}
	v, _ := tenant.ValueFrom[*Servers](ctx)
	return v
}

// sameTools reports whether two tool lists read the same to a client:
// names, descriptions, schemas and hints. The texts of sets of one
// option set are shared, so the comparison mostly compares pointers.
func sameTools(a, b []*tools.Tool) bool {
	return slices.EqualFunc(a, b, func(x, y *tools.Tool) bool {
		return x.Name == y.Name && x.Description == y.Description && string(x.InputSchema) == string(y.InputSchema) && x.Annotations == y.Annotations
	})
}

// instructions returns the instructions of the MCP servers of v.
func (s *Server) instructions(v *Servers) string {
	if s.cfg.MCP.Instructions != "" {
		return s.cfg.MCP.Instructions
	}
	return Instructions(v.ns.mounts, v.ns.opts.Cwd)
}

// chain returns the links every call of the server passes through, for
// a tool set over the namespace of v; guard adds the stateless
// require-read check.
func (s *Server) chain(v *Servers, guard bool) Chain {
	c := Chain{Logging{}}
	if s.cfg.Tracing != nil {
		c = append(c, s.cfg.Tracing)
	}
	c = append(c, s.metrics, s.cfg.Audit, Scopes{Grants: s.grants}, Quota{Manager: s.quotas})
	if guard {
		c = append(c, RequireRead{Probe: v.probe})
	}
	for _, l := range s.cfg.Links {
		c = append(c, l)
	}
	// Innermost: a change the links refused is not journaled.
	c = append(c, v.journalLink())
	return c
}

// ownMCPServer is newMCPServer for a server only v's namespace uses, at
// target t: its lines that no request names (the SDK's, of a stateful
// session's later requests) name v's tenant.
func (s *Server) ownMCPServer(set *tools.Set, v *Servers, guard, stdio bool, t *mcpserver.Target) *mcp.Server {
	logger := s.logger
	if v.tenant != "" {
		logger = slog.New(namespaceLogs{s.logger.Handler(), string(v.tenant)})
	}
	return s.newMCPServer(set, v, guard, stdio, logger, func(context.Context) (*mcpserver.Target, error) { return t, nil })
}

// newMCPServer serves every tool of set on a new MCP server, each call
// working on the target find gives it and passing through the target's
// chain; the files are resources when the set offers read_file, and the
// skills are prompts and resources. Its lines go to logger.
func (s *Server) newMCPServer(set *tools.Set, v *Servers, guard, stdio bool, logger *slog.Logger, find func(context.Context) (*mcpserver.Target, error)) *mcp.Server {
	opts := s.cfg.MCP
	// Stateless HTTP cannot carry what needs a session (a subscription's
	// updates, an approval's answer to a client before 2026-07-28).
	opts.Stateless = s.cfg.Stateless && !stdio
	_, reads := set.Tool("read_file")
	if reads {
		// Skills are files of the namespace: a caller who may not read
		// files gets neither their resources nor their prompts.
		opts.Skills = s.skills
	}
	opts.Instructions = s.instructions(v)
	opts.Logger = logger
	opts.Resources = reads
	if v.session != "" {
		// The session's storage was made under this id before the
		// session existed: the SDK issues it as the Mcp-Session-Id.
		sid := string(v.session)
		opts.SessionID = func() string { return sid }
	}
	srv := mcpserver.NewShared(set, opts, find)
	if s.cfg.OnMCPServer != nil {
		s.cfg.OnMCPServer(srv)
	}
	if s.quotas != nil {
		srv.AddReceivingMiddleware(Quota{Manager: s.quotas}.Middleware())
	}
	if s.cfg.Audit.Log != nil && s.cfg.Audit.Reads {
		srv.AddReceivingMiddleware(s.cfg.Audit.Middleware())
	}
	if s.cfg.Identity != nil {
		srv.AddReceivingMiddleware(Scopes{Grants: s.grants}.Middleware())
	}
	return srv
}

// Instructions tell the model where relative paths start and, when the
// namespace is made of mounts, how paths are rooted. They never name a
// host path.
func Instructions(mounts []Mount, cwd string) string {
	if len(mounts) == 0 {
		where := "the workspace root"
		if cwd != "" {
			where = "'" + cwd + "' (in the workspace)"
		}
		return "Relative file paths start at the working directory, " + where + "."
	}
	var names []string
	for _, m := range mounts {
		name := "/" + m.Name
		if m.Spec.ReadOnly {
			name += " (read-only)"
		}
		names = append(names, name)
	}
	return "File paths are rooted: each mount is a top-level directory. Mounts: " + strings.Join(names, ", ") +
		". The working directory is " + cmp.Or(cwd, "/") + "; relative paths start there."
}

// ServeStdio serves one session over in and out until the client closes
// in or ctx ends; out is not closed.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	if s.single == nil {
		return errors.New("tenants are served over HTTP only")
	}
	server, err := s.single.server(nil, true, true)
	if err != nil {
		return err
	}
	rc, ok := in.(io.ReadCloser)
	if !ok {
		rc = io.NopCloser(in)
	}
	s.logger.Info("serving MCP over stdio")
	err = server.Run(ctx, &mcp.IOTransport{Reader: rc, Writer: nopWriteCloser{out}})
	if err != nil && ctx.Err() != nil {
		return nil // asked to stop
	}
	return err
}

// nopWriteCloser keeps the transport from closing out, which belongs to
// the caller.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
