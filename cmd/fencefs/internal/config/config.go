// Package config reads the settings of the fencefs command from its
// command line and an optional YAML file.
//
// Every setting is a flag; the file uses the flag names with "_" for "-"
// as keys, lists for repeatable flags and a "mounts" map of name to spec.
// The file is applied first and the command line second, so a flag given
// on the command line overrides the file (a repeatable flag replaces the
// file's whole list). Values are validated as they are read, and an error
// names the setting and, for the file, the line.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/fencefs/fencefs/mountspec/spec"
	"github.com/fencefs/fencefs/policy"
	"github.com/fencefs/fencefs/quota"
	"github.com/fencefs/fencefs/tools"
)

// Settings are the settings of one fencefs command.
type Settings struct {
	// Schemes open the mount kinds of the adapters in modules of their
	// own (gs://, azblob://); mounts and tenant templates are parsed with
	// them, and the server opens with them.
	Schemes spec.Schemes
	// ConfigFile is the YAML file the settings were read from, if any.
	ConfigFile string
	// Root is the local directory of a plain namespace.
	Root string
	// Cwd is where relative tool paths resolve.
	Cwd string
	// Allow, Deny and Protect are policy patterns; Protect adds to the
	// default protected patterns unless NoDefaultProtect is set.
	Allow, Deny, Protect []string
	// NoDefaultProtect drops the default protected patterns.
	NoDefaultProtect bool
	// MaxReadLines, MaxReadChars, MaxList, MaxSearch and MaxFind are the
	// tools' limits.
	MaxReadLines, MaxReadChars, MaxList, MaxSearch, MaxFind int
	// ReadOnly keeps only the read-only tools.
	ReadOnly bool
	// NoHashes removes content hashes from the tools' texts.
	NoHashes bool
	// RequireRead turns on the read-before-write guard.
	RequireRead bool
	// Tools names the tools to offer; nil means the default tools.
	Tools []string
	// Mounts, sorted by name, make the namespace rooted when not empty.
	Mounts []Mount
	// LogLevel is the lowest level logged to stderr.
	LogLevel slog.Level
	// LogFormat is "text" (key=value) or "json" (one object a line).
	LogFormat string
	// HTTP is the listen address of the streamable HTTP server (serve
	// only); "" serves over stdio.
	HTTP string
	// CallTimeout bounds each tool call.
	CallTimeout time.Duration
	// EditTolerance is tools.Options.EditTolerance: "" (exact matching)
	// or "whitespace".
	EditTolerance string
	// RipgrepSlots, when set, bounds the ripgrep processes of every tool
	// set these settings build together (a server's sessions and
	// tenants); nil gives each tool set a bound of its own.
	RipgrepSlots *tools.RipgrepSlots
	// StorageTimeout bounds each request to network storage (S3, SFTP)
	// and the probe of a mount at start-up, for mounts whose spec sets no
	// timeout of its own.
	StorageTimeout time.Duration
	// SessionTimeout closes an HTTP session idle for that long (serve
	// only).
	SessionTimeout time.Duration
	// SessionRetention is how long serve keeps the storage of an ended
	// session ({session} in a tenant mount or the checkpoint store) for
	// review before removing it: 0 removes it as the session ends, a
	// negative value ("never") keeps it.
	SessionRetention time.Duration
	// SessionCollectLeftovers says this server alone uses the locations
	// of its {session} templates: at start-up it also removes the
	// storage of sessions it did not see end (serve only).
	SessionCollectLeftovers bool
	// MaxSessions bounds the number of open HTTP sessions (serve only).
	MaxSessions int
	// MaxConnections bounds the open HTTP connections (serve only): -1,
	// the default, takes server.DefaultMaxConnections (a quarter of the
	// limit on open files), 0 sets no bound.
	MaxConnections int
	// MaxRequestBytes bounds the body of one HTTP request (serve only).
	MaxRequestBytes int64
	// HTTPTimeout bounds the arrival of an HTTP request (headers and
	// body) and each write of an answer (serve only).
	HTTPTimeout time.Duration
	// Skills are the roots whose skills serve offers as MCP prompts and
	// the skills command lists, in precedence order (serve and skills
	// only). Each is written as a tool path from the namespace root.
	Skills []string
	// SkillsRefresh is how often serve finds the skills again.
	SkillsRefresh time.Duration

	// Auth is how HTTP callers are authenticated (serve --http only): ""
	// (none; loopback only), "jwt" or "tokens".
	Auth string
	// OIDCIssuer, OIDCJWKS and OIDCAudience configure the JWT verifier:
	// the issuer (discovered unless OIDCJWKS names the key set) and the
	// audience a token must name. OIDCAlgs, when set, narrows the
	// accepted signature algorithms.
	OIDCIssuer, OIDCJWKS, OIDCAudience string
	OIDCAlgs                           []string
	// OIDCTokenType, when set, is the JOSE "typ" a JWT must carry
	// ("at+jwt"), which tells access tokens from ID tokens.
	OIDCTokenType string
	// TenantClaim and ScopeClaim name the JWT claims holding the tenant
	// (default sub) and the scopes (default scope, then scp).
	TenantClaim, ScopeClaim string
	// TokenFile is the static token file of Auth "tokens", reloaded on
	// SIGHUP.
	TokenFile string
	// ResourceURL is the server's public URL of /mcp, announced in the
	// RFC 9728 protected-resource metadata.
	ResourceURL string
	// TLSCert and TLSKey, given together, serve HTTPS.
	TLSCert, TLSKey string
	// Approve names the calls the user approves through the host: "none"
	// or "changes". ApproveFallback decides the changes of a client that
	// cannot ask its user: "refuse" (an error result) or "cancel" (the
	// result of a cancelled change); neither writes.
	Approve, ApproveFallback string
	// ApprovalKeyFile holds the secret that signs approvals, shared by
	// replicas so that any of them takes the answer to another's
	// approval; ApprovalKey is its content, read by serve at start-up.
	ApprovalKeyFile string
	ApprovalKey     []byte
	// Stateful keeps MCP sessions in the process's memory instead of
	// answering each HTTP request on its own.
	Stateful bool
	// TenantMounts are the mount templates of each tenant's namespace,
	// "NAME=SPEC" with {tenant} in SPEC.
	TenantMounts []string
	// TenantCache bounds the tenants whose namespaces stay open.
	TenantCache int
	// MemoryLimit is serve's soft memory limit in bytes; 0 leaves it to
	// GOMEMLIMIT, else to the cgroup's limit (server.MemoryLimit).
	MemoryLimit int64
	// Audit is where the audit log goes: a file, "-" for stdout, or ""
	// for none. AuditReads logs the reading calls too.
	Audit string
	// Checkpoints, for serve and call, is the mount spec of a checkpoint store:
	// each change is journaled there before it commits (package
	// checkpoint), for fencefs checkpoints to restore.
	Checkpoints string
	// CheckpointTools, for serve with Checkpoints, offers the model
	// list_checkpoints ("list") or both it and restore_checkpoint
	// ("restore"); "none" (the default) offers neither.
	CheckpointTools string
	// CheckpointKeep, CheckpointKeepAge and CheckpointKeepBytes, for
	// serve with Checkpoints, bound each journal (checkpoint.Options'
	// KeepCount, KeepAge, KeepBytes): applied when a journal opens and at
	// each new turn; 0 keeps everything.
	CheckpointKeep      int
	CheckpointKeepAge   time.Duration
	CheckpointKeepBytes int64
	AuditReads          bool
	// OTLPEndpoint is the base URL of an OTLP/HTTP receiver that traces
	// and metrics are exported to ("" for none); OTLPPaths puts the
	// paths of calls and storage operations on their spans.
	OTLPEndpoint string
	OTLPPaths    bool
	// Quota are the limits of every tenant (of the whole server without
	// --auth); QuotaTenants replace them for named tenants (config file
	// key quota_tenants).
	Quota        quota.Limits
	QuotaTenants map[string]quota.Limits
	// Scopes map a token's scopes to the tools they grant (config file
	// key scopes; nil: tenant.DefaultScopes), checked by tenant.NewGrants.
	Scopes map[string][]string
	// TenantPolicies narrow the settings for named tenants (config file
	// key tenant_policy), checked by tenant.NewPolicies
	// (in the one-shot build, which has no serve, never set).
	TenantPolicies map[string]tenantPolicy

	// rootGiven records that --root was given, which mounts exclude.
	rootGiven bool
	// toolsAll records that --tools named all.
	toolsAll bool
}

