package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/checkpoint"
	"github.com/fencefs/fencefs/checkpoint/checkpointmcp"
	"github.com/fencefs/fencefs/mountspec"
	"github.com/fencefs/fencefs/quota"
	"github.com/fencefs/fencefs/tenant"
	"github.com/fencefs/fencefs/tools"
)

// Checkpoints journal the changes of every namespace the server serves
// (package checkpoint): one journal per namespace, so one per tenant with
// TenantMounts, opened with the namespace, kept with it in the tenant
// cache and flushed and closed when it is evicted. The journal is bound
// innermost in each call's chain, so a change the server's own links
// refuse is not journaled, and a change whose pre-images cannot be
// stored is not made.
type Checkpoints struct {
	// Store is the mount spec of the store the journal is kept in. With
	// TenantMounts it must name the tenant ({tenant}), so that each
	// tenant's journal is its own; the server proves, for every tenant id,
	// that it lies outside every tenant's mounts (its own included) and
	// every shared mount, and that no tenant's store is another's. When
	// a tenant mount names the session ({session}), each session has a
	// namespace of its own and the store must name the session too: one
	// journal per session, proven outside every session's mounts (its
	// own included) and every other session's store; it is kept after
	// the session ends, and removed with the session's other storage
	// (Config.SessionRetention). For the one namespace it must name
	// neither, and is proven outside the namespace's root or mounts. A
	// local store's directory is made (mode 0700) when missing.
	Store tenant.Template
	// Options are each journal's (retention: KeepCount, KeepAge,
	// KeepBytes, applied when a journal opens and at each new turn). Admit
	// is the server's own: the store's growth counts against the tenant's
	// stored-bytes and files quota, so with a quota set a retention, or
	// the store fills it.
	Options checkpoint.Options
	// List offers the model list_checkpoints; Restore offers
	// restore_checkpoint too (not on a read-only server). Both pass through the server's links as the
	// file tools do (scopes, where their names are granted like any tool,
	// quotas, audit); a restore writes an audit line naming the paths it
	// changed and tells the namespace's event listeners of each.
	List, Restore bool
	// OnRestore, when set, is told of every restore made through
	// restore_checkpoint, made or refused.
	OnRestore func(ctx context.Context, to uint64, res *checkpoint.Result, err error)
}

// Turns: a host marks the turn a tool call belongs to with the _meta key
// MetaTurn of the call, or the HTTP header TurnHeader of its request (the
// _meta key wins). The changes the call makes are recorded under that
// label, so a host (or fencefs checkpoints list --label) finds the
// checkpoint a turn started at; the first call of a new turn saves the
// after-states of the last one and applies the journal's retention.
const (
	MetaTurn   = "fencefs/turn"
	TurnHeader = "Fencefs-Turn"
	// MaxTurnBytes bounds a turn's label.
	MaxTurnBytes = 200
)

// nsJournal is a namespace's journal and what the server keeps of it.
type nsJournal struct {
	j *checkpoint.Journal
	// tools are the checkpoint tools the namespace offers (its
	// tenant's policy may narrow them).
	tools []string
	// rooted: paths are shown rooted, as the namespace's tools show them.
	rooted bool

	mu   sync.Mutex
	turn string // the last turn marked
}

// Journal returns the namespace's checkpoint journal, nil when the server
// journals nothing.
func (n *Namespace) Journal() *checkpoint.Journal {
	if n.journal == nil {
		return nil
	}
	return n.journal.j
}

