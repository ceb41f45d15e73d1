package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"mime"
	"net/url"
	"path"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
	"weak"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/skills"
	"github.com/fencefs/fencefs/tools"
)

// SkillsExtension is the identifier of the skills extension (SEP-2640)
// a server with a SkillSource declares.
const SkillsExtension = "io.modelcontextprotocol/skills"

// DefaultSkillsInterval is how often Run discovers the skills again.
const DefaultSkillsInterval = 30 * time.Second

// maxSkillFiles bounds the files one skill lists, so a skill directory
// holding a whole tree cannot make every listing walk it.
const maxSkillFiles = 500

// SkillSource discovers skills on storage and serves them on every server
// given it in Options.Skills: as prompts (getting one activates the
// skill) and, per SEP-2640, as skill:// resources with the skills/list
// and skills/get methods, each file with its SHA-256 digest. Refresh (or
// Run, on an interval) discovers them again; the servers then tell their
// clients that the prompt and resource lists changed.
type SkillSource struct {
	loader *skills.Loader
	// set reads the skills' files, under its policy.
	set    *tools.Set
	logger *slog.Logger

	mu sync.Mutex
	// entries are sorted by URI, the order skills/list pages them in.
	entries []*skillEntry
	// interval is how often Run discovers the skills again, the time a
	// client may keep a listing (its ttlMs).
	interval time.Duration
	// servers are held weakly: a server per session goes away with its
	// session.
	servers []weak.Pointer[mcp.Server]
}

// skillEntry is one skill as SEP-2640 describes it.
type skillEntry struct {
	URI         string          `json:"uri"`
	Frontmatter map[string]any  `json:"frontmatter"`
	Resources   []skillResource `json:"resources"`

	skill skills.Skill
	// files maps each resource URI to the path ReadFile takes.
	files map[string]string
	// dirs holds the URI of the skill's root and of each directory below
	// it (no trailing slash), the directory resources of
	// resources/directory/read.
	dirs map[string]bool
}

// skillResource is a file of a skill: its URI, the SHA-256 digest of its
// bytes and their length (SEP-2640 requires all three).
type skillResource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// NewSkillSource returns a source of the skills loader finds, reading
// their files through set (so they are served only where its policy lets
// the model read them). It discovers them once before it returns.
func NewSkillSource(ctx context.Context, loader *skills.Loader, set *tools.Set, logger *slog.Logger) (*SkillSource, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &SkillSource{loader: loader, set: set, logger: logger, interval: DefaultSkillsInterval}
	return s, s.Refresh(ctx)
}

// Run discovers the skills again every interval (DefaultSkillsInterval
// when 0) until ctx ends.
func (s *SkillSource) Run(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = DefaultSkillsInterval
	}
	s.mu.Lock()
	s.interval = interval
	s.mu.Unlock()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if err := s.Refresh(ctx); err != nil && ctx.Err() == nil {
				s.logger.Warn("skills: discovery failed; the skills found before are served", "error", err)
			}
		}
	}
}

// Refresh discovers the skills now and, when any changed, updates every
// server's prompts and resources.
func (s *SkillSource) Refresh(ctx context.Context) error {
	cat, err := s.loader.Discover(ctx)
	if err != nil {
		return err
	}
	var entries []*skillEntry
	for _, sk := range cat.Skills {
		e, err := s.entry(ctx, sk)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.logger.Warn("skill left out: its files cannot be read", "skill", sk.Name, "error", err)
			continue
		}
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b *skillEntry) int { return strings.Compare(a.URI, b.URI) })
	s.mu.Lock()
	old := s.entries
	if reflect.DeepEqual(digests(old), digests(entries)) {
		s.mu.Unlock()
		return nil
	}
	s.entries = entries
	var live []*mcp.Server
	kept := s.servers[:0]
	for _, w := range s.servers {
		if srv := w.Value(); srv != nil {
			live = append(live, srv)
			kept = append(kept, w)
		}
	}
	s.servers = kept
	s.mu.Unlock()
	for _, srv := range live {
		s.install(srv, old, entries)
	}
	return nil
}