// Mount is one named mount of a rooted namespace.
type Mount struct {
	// Name is the mount's single-component name: it is mounted at /Name.
	Name string
	// Spec says what is mounted.
	Spec spec.Spec

	// fromFile marks, while parsing, a mount the config file gave, which a
	// --mount of the same name replaces.
	fromFile bool
}

// Defaults returns the settings of serve given no flags; the other
// commands log from slog.LevelWarn.
func Defaults() Settings {
	return Settings{
		Schemes:      CommandSchemes(),
		Root:         ".",
		MaxReadLines: tools.DefaultMaxReadLines,
		MaxList:      tools.DefaultMaxResults,
		MaxSearch:    tools.DefaultMaxResults,
		MaxFind:      tools.DefaultMaxResults,
		LogLevel:     slog.LevelInfo,
		LogFormat:    "text",

		CallTimeout:      tools.DefaultCallTimeout,
		StorageTimeout:   DefaultStorageTimeout,
		SessionTimeout:   DefaultSessionTimeout,
		SessionRetention: DefaultSessionRetention,
		MaxSessions:      DefaultMaxSessions,
		MaxConnections:   -1,
		MaxRequestBytes:  DefaultMaxRequestBytes,
		HTTPTimeout:      DefaultHTTPTimeout,
		TenantCache:      DefaultTenantCache,

		SkillsRefresh:   defaultSkillsRefresh,
		Approve:         "none",
		ApproveFallback: "refuse",
	}
}