// checkCheckpoints checks the checkpoint store of the configuration: a
// template naming the tenant with TenantMounts and none without, proven
// to lie outside every namespace the server serves.
func (s *Server) checkCheckpoints() error {
	c := s.cfg.Checkpoints
	if c == nil {
		return nil
	}
	tenants := len(s.cfg.TenantMounts) > 0
	switch {
	case c.Store.String() == "":
		return errors.New("checkpoints: no store")
	case tenants && c.Store.Shared():
		return fmt.Errorf("checkpoints: the store %s must name the tenant (%s) with tenant mounts, so that each tenant's journal is its own", c.Store, tenant.Placeholder)
	case !tenants && !c.Store.Shared():
		return fmt.Errorf("checkpoints: the store %s names a tenant (%s), but the server serves one namespace", c.Store, tenant.Placeholder)
	case perSession(s.cfg.TenantMounts) && !c.Store.PerSession():
		return fmt.Errorf("checkpoints: the store %s must name the session (%s) as the tenant mounts do: each session has a namespace of its own, and a journal follows one namespace (for instance local:/var/ckpt/%s/%s)",
			c.Store, tenant.SessionPlaceholder, tenant.Placeholder, tenant.SessionPlaceholder)
	case tenants && !perSession(s.cfg.TenantMounts) && c.Store.PerSession():
		return fmt.Errorf("checkpoints: the store %s names the session (%s), but no tenant mount does: the journal is the tenant's", c.Store, tenant.SessionPlaceholder)
	}
	stores, kind, err := s.templateLocations("checkpoints", c.Store, !tenants)
	if err != nil {
		return fmt.Errorf("checkpoints: the store %s: %w", c.Store, err)
	}
	if kind != "" {
		return fmt.Errorf("checkpoints: a store of kind %s cannot be proven outside the namespaces (use local:, s3://, sftp:// or another URL-like kind)", kind)
	}
	if len(stores) != 1 {
		return fmt.Errorf("checkpoints: the store %s is made of layers; name one place (local:, s3://, sftp:// or another URL-like kind)", c.Store)
	}
	store := stores[0]
	var locs []tenant.Location
	if tenants {
		for _, tm := range s.cfg.TenantMounts {
			ls, kind, err := s.templateLocations(tm.Name, tm.Template, false)
			if err != nil {
				return fmt.Errorf("mount %q: %w", tm.Name, err)
			}
			if kind != "" {
				return fmt.Errorf("checkpoints: the store %s cannot be proven outside mount %q: a mount of kind %s", c.Store, tm.Name, kind)
			}
			locs = append(locs, ls...)
		}
	} else if len(s.cfg.Namespace.Mounts) == 0 {
		root, err := filepath.Abs(s.cfg.Namespace.Root)
		if err != nil {
			return fmt.Errorf("--root: %w", err)
		}
		locs = append(locs, tenant.Location{Name: "root", Scheme: string(mountspec.KindLocal), Path: filepath.ToSlash(root)})
	} else {
		for _, m := range s.cfg.Namespace.Mounts {
			ls, err := locations(s.cfg.Schemes, m.Name, m.Spec, 0)
			if err != nil {
				return fmt.Errorf("mount %q: %w", m.Name, err)
			}
			if len(ls) == 0 {
				return fmt.Errorf("checkpoints: the store %s cannot be proven outside mount %q: a mount of kind %s", c.Store, m.Name, m.Spec.Kind)
			}
			locs = append(locs, absLocal(ls)...)
		}
	}
	// Another tenant's storage, or a shared mount.
	if err := tenant.Disjoint(append(slices.Clone(locs), store)); err != nil {
		return fmt.Errorf("checkpoints: %w", err)
	}
	// The tenant's (or the session's) own storage.
	for _, l := range locs {
		if l.Scheme != store.Scheme || l.Authority != store.Authority {
			continue
		}
		if id, sid, ok := sameOwnerOverlap(l.Path, store.Path); ok {
			who := ""
			switch {
			case sid != "":
				who = fmt.Sprintf(" (for session %q of tenant %q)", sid, id)
			case tenants:
				who = fmt.Sprintf(" (for tenant %q)", id)
			}
			return fmt.Errorf("checkpoints: the store %s lies inside or around mount %s (%s)%s: the tools must not reach the store", c.Store, l.Name, l, who)
		}
	}
	return nil
}