// digests is what identifies a catalog's content: a change of any file,
// directory or front matter changes it.
func digests(entries []*skillEntry) []any {
	var out []any
	for _, e := range entries {
		out = append(out, e.URI, e.Frontmatter, e.Resources, e.dirs)
	}
	return out
}

// entry reads the files of sk and digests them.
func (s *SkillSource) entry(ctx context.Context, sk skills.Skill) (*skillEntry, error) {
	dir := strings.TrimPrefix(sk.Path, "/")
	fm := map[string]any{"name": sk.Name, "description": sk.Description}
	for k, v := range sk.Fields {
		fm[k] = v
	}
	e := &skillEntry{URI: skillURI(sk.Name, "SKILL.md"), Frontmatter: fm, skill: sk, files: map[string]string{},
		dirs: map[string]bool{"skill://" + sk.Name: true}}
	var walk func(rel string) error
	walk = func(rel string) error {
		paths, _, err := s.set.CompletePath(ctx, strings.TrimPrefix(dir+"/"+rel, "/"), maxSkillFiles)
		if err != nil {
			return err
		}
		for _, p := range paths {
			if len(e.files) >= maxSkillFiles {
				return nil
			}
			sub := strings.TrimPrefix(p, dir+"/")
			if strings.HasSuffix(p, "/") {
				e.dirs[strings.TrimSuffix(skillURI(sk.Name, sub), "/")] = true
				if err := walk(sub); err != nil {
					return err
				}
				continue
			}
			data, err := s.set.ReadFile(ctx, p, DefaultMaxResourceBytes)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			uri := skillURI(sk.Name, sub)
			e.files[uri] = p
			e.Resources = append(e.Resources, skillResource{URI: uri, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: int64(len(data))})
		}
		return nil
	}
	if err := walk(""); err != nil {
		return nil, err
	}
	if _, ok := e.files[e.URI]; !ok {
		return nil, errors.New("SKILL.md cannot be read")
	}
	return e, nil
}

// skillURI is the skill:// URI of the file rel of the skill name: the
// skill path is the name alone, as names are unique in a catalog.
func skillURI(name, rel string) string {
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "%", "%25"), " ", "%20")
	}
	return "skill://" + name + "/" + strings.Join(parts, "/")
}

// attach serves the source's skills on srv.
// registered logs a custom method the SDK would not register, so that a
// host missing skills/list finds the reason in the server's log.
func (s *SkillSource) registered(method string, err error) {
	if err != nil {
		s.logger.Error("skills: method not served", "method", method, "error", err)
	}
}