// Defaults of the settings that tools.Options does not have.
const (
	// DefaultStorageTimeout bounds a request to S3 or SFTP storage: long
	// for one request, well short of a call's deadline, so that a hung
	// server fails the call with a message instead of the call's timeout.
	DefaultStorageTimeout = 30 * time.Second
	// DefaultSessionTimeout closes an HTTP session after 10 idle minutes.
	DefaultSessionTimeout = 10 * time.Minute
	// DefaultSessionRetention keeps an ended session's storage a day
	// (server.DefaultSessionRetention).
	DefaultSessionRetention = 24 * time.Hour
	// DefaultMaxSessions bounds the open HTTP sessions; each holds about
	// 100 KB.
	DefaultMaxSessions = 1000
	// DefaultMaxRequestBytes bounds an HTTP request's body: twice the
	// largest file edit_file edits, so that a write_file of a file that
	// large fits with the growth of JSON escaping.
	DefaultMaxRequestBytes = 2 * tools.MaxEditBytes
	// DefaultHTTPTimeout bounds the arrival of an HTTP request and each
	// write of an answer.
	DefaultHTTPTimeout = 30 * time.Second
	// DefaultTenantCache keeps the namespaces of the 1000 most recently
	// served tenants open.
	DefaultTenantCache = 1000
)

// defaultsFor returns the defaults of cmd: the one-shot commands log
// only warnings unless asked, so that their stderr stays quiet.
func defaultsFor(cmd string) Settings {
	s := Defaults()
	if cmd != "serve" {
		s.LogLevel = slog.LevelWarn
	}
	return s
}

// ToolOptions returns the tools.Options the settings describe.
func (s *Settings) ToolOptions() tools.Options {
	return tools.Options{
		Cwd:              s.Cwd,
		Allowed:          s.Allow,
		Denied:           s.Deny,
		Protected:        s.Protect,
		NoDefaultProtect: s.NoDefaultProtect,
		MaxReadLines:     s.MaxReadLines,
		MaxReadChars:     s.MaxReadChars,
		MaxListResults:   s.MaxList,
		MaxSearchResults: s.MaxSearch,
		MaxFindResults:   s.MaxFind,
		ReadOnly:         s.ReadOnly,
		NoContentHashes:  s.NoHashes,
		Tools:            s.Tools,
		RequireRead:      s.RequireRead,
		CallTimeout:      s.CallTimeout,
		EditTolerance:    s.EditTolerance,
		RipgrepSlots:     s.RipgrepSlots,
	}
}

// Error is a refused setting.
type Error struct {
	// Where is the config file and line ("fencefs.yaml:3"), or "" for the
	// command line.
	Where string
	// Setting names the setting ("--max-list", "max_list", `mount "ws"`).
	Setting string
	// Err says what is wrong.
	Err error
}

// Error returns "<where>: <setting>: <problem>".
func (e *Error) Error() string {
	var parts []string
	for _, p := range []string{e.Where, e.Setting} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(append(parts, e.Err.Error()), ": ")
}

func (e *Error) Unwrap() error { return e.Err }

// ErrHelp is returned by Parse when the command line asks for help.
var ErrHelp = flag.ErrHelp

// Parse reads the settings of the command cmd ("serve", "call", "tools"
// or "skills") from its arguments, and from the YAML file named by --config
// when there is one. It returns the settings and the positional
// arguments. Flags come before positional arguments.
func Parse(cmd string, args []string) (*Settings, []string, error) {
	s := defaultsFor(cmd)
	p := newParser(cmd, &s)
	if err := p.parse(args); err != nil {
		return nil, nil, err
	}
	if s.ConfigFile != "" {
		// Start again from the defaults (the flag values point into s),
		// apply the file, then the command line over it.
		file := s.ConfigFile
		s = defaultsFor(cmd)
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, nil, &Error{Setting: "--config", Err: err}
		}
		if err := p.applyFile(file, data); err != nil {
			return nil, nil, err
		}
		for _, b := range p.inherited {
			*b = true
		}
		for i := range s.Mounts {
			s.Mounts[i].fromFile = true
		}
		if err := p.parse(args); err != nil {
			return nil, nil, err
		}
		for i := range s.Mounts {
			s.Mounts[i].fromFile = false
		}
	}
	if err := checkToolFlags(&s); err != nil {
		return nil, nil, err
	}
	if err := checkServeFlags(&s); err != nil {
		return nil, nil, err
	}
	if len(s.Mounts) > 0 && s.rootGiven {
		return nil, nil, &Error{Setting: "--root", Err: errors.New("cannot be combined with --mount; mount the directory instead (--mount NAME=local:DIR)")}
	}
	return &s, p.fs.Args(), nil
}