// templateLocations returns where the template t of mount name puts its
// files (an overlay's in each of its layers), with the tenant's segments
// as tenant.Placeholder; abs makes local directories absolute (the one
// namespace's, resolved as they are opened). A kind whose location cannot
// be compared is returned as kind, with no location.
func (s *Server) templateLocations(name string, t tenant.Template, abs bool) (locs []tenant.Location, kind mountspec.Kind, err error) {
	spec, err := t.ExpandSession(probeID, probeSession)
	if err != nil {
		return nil, "", err
	}
	ms, err := s.cfg.Schemes.Parse(spec)
	if err != nil {
		return nil, "", err
	}
	locs, err = locations(s.cfg.Schemes, name, ms, 0)
	if err != nil {
		return nil, "", err
	}
	if len(locs) == 0 {
		return nil, ms.Kind, nil
	}
	if abs {
		locs = absLocal(locs)
	}
	return locs, "", nil
}

// absLocal returns locs with their local directories made absolute.
func absLocal(locs []tenant.Location) []tenant.Location {
	for i, l := range locs {
		if l.Scheme == string(mountspec.KindLocal) {
			if d, err := filepath.Abs(filepath.FromSlash(l.Path)); err == nil {
				locs[i].Path = filepath.ToSlash(d)
			}
		}
	}
	return locs
}

// sameOwnerOverlap reports whether, for some tenant id x and session id
// y, a and b (paths with tenant.Placeholder and tenant.SessionPlaceholder
// segments) expanded both for x and y lie one inside the other, and
// returns such x and y (y "" when neither names the session).
func sameOwnerOverlap(a, b string) (tenant.ID, tenant.SessionID, bool) {
	split := func(p string) []string {
		p = strings.Trim(path.Clean("/"+p), "/")
		if p == "" {
			return nil
		}
		return strings.Split(p, "/")
	}
	sa, sb := split(a), split(b)
	// Two variables, the tenant (0) and the session (1), shared by both
	// sides; each free, bound to a literal, or equal to the other.
	const vT, vS = 0, 1
	var lit [2]string
	joined := false
	varOf := func(seg string) int {
		switch seg {
		case tenant.Placeholder:
			return vT
		case tenant.SessionPlaceholder:
			return vS
		}
		return -1
	}
	hasS := false
	bind := func(v int, l string) bool {
		if _, err := tenant.ParseID(l); err != nil {
			return false
		}
		vs := []int{v}
		if joined {
			vs = []int{vT, vS}
		}
		for _, w := range vs {
			if lit[w] != "" && lit[w] != l {
				return false
			}
		}
		for _, w := range vs {
			lit[w] = l
		}
		return true
	}
	for _, seg := range append(slices.Clone(sa), sb...) {
		hasS = hasS || seg == tenant.SessionPlaceholder
	}
	for i := range min(len(sa), len(sb)) {
		va, vb := varOf(sa[i]), varOf(sb[i])
		switch {
		case va < 0 && vb < 0:
			if sa[i] != sb[i] {
				return "", "", false
			}
		case va >= 0 && vb >= 0:
			if va != vb {
				if lit[vT] != "" && lit[vS] != "" && lit[vT] != lit[vS] {
					return "", "", false
				}
				joined = true
				l := cmp.Or(lit[vT], lit[vS])
				lit[vT], lit[vS] = l, l
			}
		case va >= 0:
			if !bind(va, sb[i]) {
				return "", "", false
			}
		default:
			if !bind(vb, sa[i]) {
				return "", "", false
			}
		}
	}
	x := tenant.ID(cmp.Or(lit[vT], "t1"))
	if !hasS {
		return x, "", true
	}
	y := tenant.SessionID(cmp.Or(lit[vS], "s1"))
	if joined {
		y = tenant.SessionID(x)
	}
	return x, y, true
}