func (s *SkillSource) attach(srv *mcp.Server) {
	s.mu.Lock()
	s.servers = append(s.servers, weak.Make(srv))
	entries := s.entries
	s.mu.Unlock()
	s.install(srv, nil, entries)
	s.registered("skills/list", mcp.AddReceivingCustomMethod(srv, "skills/list", func(_ context.Context, ss *mcp.ServerSession, p *skillsListParams) (*skillsListResult, error) {
		res, err := s.list(p.Cursor)
		if err == nil {
			res.ResultType = resultType(ss, p.Meta)
		}
		return res, err
	}))
	s.registered("skills/get", mcp.AddReceivingCustomMethod(srv, "skills/get", func(_ context.Context, ss *mcp.ServerSession, p *skillsGetParams) (*skillsGetResult, error) {
		if e := s.lookup(p.URI); e != nil && e.URI == p.URI {
			return &skillsGetResult{Skill: e, Cacheable: s.cacheable(), ResultType: resultType(ss, p.Meta)}, nil
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%q is not the SKILL.md of a skill this server serves", p.URI)}
	}))
	s.registered("resources/directory/read", mcp.AddReceivingCustomMethod(srv, "resources/directory/read", func(_ context.Context, ss *mcp.ServerSession, p *directoryReadParams) (*directoryReadResult, error) {
		res, err := s.readDir(p.URI, p.Cursor)
		if err == nil {
			res.ResultType = resultType(ss, p.Meta)
		}
		return res, err
	}))
	srv.AddResourceTemplate(&mcp.ResourceTemplate{Name: "skill-file", URITemplate: "skill://{name}/{+file}",
		Description: "A file of a skill, listed with its digest by skills/list and skills/get."}, s.read)
}

// skillsPageSize is how many skills one skills/list page holds.
const skillsPageSize = 100

// list answers skills/list: the page of entries after cursor, the URI of
// the last entry of the page before, so that a page stays right when
// skills come and go between requests. A client may keep the listing
// for the re-discovery interval; the scope is private because the
// library cannot tell whether every caller of the server sees the same
// skills.
func (s *SkillSource) list(cursor string) (*skillsListResult, error) {
	after, err := decodeCursor(cursor)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i, _ := slices.BinarySearchFunc(s.entries, after, func(e *skillEntry, uri string) int { return strings.Compare(e.URI, uri) })
	if i < len(s.entries) && s.entries[i].URI == after {
		i++
	}
	page := s.entries[i:min(i+skillsPageSize, len(s.entries))]
	res := &skillsListResult{Skills: slices.Clone(page)}
	if res.Skills == nil {
		res.Skills = []*skillEntry{}
	}
	if i+len(page) < len(s.entries) {
		res.NextCursor = encodeCursor(page[len(page)-1].URI)
	}
	res.Cacheable = s.cacheableLocked()
	return res, nil
}

// cacheable is how long and by whom a skills/list or skills/get answer
// may be kept: for the re-discovery interval, by the caller's client
// only (the library cannot tell whether every caller of the server sees
// the same skills).
func (s *SkillSource) cacheable() mcp.Cacheable {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cacheableLocked()
}

func (s *SkillSource) cacheableLocked() mcp.Cacheable {
	return mcp.Cacheable{TTLMs: int(s.interval.Milliseconds()), CacheScope: "private"}
}

// newProtocol is the first protocol version whose results carry
// resultType.
const newProtocol = "2026-07-28"

// resultType is the resultType of a complete result of a custom method
// (skills/list, skills/get, resources/directory/read) on the protocol of
// its request: "complete" from 2026-07-28 on, where every result carries
// it, and none before. The SDK sets it on the results of the methods it
// defines, not on custom ones.
func resultType(ss *mcp.ServerSession, meta mcp.Meta) string {
	if protocolVersion(ss, meta) >= newProtocol {
		return "complete"
	}
	return ""
}

// protocolVersion is the protocol of a request: the one its _meta names
// (2026-07-28 on), else the one its session negotiated.
func protocolVersion(ss *mcp.ServerSession, meta mcp.Meta) string {
	if v, ok := meta[mcp.MetaKeyProtocolVersion].(string); ok && v != "" {
		return v
	}
	if ss != nil {
		if p := ss.InitializeParams(); p != nil {
			return p.ProtocolVersion
		}
	}
	return ""
}

// encodeCursor returns the cursor of the page after the item uri.
func encodeCursor(uri string) string { return base64.RawURLEncoding.EncodeToString([]byte(uri)) }

// decodeCursor returns the URI a cursor of encodeCursor carries, "" for
// none.
func decodeCursor(cursor string) (string, error) {
	if cursor == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || !strings.HasPrefix(string(b), "skill://") {
		return "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid cursor: pass the nextCursor of the page before"}
	}
	return string(b), nil
}

// dirPageSize is how many children one resources/directory/read page
// holds.
const dirPageSize = 1000

// readDir answers resources/directory/read of a skill's directory: its
// direct children, files with their resource metadata and directories as
// inode/directory, in URI order, paged after cursor.
func (s *SkillSource) readDir(uri, cursor string) (*directoryReadResult, error) {
	after, err := decodeCursor(cursor)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	var e *skillEntry
	for _, c := range s.entries {
		if c.dirs[uri] {
			e = c
			break
		}
	}
	s.mu.Unlock()
	if e == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%q is not a directory of a skill this server serves", uri)}
	}
	children := map[string]*mcp.Resource{}
	child := func(u string, dir bool) {
		rest, ok := strings.CutPrefix(u, uri+"/")
		if !ok || rest == "" {
			return
		}
		seg, _, deeper := strings.Cut(rest, "/")
		name, err := url.PathUnescape(seg)
		if err != nil {
			name = seg
		}
		r := &mcp.Resource{URI: uri + "/" + seg, Name: name}
		switch {
		case deeper || dir:
			r.MIMEType = "inode/directory"
		case r.URI == e.URI:
			r.MIMEType = "text/markdown"
		default:
			r.MIMEType = mime.TypeByExtension(path.Ext(name))
		}
		children[r.URI] = r
	}
	for u := range e.files {
		child(u, false)
	}
	for u := range e.dirs {
		child(u, true)
	}
	res := &directoryReadResult{Resources: []*mcp.Resource{}}
	for _, u := range slices.Sorted(maps.Keys(children)) {
		if u <= after {
			continue
		}
		if len(res.Resources) == dirPageSize {
			res.NextCursor = encodeCursor(res.Resources[len(res.Resources)-1].URI)
			break
		}
		res.Resources = append(res.Resources, children[u])
	}
	return res, nil
}