// checkToolFlags refuses --read-only with --tools naming a tool that
// changes storage: the tool would silently be left out, down to a server
// with no tools at all. "--tools all" with --read-only means every
// read-only tool.
func checkToolFlags(s *Settings) error {
	if !s.ReadOnly || s.Tools == nil || s.toolsAll {
		return nil
	}
	var writing []string
	for _, n := range s.Tools {
		if !slices.Contains(tools.ReadOnlyTools(), n) {
			writing = append(writing, n)
		}
	}
	if len(writing) == 0 {
		return nil
	}
	return &Error{Setting: "--read-only", Err: fmt.Errorf("contradicts --tools: %s %s storage, which a read-only server does not offer; drop %s from --tools, or drop --read-only",
		strings.Join(writing, ", "), plural(len(writing), "changes", "change"), plural(len(writing), "it", "them"))}
}

// checkServeFlags refuses HTTP settings that cannot work together, so a
// server never starts with less protection than its flags suggest.
func checkServeFlags(s *Settings) error {
	refuse := func(setting, msg string) error { return &Error{Setting: setting, Err: errors.New(msg)} }
	if s.ApprovalKeyFile != "" && s.Approve != "changes" {
		return refuse("--approval-key-file", "needs --approve changes")
	}
	switch s.Auth {
	case "jwt":
		if s.OIDCIssuer == "" {
			return refuse("--auth jwt", "needs --oidc-issuer")
		}
		if s.OIDCAudience == "" {
			return refuse("--auth jwt", "needs --oidc-audience (a token for another service must not be accepted)")
		}
	case "tokens":
		if s.TokenFile == "" {
			return refuse("--auth tokens", "needs --token-file")
		}
	}
	if s.Auth != "" && s.HTTP == "" {
		return refuse("--auth", "needs --http (stdio has no callers to authenticate)")
	}
	if s.MaxRequestBytes < 1 {
		return refuse("--max-request-bytes", "must be > 0")
	}
	if (s.TLSCert == "") != (s.TLSKey == "") {
		return refuse("--tls-cert", "and --tls-key go together")
	}
	if s.TLSCert != "" && s.HTTP == "" {
		return refuse("--tls-cert", "needs --http")
	}
	if s.Scopes != nil && s.Auth == "" {
		return refuse("scopes", "needs --auth: scopes come from the verified token")
	}
	if s.OTLPEndpoint != "" {
		if err := CheckOTLPEndpoint(s.OTLPEndpoint); err != nil {
			return refuse("--otlp-endpoint", err.Error())
		}
	}
	if s.OTLPPaths && s.OTLPEndpoint == "" {
		return refuse("--otlp-paths", "needs --otlp-endpoint")
	}
	if s.TenantPolicies != nil && len(s.TenantMounts) == 0 {
		return refuse("tenant_policy", "needs --tenant-mount: without it there are no tenants' namespaces to narrow")
	}
	if s.SessionRetention != DefaultSessionRetention || s.SessionCollectLeftovers {
		named := false
		for _, m := range s.TenantMounts {
			// tenant.SessionPlaceholder, spelled out: the one-shot
			// build links no tenant package.
			named = named || strings.Contains(m, "{session}")
		}
		if !named {
			setting := "--session-retention"
			if s.SessionCollectLeftovers {
				setting = "--session-collect-leftovers"
			}
			return refuse(setting, "applies to sessions' own storage, and no --tenant-mount names {session}")
		}
	}
	if len(s.TenantMounts) > 0 {
		if s.Auth == "" {
			return refuse("--tenant-mount", "needs --auth: the tenant comes from the verified token")
		}
		if len(s.Mounts) > 0 || s.rootGiven {
			return refuse("--tenant-mount", "cannot be combined with --mount or --root: each tenant's namespace is made of the tenant mounts")
		}
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// parser binds one FlagSet to one Settings value.
type parser struct {
	cmd string
	fs  *flag.FlagSet
	// s receives the settings the file gives outside the flags
	// (quota_tenants).
	s *Settings
	// inherited holds one mark per repeatable flag: set after the file
	// has been applied, each makes the command line replace the file's
	// list of that flag.
	inherited []*bool
	// failed records the setting whose value the last Set refused, since
	// the flag package flattens the error.
	failed *Error
}

// newParser builds the FlagSet of cmd over s.
func newParser(cmd string, s *Settings) *parser {
	p := &parser{cmd: cmd, s: s, fs: flag.NewFlagSet(cmd, flag.ContinueOnError)}
	p.fs.SetOutput(io.Discard)
	p.fs.Usage = func() {}
	mark := func() *bool {
		b := new(bool)
		p.inherited = append(p.inherited, b)
		return b
	}
	for _, d := range definitions(s, mark) {
		if !d.takenBy(cmd) {
			continue
		}
		p.fs.Var(recorder{d.value, "--" + d.name, p}, d.name, d.usage)
	}
	return p
}

// parse parses the command line.
func (p *parser) parse(args []string) error {
	p.failed = nil
	err := p.fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		return ErrHelp
	case p.failed != nil:
		return p.failed
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		if name == "-require-read" && p.cmd == "call" {
			return &Error{Setting: "--require-read", Err: errors.New("not for call: each call is a new process, so no file counts as read before it and every change would be refused; use it with serve")}
		}
		return &Error{Setting: "-" + name, Err: fmt.Errorf("unknown flag (see fencefs help %s)", p.cmd)}
	}
	return errors.New(strings.Replace(msg, "flag needs an argument: ", "missing value for ", 1))
}

// recorder forwards to a flag.Value and records which setting refused a
// value.
type recorder struct {
	flag.Value
	name string
	p    *parser
}

func (r recorder) Set(s string) error {
	err := r.Value.Set(s)
	if err != nil {
		setting := r.name
		var n *namedError
		if errors.As(err, &n) {
			setting, err = n.label, n.err
		}
		r.p.failed = &Error{Setting: setting, Err: err}
	}
	return err
}

func (r recorder) IsBoolFlag() bool {
	b, ok := r.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// definition describes one setting: its flag, usage and value.
type definition struct {
	name  string
	arg   string // placeholder shown in the usage; "" for booleans
	usage string
	value flag.Value
	// only lists the commands that take the setting; nil means all.
	only []string
}

// takenBy reports whether the command cmd takes the setting.
func (d definition) takenBy(cmd string) bool {
	return d.only == nil || slices.Contains(d.only, cmd)
}

// definitions lists the settings in the order the usage shows them.
// mark returns the inherited mark of one repeatable flag.
func definitions(s *Settings, mark func() *bool) []definition {
	list := func(p *[]string, k policy.PatternKind) flag.Value { return listValue{p, checkPattern(k), mark()} }
	return []definition{
		{name: "config", arg: "FILE", usage: "read settings from a YAML file (keys are flag names with _, plus scopes, tenant_policy and quota_tenants, which have no flag; flags override it)", value: stringValue{&s.ConfigFile}},
		{name: "root", arg: "DIR", usage: `the local directory the tools work in (default ".")`, value: rootValue{&s.Root, &s.rootGiven}},
		{name: "mount", arg: "NAME=SPEC", usage: "mount storage at /NAME (repeatable; makes paths rooted): local:DIR[:ro], s3://BUCKET/PREFIX?..., sftp://USER@HOST:PORT/DIR?..., gs://BUCKET/PREFIX?..., azblob://CONTAINER/PREFIX?...", value: mountsValue{&s.Mounts, &s.Schemes, mark()}},
		{name: "cwd", arg: "PATH", usage: "the directory relative tool paths start from; must exist (default: the root)", value: stringValue{&s.Cwd}},
		{name: "skills", arg: "ROOT", usage: "offer the skills under ROOT as MCP prompts and resources (repeatable; earlier roots win)", value: listValue{&s.Skills, checkNotEmpty, mark()}, only: []string{"serve", "skills"}},
		{name: "skills-refresh", arg: "DURATION", usage: "find the skills again this often; clients are told when they changed (default 30s)", value: durationValue{&s.SkillsRefresh}, only: []string{"serve"}},
		{name: "allow", arg: "PATTERN", usage: "allow only paths matching a pattern (repeatable; see fencefs help patterns)", value: list(&s.Allow, policy.AllowedPattern)},
		{name: "deny", arg: "PATTERN", usage: "deny reading, listing and changing paths matching a pattern and everything below them (repeatable)", value: list(&s.Deny, policy.DeniedPattern)},
		{name: "protect", arg: "PATTERN", usage: "make matching paths read-only (still readable), in addition to the defaults (repeatable)", value: list(&s.Protect, policy.ProtectedPattern)},
		{name: "no-default-protect", usage: "drop the default protected patterns (**/.git, **/.env, **/.env.*, *.pem, *.key, **/secrets*)", value: boolValue{&s.NoDefaultProtect}},
		{name: "read-only", usage: "offer only the read-only tools", value: boolValue{&s.ReadOnly}},
		{name: "checkpoints", arg: "STORE", usage: "journal the change before it commits in STORE, a mount spec outside the namespace (local:DIR, s3://..., sftp://...), so that fencefs checkpoints STORE can restore it; a change that cannot be journaled is not made (serve with --tenant-mount: a template with {tenant}, one journal per tenant, counted in its quota)", value: stringValue{&s.Checkpoints}, only: []string{"serve", "call"}},
		{name: "checkpoint-tools", arg: "WHICH", usage: "with --checkpoints: offer the model list_checkpoints (list), or list_checkpoints and restore_checkpoint (restore), granted by scopes as any tool (groups read and write); restoring is usually a person's act (default none)", value: choiceValue{&s.CheckpointTools, []string{"none", "list", "restore"}}, only: []string{"serve"}},
		{name: "checkpoint-keep", arg: "N", usage: "with --checkpoints: keep each journal's last N changes, dropping older checkpoints when a journal opens and at each new turn (default 0: all)", value: intValue{&s.CheckpointKeep, 0}, only: []string{"serve"}},
		{name: "checkpoint-keep-age", arg: "DURATION", usage: "with --checkpoints: drop checkpoints older than DURATION, as --checkpoint-keep does (default: none dropped)", value: durationValue{&s.CheckpointKeepAge}, only: []string{"serve"}},
		{name: "checkpoint-keep-bytes", arg: "N", usage: "with --checkpoints: drop the oldest checkpoints until each store holds at most N bytes, as --checkpoint-keep does; with a quota, a tenant's store counts in it (default 0: no bound)", value: int64Value{&s.CheckpointKeepBytes}, only: []string{"serve"}},
		{name: "tools", arg: "LIST", usage: "comma-separated tools to offer, or all (default: " + strings.Join(tools.DefaultTools(), ",") + "; the others, such as apply_patch, delete_file, move_file, copy_file, list_files and grep, by name)", value: toolsValue{&s.Tools, &s.toolsAll}},
		{name: "require-read", usage: "refuse to change a file the session has not read, or that changed since", value: boolValue{&s.RequireRead}, only: []string{"serve", "tools", "skills"}},
		{name: "no-hashes", usage: "leave content hashes out of read, write and edit results", value: boolValue{&s.NoHashes}},
		{name: "max-read-lines", arg: "N", usage: "default number of lines read_file returns (default 2000)", value: intValue{&s.MaxReadLines, 1}},
		{name: "max-read-chars", arg: "N", usage: "cap on the characters of one read_file result (default 0: no cap)", value: intValue{&s.MaxReadChars, 0}},
		{name: "max-list", arg: "N", usage: "cap on list_directory entries (default 1000)", value: intValue{&s.MaxList, 1}},
		{name: "max-search", arg: "N", usage: "cap on search_files and grep matches (default 1000)", value: intValue{&s.MaxSearch, 1}},
		{name: "max-find", arg: "N", usage: "cap on find_files and list_files results (default 1000)", value: intValue{&s.MaxFind, 1}},
		{name: "edit-tolerance", arg: "MODE", usage: "whitespace: edit_file also applies an old_text that matches exactly once when indentation and trailing whitespace are ignored, keeping the file's own (default: exact matches only)", value: choiceValue{&s.EditTolerance, []string{tools.ToleranceWhitespace}}},
		{name: "call-timeout", arg: "DURATION", usage: "stop a tool call that runs longer (default 60s)", value: durationValue{&s.CallTimeout}},
		{name: "storage-timeout", arg: "DURATION", usage: "deadline of each request to S3 or SFTP storage and of a mount's check at start-up; a mount's timeout= overrides it (default 30s)", value: durationValue{&s.StorageTimeout}},
		{name: "session-timeout", arg: "DURATION", usage: "close an HTTP session idle this long (default 10m)", value: durationValue{&s.SessionTimeout}, only: []string{"serve"}},
		{name: "session-retention", arg: "DURATION", usage: "with {session} in --tenant-mount: keep an ended session's storage (its upper layers and checkpoint store) this long for review, then remove it; 0 removes it as the session ends, never keeps it (default 24h)", value: retentionValue{&s.SessionRetention}, only: []string{"serve"}},
		{name: "session-collect-leftovers", usage: "with {session} in --tenant-mount, when this server alone uses the templates' locations (no replica sharing them, not during a rolling restart): at start-up also remove the storage of sessions it did not see end, each once --session-retention and --session-timeout passed since the newest change in its tree (default: left to the operator, so that replicas never remove one another's live sessions)", value: boolValue{&s.SessionCollectLeftovers}, only: []string{"serve"}},
		{name: "max-sessions", arg: "N", usage: "refuse a new HTTP session while N are open (default 1000)", value: intValue{&s.MaxSessions, 1}, only: []string{"serve"}},
		{name: "max-connections", arg: "N", usage: "keep at most N HTTP connections open; beyond them GET /healthz is answered and anything else refused with 503 (default: a quarter of the limit on open files; 0: no bound)", value: intValue{&s.MaxConnections, 0}, only: []string{"serve"}},
		{name: "max-request-bytes", arg: "N", usage: "refuse an HTTP request whose body is over N bytes with 413, so a write_file's content can be up to about N bytes (default 134217728: 128 MiB)", value: int64Value{&s.MaxRequestBytes}, only: []string{"serve"}},
		{name: "http-timeout", arg: "DURATION", usage: "drop an HTTP client whose request takes longer to arrive, or that takes longer to accept one write of an answer (default 30s)", value: durationValue{&s.HTTPTimeout}, only: []string{"serve"}},
		{name: "log-level", arg: "LEVEL", usage: "lowest level logged to stderr: debug, info, warn or error (default: info for serve, warn otherwise)", value: levelValue{&s.LogLevel}},
		{name: "log-format", arg: "FORMAT", usage: "text (key=value) or json (one JSON object a line, with tenant and request_id on every line of a call) (default text)", value: choiceValue{&s.LogFormat, []string{"text", "json"}}},
		{name: "http", arg: "ADDR", usage: "serve streamable HTTP on ADDR (such as 127.0.0.1:8080) at /mcp instead of stdio", value: addrValue{&s.HTTP}, only: []string{"serve"}},
		{name: "approve", arg: "WHAT", usage: "changes: show every change (write, edit, delete, move, copy, create_directory, apply_patch) with its diff to the user through the host (MCP elicitation), and make it only when the user accepts (default none)", value: choiceValue{&s.Approve, []string{"none", "changes"}}, only: []string{"serve"}},
		{name: "approve-fallback", arg: "HOW", usage: "with --approve changes, a change asked by a client that cannot ask its user: refuse (an error result) or cancel (the result of a cancelled change); neither writes (default refuse)", value: choiceValue{&s.ApproveFallback, []string{"refuse", "cancel"}}, only: []string{"serve"}},
		{name: "approval-key-file", arg: "FILE", usage: "with --approve changes, sign approvals with the secret in FILE (at least 32 bytes), the same for every replica behind one URL, so that any replica takes the user's answer (default: a random key per process)", value: stringValue{&s.ApprovalKeyFile}, only: []string{"serve"}},
		{name: "stateful", usage: "keep MCP sessions in this process (server-to-client streams, per-session --require-read); default: stateless, any replica answers any request", value: boolValue{&s.Stateful}, only: []string{"serve"}},
		{name: "auth", arg: "KIND", usage: "authenticate HTTP callers: jwt (--oidc-*) or tokens (--token-file); without it --http binds only loopback", value: choiceValue{&s.Auth, []string{"jwt", "tokens"}}, only: []string{"serve"}},
		{name: "oidc-issuer", arg: "URL", usage: "the JWT issuer (its OIDC discovery gives the key set unless --oidc-jwks)", value: stringValue{&s.OIDCIssuer}, only: []string{"serve"}},
		{name: "oidc-jwks", arg: "URL", usage: "the issuer's JWKS URL, skipping discovery", value: stringValue{&s.OIDCJWKS}, only: []string{"serve"}},
		{name: "oidc-audience", arg: "AUD", usage: "the audience a JWT must name (required with --auth jwt)", value: stringValue{&s.OIDCAudience}, only: []string{"serve"}},
		{name: "oidc-token-type", arg: "TYPE", usage: "the JOSE typ header a JWT must carry, such as at+jwt for RFC 9068 access tokens, so an ID token for the same audience is refused (default: any)", value: stringValue{&s.OIDCTokenType}, only: []string{"serve"}},
		{name: "oidc-alg", arg: "ALG", usage: "accept only this JWT signature algorithm (repeatable; default: every asymmetric one)", value: listValue{&s.OIDCAlgs, checkNotEmpty, mark()}, only: []string{"serve"}},
		{name: "tenant-claim", arg: "CLAIM", usage: "the JWT claim naming the tenant (default sub)", value: stringValue{&s.TenantClaim}, only: []string{"serve"}},
		{name: "scope-claim", arg: "CLAIM", usage: "the JWT claim holding the scopes (default scope, then scp)", value: stringValue{&s.ScopeClaim}, only: []string{"serve"}},
		{name: "token-file", arg: "FILE", usage: "static tokens (SHA-256 hashes, tenant and scopes each) for --auth tokens; reloaded on SIGHUP", value: stringValue{&s.TokenFile}, only: []string{"serve"}},
		{name: "resource-url", arg: "URL", usage: "the public URL of /mcp, announced in the protected-resource metadata (default: from the listener)", value: stringValue{&s.ResourceURL}, only: []string{"serve"}},
		{name: "tls-cert", arg: "FILE", usage: "serve HTTPS with this certificate (with --tls-key)", value: stringValue{&s.TLSCert}, only: []string{"serve"}},
		{name: "tls-key", arg: "FILE", usage: "the private key of --tls-cert", value: stringValue{&s.TLSKey}, only: []string{"serve"}},
		{name: "tenant-mount", arg: "NAME=SPEC", usage: "mount SPEC, with {tenant} replaced by the caller's tenant and {session} (after a {tenant}; needs --stateful) by the MCP session's id the server issued, at /NAME of each tenant's (or session's) namespace (repeatable; needs --auth)", value: listValue{&s.TenantMounts, func(v string) error { return checkTenantMount(s.Schemes, v) }, mark()}, only: []string{"serve"}},
		{name: "tenant-cache", arg: "N", usage: "keep the namespaces of the N most recent tenants open (default 1000)", value: intValue{&s.TenantCache, 1}, only: []string{"serve"}},
		{name: "memory-limit", arg: "N", usage: "the soft memory limit in bytes: the collector works harder near it (default 0: GOMEMLIMIT when set, else 90% of the cgroup's memory limit, else none)", value: int64Value{&s.MemoryLimit}, only: []string{"serve"}},
		{name: "audit", arg: "FILE", usage: "append a hash-chained JSON line per changing call to FILE (- for stdout); check it with fencefs audit verify", value: stringValue{&s.Audit}, only: []string{"serve"}},
		{name: "quota-bytes", arg: "N", usage: "per tenant: refuse a write, copy or edit that would store more than N bytes (default 0: no limit)", value: int64Value{&s.Quota.MaxBytes}, only: []string{"serve"}},
		{name: "quota-files", arg: "N", usage: "per tenant: refuse a change that would store more than N files (default 0: no limit)", value: int64Value{&s.Quota.MaxFiles}, only: []string{"serve"}},
		{name: "rate-limit", arg: "R", usage: "per tenant and replica: tool calls per second (default 0: no limit)", value: floatValue{&s.Quota.CallsPerSecond}, only: []string{"serve"}},
		{name: "rate-burst", arg: "N", usage: "calls allowed at once above --rate-limit (default: the rate rounded up)", value: intValue{&s.Quota.Burst, 0}, only: []string{"serve"}},
		{name: "max-concurrent", arg: "N", usage: "per tenant and replica: tool calls running at once (default 0: no limit)", value: intValue{&s.Quota.MaxConcurrent, 0}, only: []string{"serve"}},
		{name: "audit-reads", usage: "audit the reading calls too, and resources/read", value: boolValue{&s.AuditReads}, only: []string{"serve"}},
		{name: "otlp-endpoint", arg: "URL", usage: "export traces (a span per tool call and per storage request, continuing the caller's traceparent) and the metrics over OTLP/HTTP to the receiver at URL, such as http://127.0.0.1:4318 (/v1/traces and /v1/metrics are appended; default: none)", value: stringValue{&s.OTLPEndpoint}, only: []string{"serve"}},
		{name: "otlp-paths", usage: "with --otlp-endpoint, name the paths of tool calls and storage operations on their spans (they may be sensitive)", value: boolValue{&s.OTLPPaths}, only: []string{"serve"}},
	}
}

// rootValue is --root; it records that the root was given.
type rootValue struct {
	p     *string
	given *bool
}

func (v rootValue) String() string {
	if v.p == nil {
		return "."
	}
	return *v.p
}

func (v rootValue) Set(s string) error {
	if s == "" {
		return errors.New("must not be empty")
	}
	*v.p, *v.given = s, true
	return nil
}

// Flag describes one flag of a command, for help and shell completion.
type Flag struct {
	// Name is the flag's name without dashes ("max-list").
	Name string
	// Arg is the placeholder of its value ("N"), or "" for a boolean.
	Arg string
	// Usage says what it does.
	Usage string
}

// Flags returns the flags cmd takes, in the order the usage shows them.
func Flags(cmd string) []Flag {
	var out []Flag
	for _, d := range definitions(&Settings{}, func() *bool { return new(bool) }) {
		if d.takenBy(cmd) {
			out = append(out, Flag{Name: d.name, Arg: d.arg, Usage: d.usage})
		}
	}
	return out
}

// Usage writes the usage of cmd's flags to w.
func Usage(cmd string, w io.Writer) {
	for _, f := range Flags(cmd) {
		left := "--" + f.Name
		if f.Arg != "" {
			left += " " + f.Arg
		}
		fmt.Fprintf(w, "  %-26s %s\n", left, f.Usage)
	}
}

// CheckOTLPEndpoint checks the base URL of an OTLP/HTTP receiver: http
// or https, a host, no query or fragment.
func CheckOTLPEndpoint(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%q: want the base URL of an OTLP/HTTP receiver, such as http://127.0.0.1:4318 or https://collector.example.com/otlp", endpoint)
	}
	return nil
}