// openJournal opens the journal of ns, the namespace of tenant id ("" for
// the one namespace) or of its session sid, in its store, and makes ns
// flush it and close the store when it closes.
func (s *Server) openJournal(ctx context.Context, ns *Namespace, id tenant.ID, sid tenant.SessionID) error {
	c := s.cfg.Checkpoints
	if c == nil {
		return nil
	}
	spec := c.Store.String()
	if id != "" {
		var err error
		if spec, err = c.Store.ExpandSession(id, sid); err != nil {
			return err
		}
	}
	ms, err := s.cfg.Schemes.Parse(spec)
	if err != nil {
		return fmt.Errorf("checkpoints: %w", err)
	}
	if ms.Kind == mountspec.KindLocal {
		// A new tenant's store: the directory is made, for the
		// server's user only.
		if err := os.MkdirAll(ms.Dir, 0o700); err != nil {
			return fmt.Errorf("checkpoints: %w", err)
		}
	}
	timeout := cmp.Or(ms.Timeout, s.cfg.Namespace.StorageTimeout)
	store, closer, err := s.opener.Open(ctx, "checkpoints", ms, timeout)
	if err != nil {
		return fmt.Errorf("checkpoints: %w", err)
	}
	opts := c.Options
	opts.Admit = func(ctx context.Context, n int64) error { return admitStore(ctx, n, ns.logger) }
	j, err := checkpoint.Open(ctx, ns.b, store, opts)
	if err != nil {
		closer.Close()
		return err
	}
	if opts.KeepCount > 0 || opts.KeepAge > 0 || opts.KeepBytes > 0 {
		// The retention is applied as a journal opens (a tenant's at
		// its first request after an eviction) and at each new turn.
		if _, err := j.Prune(ctx); err != nil {
			ns.logger.ErrorContext(ctx, "applying the checkpoints' retention", "error", err)
		}
	}
	nj := &nsJournal{j: j, rooted: len(ns.mounts) > 0}
	if c.List || c.Restore {
		nj.tools = append(nj.tools, tenant.ToolListCheckpoints)
	}
	if c.Restore && !s.cfg.Namespace.Tools.ReadOnly {
		// A read-only server changes nothing, restores included.
		nj.tools = append(nj.tools, tenant.ToolRestoreCheckpoint)
	}
	if p := s.cfg.TenantPolicies.For(id); id != "" && p.Tools != nil {
		nj.tools = slices.DeleteFunc(nj.tools, func(n string) bool { return !slices.Contains(p.Tools, n) })
	}
	ns.journal = nj
	// The after-states of the last calls are saved before the
	// namespace's storage closes, then the store closes.
	flush := closerFunc(func() error {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cmp.Or(timeout, time.Minute))
		defer cancel()
		if err := j.Flush(fctx); err != nil {
			ns.logger.ErrorContext(fctx, "saving the last changes' checkpoints", "error", err)
			return err
		}
		return nil
	})
	ns.closers = append(append([]io.Closer{flush}, ns.closers...), closer)
	return nil
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// admitStore is the journals' checkpoint.Options.Admit: under a call the
// Quota link admitted, the bytes the journal adds to its store (one
// object each time) count against the tenant's stored bytes and files as
// the tools' own writes do. They are committed at once: the store keeps
// them whether the change is then made or not. The checkpoint of a change
// that shrinks the namespace (a delete: its pre-image moves from the
// namespace to the store) is never refused, so that a tenant over its
// quota can still delete, as without checkpoints; it is counted at the
// next scan.
func admitStore(ctx context.Context, n int64, logger *slog.Logger) error {
	qc, _ := ctx.Value(quotaCallKey{}).(*quotaCall)
	if qc == nil || n < 0 {
		return nil
	}
	if qc.shrinks() {
		qc.q.Rescan(qc.key)
		return nil
	}
	r, err := qc.q.Reserve(ctx, qc.key, quota.Usage{Bytes: n, Files: 1})
	if err != nil {
		if errors.Is(err, quota.ErrLimit) {
			err = fmt.Errorf("the change was not made: its checkpoint does not fit in the quota (%w)", err)
		} else {
			logger.ErrorContext(ctx, "counting a tenant's usage", "tenant", qc.key, "error", err)
			err = errors.New("quota: the stored usage could not be counted; retry the call later")
		}
		// The call is refused as by the quota's own check.
		qc.refused = err
		return err
	}
	r.Commit()
	return nil
}