// lookup returns the entry holding uri.
func (s *SkillSource) lookup(uri string) *skillEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.entries {
		if _, ok := e.files[uri]; ok {
			return e
		}
	}
	return nil
}

// install replaces the prompts and SKILL.md resources of old by those of
// entries on srv; the SDK sends the list-changed notifications.
func (s *SkillSource) install(srv *mcp.Server, old, entries []*skillEntry) {
	var names, uris []string
	for _, e := range old {
		names = append(names, e.skill.Name)
		uris = append(uris, e.URI)
	}
	srv.RemovePrompts(names...)
	srv.RemoveResources(uris...)
	for _, e := range entries {
		srv.AddResource(&mcp.Resource{URI: e.URI, Name: e.skill.Name, Description: e.skill.Description, MIMEType: "text/markdown"}, s.read)
		srv.AddPrompt(&mcp.Prompt{Name: e.skill.Name, Description: e.skill.Description}, s.prompt(e.skill.Name))
	}
}

// read serves resources/read of a skill's file, as it is now on storage.
func (s *SkillSource) read(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	e := s.lookup(uri)
	if e == nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	data, err := s.set.ReadFile(ctx, e.files[uri], DefaultMaxResourceBytes)
	if msg, ok := RetryMessage(err); ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
	}
	if err != nil {
		return nil, err
	}
	rc := contents(uri, e.files[uri], data)
	if strings.HasSuffix(uri, "/SKILL.md") {
		rc.MIMEType = "text/markdown"
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{rc}}, nil
}

// prompt activates the skill name afresh, so an edited SKILL.md is
// served as it is now; a skill that can no longer be activated is a
// JSON-RPC error for the host.
func (s *SkillSource) prompt(name string) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		a, err := s.loader.Activate(ctx, name)
		if err != nil {
			s.logger.Log(ctx, activationLevel(err), "skill activation failed", "skill", name, "error", err)
			return nil, err
		}
		s.logger.DebugContext(ctx, "skill activated", "skill", name, "read_path", a.ReadPath)
		return &mcp.GetPromptResult{
			Description: a.Skill.Description,
			Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: skills.PromptText(a)}}},
		}, nil
	}
}

// activationLevel is a warning for a skill that was removed or broken
// since discovery, an error for a failure of the storage.
func activationLevel(err error) slog.Level {
	switch {
	case errors.Is(err, context.Canceled):
		return slog.LevelInfo
	case errors.Is(err, skills.ErrNotFound):
		return slog.LevelWarn
	}
	return slog.LevelError
}

type skillsListParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type skillsListResult struct {
	mcp.ResultBase
	Skills     []*skillEntry `json:"skills"`
	NextCursor string        `json:"nextCursor,omitempty"`
	mcp.Cacheable
	ResultType string `json:"resultType,omitempty"`
}

type skillsGetParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

type skillsGetResult struct {
	mcp.ResultBase
	Skill *skillEntry `json:"skill"`
	mcp.Cacheable
	ResultType string `json:"resultType,omitempty"`
}

type directoryReadParams struct {
	mcp.ParamsBase
	URI    string `json:"uri"`
	Cursor string `json:"cursor,omitempty"`
}

type directoryReadResult struct {
	mcp.ResultBase
	Resources  []*mcp.Resource `json:"resources"`
	NextCursor string          `json:"nextCursor,omitempty"`
	ResultType string          `json:"resultType,omitempty"`
}