// shrinks reports whether the changes the call announced so far shrink
// what the tenant stores and grow nothing: files removed, or a
// directory's delete (whose size is not announced).
func (qc *quotaCall) shrinks() bool {
	if qc.rescan {
		return true
	}
	var d quota.Usage
	for _, h := range qc.held {
		if _, cancelled := h.req.Cancelled(); !cancelled {
			d = d.Add(h.delta)
		}
	}
	return len(qc.held) > 0 && d.Bytes <= 0 && d.Files <= 0
}

// journalUsage is what the namespace's checkpoint store holds, as the
// quota counts it: its bytes, one file per object.
func (n *Namespace) journalUsage() quota.Usage {
	if n.journal == nil {
		return quota.Usage{}
	}
	u := n.journal.j.Usage()
	return quota.Usage{Bytes: u.Bytes, Files: int64(u.Blobs + u.RecordCount)}
}

// checkpointTools returns the checkpoint tools the namespace offers.
func (n *Namespace) checkpointTools() []string {
	if n.journal == nil {
		return nil
	}
	return n.journal.tools
}

// fileTools returns list without the checkpoint tools: the tools of a
// tools.Set.
func fileTools(list []string) []string {
	return slices.DeleteFunc(slices.Clone(list), isCheckpointTool)
}

func isCheckpointTool(name string) bool {
	return name == tenant.ToolListCheckpoints || name == tenant.ToolRestoreCheckpoint
}

// journalLink returns the Link that journals the changing calls of the
// namespace of v, to be bound innermost; nil without a journal.
func (v *Servers) journalLink() Link {
	nj := v.ns.journal
	if nj == nil {
		return nil
	}
	logger := v.ns.logger
	return LinkFunc(func(t *tools.Tool, next mcp.ToolHandler) mcp.ToolHandler {
		if t.Annotations.ReadOnly || isCheckpointTool(t.Name) {
			return next
		}
		return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			turn, err := turnOf(req)
			if err != nil {
				return refusal(tools.KindInvalid, err.Error(), nil), nil
			}
			if turn != "" {
				nj.markTurn(ctx, turn, logger)
				ctx = checkpoint.WithLabel(ctx, turn)
			}
			return next(nj.j.Bind(ctx), req)
		}
	})
}

// markTurn starts turn in the journal when it is not the last turn
// marked: the after-states so far are saved, the retention applied.
func (nj *nsJournal) markTurn(ctx context.Context, turn string, logger interface {
	ErrorContext(context.Context, string, ...any)
}) {
	nj.mu.Lock()
	same := nj.turn == turn
	nj.turn = turn
	nj.mu.Unlock()
	if same {
		return
	}
	// The records a mark writes are counted at the next scan: a quota's
	// refusal of them must not refuse the call.
	ctx = context.WithValue(ctx, quotaCallKey{}, (*quotaCall)(nil))
	if err := nj.j.Mark(ctx, turn); err != nil {
		// The call's own record says whether the store answers.
		logger.ErrorContext(ctx, "marking a turn in the checkpoint journal", "turn", turn, "error", err)
	}
}

// turnOf returns the turn a call says it belongs to: its _meta MetaTurn,
// or its HTTP request's TurnHeader; "" when neither is set.
func turnOf(req *mcp.CallToolRequest) (string, error) {
	var turn string
	where := "_meta " + MetaTurn
	if v, ok := req.Params.Meta[MetaTurn]; ok {
		s, isString := v.(string)
		if !isString {
			return "", fmt.Errorf("%s: a turn is a string", where)
		}
		turn = s
	} else if req.Extra != nil && req.Extra.Header != nil {
		turn, where = req.Extra.Header.Get(TurnHeader), "header "+TurnHeader
	}
	if len(turn) > MaxTurnBytes || strings.ContainsFunc(turn, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return "", fmt.Errorf("%s: a turn is at most %d bytes of printable text", where, MaxTurnBytes)
	}
	return turn, nil
}

// addCheckpointTools offers on srv the checkpoint tools of list the
// namespace of v has, each wrapped in the server's chain.
func (v *Servers) addCheckpointTools(srv *mcp.Server, list []string, guard bool) {
	nj := v.ns.journal
	if nj == nil {
		return
	}
	var offered []string
	for _, n := range list {
		if slices.Contains(nj.tools, n) {
			offered = append(offered, n)
		}
	}
	if len(offered) == 0 {
		return
	}
	s := v.s
	chain := s.chain(v, guard)
	checkpointmcp.Add(srv, nj.j, checkpointmcp.Options{
		Restore: slices.Contains(offered, tenant.ToolRestoreCheckpoint),
		Rooted:  nj.rooted,
		Tools:   offered,
		Wrap: func(t *tools.Tool, next mcp.ToolHandler) mcp.ToolHandler {
			return chain.Wrap(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return next(context.WithValue(ctx, restoreCallKey{}, req), req)
			})
		},
		BeforeRestore: v.beforeRestore,
		OnRestore: func(ctx context.Context, to uint64, res *checkpoint.Result, err error) {
			v.restored(ctx, to, res, err)
			if s.cfg.Checkpoints.OnRestore != nil {
				s.cfg.Checkpoints.OnRestore(ctx, to, res, err)
			}
		},
	})
}

// restoreCallKey keys the request of a restore_checkpoint call in its
// context, for its write-ahead audit line.
type restoreCallKey struct{}

// beforeRestore appends, durably, the pending audit line of a restore
// (as Audit does for the tools' changes) before it changes any path; a
// restore whose line cannot be appended is refused.
func (v *Servers) beforeRestore(ctx context.Context, items []checkpoint.Item) error {
	a := v.s.cfg.Audit
	if a.Log == nil {
		return nil
	}
	req, _ := ctx.Value(restoreCallKey{}).(*mcp.CallToolRequest)
	if req == nil {
		req = &mcp.CallToolRequest{}
	}
	cr := &tools.ChangeRequest{Operation: "restore"}
	for _, it := range items {
		p := it.Path
		if v.ns.journal.rooted {
			p = backend.StorageToVirtual(p)
		}
		if cr.Path == "" {
			cr.Path = p
		} else {
			cr.Sizes = append(cr.Sizes, tools.SizeChange{Path: p})
		}
	}
	if err := a.writeAhead(tenant.ToolRestoreCheckpoint, req)(ctx, cr); err != nil {
		return err
	}
	if reason, cancelled := cr.Cancelled(); cancelled {
		return errors.New(reason)
	}
	return nil
}

// restored tells of a restore made through restore_checkpoint: an event
// per path it changed to the namespace's listeners (the call's audit line
// names them) and to its sessions subscribed to the path, a rescan of the
// tenant's usage (a restore's writes are not reserved one by one), and a
// log line.
func (v *Servers) restored(ctx context.Context, to uint64, res *checkpoint.Result, err error) {
	var seq uint64
	var n int
	if res != nil {
		seq, n = res.Seq, len(res.Restored)
		show := func(p string) string {
			if v.ns.journal.rooted {
				return backend.StorageToVirtual(p)
			}
			return p
		}
		for _, it := range res.Items {
			ev := restoreEvent(show(it.Path), it.Target)
			if ev == nil {
				continue
			}
			if v.ns.opts.OnEvent != nil {
				v.ns.opts.OnEvent(ctx, ev)
			}
			v.changes.Changed(ctx, ev)
		}
		if qc, _ := ctx.Value(quotaCallKey{}).(*quotaCall); qc != nil && seq != 0 {
			qc.q.Rescan(qc.key)
		}
	}
	v.ns.logger.InfoContext(ctx, "checkpoint restore", "to", to, "restore", seq, "paths", n, "error", err)
}

// restoreEvent is the event of a path a restore brought to st.
func restoreEvent(p string, st checkpoint.State) tools.Event {
	switch st.Kind {
	case checkpoint.File:
		return tools.FileWritten{Path: p, ContentHash: st.Hash}
	case checkpoint.Missing:
		return tools.FileDeleted{Path: p}
	case checkpoint.Dir:
		return tools.DirectoryCreated{Path: p}
	}
	return nil
}
