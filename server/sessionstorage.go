package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/mountspec"
	"github.com/fencefs/fencefs/quota"
	"github.com/fencefs/fencefs/tenant"
)

// The storage of a session ({session} in a tenant mount's layer, or in
// the checkpoint store) outlives the session, so that its changes can be
// reviewed and landed (fencefs overlay changes|diff|commit|discard, and
// fencefs checkpoints on its journal); it is removed
// Config.SessionRetention after the session ended (DELETE, or idle for
// the session timeout). A removal goes through the backend of the
// template's location, opened at the directory (or prefix) where the
// template puts its tenants, and removes only the expansion of the
// template for that tenant and session. Only the sessions this process
// saw end are removed: another process sharing the locations (a replica
// with sticky routing, or the old process of a rolling restart) may hold
// any other live, and liveness is known only to the process holding it.
// With Config.SessionCollectLeftovers (this server alone uses the
// locations) the storage of sessions an earlier process left (a session
// id of the server's own shape, tenant.NewSessionID, under a tenant's
// directory) is scheduled at start-up too, and removed once both the
// retention and the session timeout passed since its last change: the
// newest modification time in its whole tree, in every place, read again
// just before the removal (the start when the storage keeps none); a
// tree too large to walk (maxAgeWalk entries) is left alone. Removals
// run in batches of at most maxCollectBatch sessions, each storage call
// bounded by the storage timeout. A live session's storage is never
// removed. Nothing is written into a session's storage to mark it: its
// upper layer is the agent's namespace.
//
// A storage quota with {session} counts, for a tenant, every session's
// storage in those locations, live or kept for review, and the tenant's
// other writable mounts: a tenant's limit is its own, however many
// sessions it opens.

// DefaultSessionRetention is how long an ended session's storage is kept
// when Config.SessionRetention is zero.
const DefaultSessionRetention = 24 * time.Hour

// KeepSessions as Config.SessionRetention never removes an ended
// session's storage: the operator does.
const KeepSessions time.Duration = -1

// RemoveSessionsAtOnce as Config.SessionRetention removes an ended
// session's storage as soon as the session ends: nothing is kept for
// review.
const RemoveSessionsAtOnce time.Duration = time.Nanosecond

// maxCollectBatch bounds the sessions one round of collection removes.
const maxCollectBatch = 64

// sessionPlace is where a template puts the storage of each session in
// one of its writable layers (or the checkpoint store): the storage at
// root, then the segments between (a tenant.Placeholder first), then the
// session's id.
type sessionPlace struct {
	name    string
	root    mountspec.Spec
	between []string
}

// dir returns the directory, relative to p's root, holding the sessions'
// storage of tenant id.
func (p sessionPlace) dir(id tenant.ID) string {
	segs := make([]string, len(p.between))
	for i, s := range p.between {
		if s == tenant.Placeholder {
			s = string(id)
		}
		segs[i] = s
	}
	return strings.Join(segs, "/")
}

// sessionPlaces returns where the per-session templates (tenant mounts
// and the checkpoint store) put sessions' storage; opaque names the
// per-session templates none of whose layers the server can place.
func (s *Server) sessionPlaces() (places []sessionPlace, opaque []string, err error) {
	add := func(name string, t tenant.Template) error {
		if !t.PerSession() {
			return nil
		}
		spec, err := t.ExpandSession(probeID, probeSession)
		if err != nil {
			return err
		}
		ms, err := s.cfg.Schemes.Parse(spec)
		if err != nil {
			return fmt.Errorf("mount %q: %w", name, err)
		}
		found := false
		err = eachLeaf(s.cfg.Schemes, name, ms, 0, func(name string, leaf mountspec.Spec) error {
			l, _ := location(name, leaf)
			p, ok, err := s.placeOf(name, leaf, l)
			if ok {
				places, found = append(places, p), true
			}
			return err
		})
		if err == nil && !found {
			opaque = append(opaque, name)
		}
		return err
	}
	for _, tm := range s.cfg.TenantMounts {
		if err := add(tm.Name, tm.Template); err != nil {
			return nil, nil, err
		}
	}
	if c := s.cfg.Checkpoints; c != nil {
		if err := add("checkpoints", c.Store); err != nil {
			return nil, nil, err
		}
	}
	return places, opaque, nil
}

// eachLeaf calls fn with each spec of ms that has a location: ms itself,
// or the layers of a Layered Scheme's, as locations finds them.
func eachLeaf(schemes mountspec.Schemes, name string, ms mountspec.Spec, depth int, fn func(string, mountspec.Spec) error) error {
	if _, ok := location(name, ms); ok {
		return fn(name, ms)
	}
	ly, ok := schemes[string(ms.Kind)].(mountspec.Layered)
	if !ok {
		return nil
	}
	if depth >= maxLayerDepth {
		return fmt.Errorf("layers nested more than %d deep", maxLayerDepth)
	}
	layers, err := ly.Layers(ms)
	if err != nil {
		return err
	}
	for i, l := range layers {
		if err := eachLeaf(schemes, fmt.Sprintf("%s (layer %d of %d)", name, i+1, len(layers)), l, depth+1, fn); err != nil {
			return err
		}
	}
	return nil
}

// placeOf returns the sessionPlace of the writable leaf spec ms at l,
// when its path names the session.
func (s *Server) placeOf(name string, ms mountspec.Spec, l tenant.Location) (sessionPlace, bool, error) {
	if ms.ReadOnly {
		return sessionPlace{}, false, nil
	}
	rooted := strings.HasPrefix(l.Path, "/")
	segs := strings.Split(strings.Trim(path.Clean("/"+l.Path), "/"), "/")
	ti, si := -1, -1
	for i, seg := range segs {
		if seg == tenant.Placeholder && ti < 0 {
			ti = i
		}
		if seg == tenant.SessionPlaceholder {
			si = i
			break
		}
	}
	if si < 0 || ti < 0 || ti > si {
		return sessionPlace{}, false, nil
	}
	rootPath := strings.Join(segs[:ti], "/")
	if rooted {
		rootPath = "/" + rootPath
	}
	root := ms
	switch ms.Kind {
	case mountspec.KindLocal:
		root.Dir = filepath.FromSlash(rootPath)
	case mountspec.KindS3:
		root.S3.Prefix = strings.Trim(rootPath, "/")
	case mountspec.KindSFTP:
		root.SFTP.Root = rootPath
	default:
		// A URL-like Scheme's spec: authority/path?query.
		rest, query, hasQuery := strings.Cut(ms.Opaque, "?")
		authority, _, _ := strings.Cut(rest, "/")
		spec := string(ms.Kind) + authority + "/" + strings.Trim(rootPath, "/")
		if hasQuery {
			spec += "?" + query
		}
		var err error
		if root, err = s.cfg.Schemes.Parse(spec); err != nil {
			return sessionPlace{}, false, fmt.Errorf("%s: the location of its sessions: %w", name, err)
		}
	}
	return sessionPlace{name: name, root: root, between: segs[ti:si]}, true, nil
}

// isIssuedSessionID reports whether name has the shape of the session
// ids this server draws (tenant.NewSessionID: 26 characters of base32):
// only those are taken for sessions this process did not see end.
func isIssuedSessionID(name string) bool {
	if len(name) != 26 {
		return false
	}
	for _, r := range name {
		if !(r >= 'A' && r <= 'Z' || r >= '2' && r <= '7') {
			return false
		}
	}
	return true
}

// openPlace opens the storage at p's root; a local directory that does
// not exist yet (no session made it) is fs.ErrNotExist.
func (s *Server) openPlace(ctx context.Context, p sessionPlace) (backend.Backend, io.Closer, error) {
	if p.root.Kind == mountspec.KindLocal {
		if _, err := os.Stat(p.root.Dir); err != nil {
			return nil, nil, err
		}
	}
	timeout := cmp.Or(p.root.Timeout, s.cfg.Namespace.StorageTimeout)
	return s.opener.Open(ctx, p.name, p.root, timeout)
}

// listSessions returns the sessions of tenant id whose storage lies at p
// (on b, opened at p's root).
func listSessions(ctx context.Context, b backend.Backend, p sessionPlace, id tenant.ID) ([]tenant.SessionID, error) {
	dir := p.dir(id)
	entries, err := backend.ListTypes(ctx, b, dir)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, backend.ErrNotDir) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []tenant.SessionID
	for _, e := range entries {
		if e.Type.IsDir() && isIssuedSessionID(e.Name) {
			out = append(out, tenant.SessionID(e.Name))
		}
	}
	return out, nil
}

// maxAgeWalk bounds the entries a session's last change is looked for
// in, across its places: the storage of a larger session is not dated,
// and so never removed as a leftover.
const maxAgeWalk = 100_000

// errTooLarge is the error of a session's storage of more than
// maxAgeWalk entries.
var errTooLarge = fmt.Errorf("more than %d entries: not dated, left alone", maxAgeWalk)

// lastChange returns the newest modification time in the tree of rel on
// b (rel's own, and every entry's below it, links not followed), zero
// when none has one; budget counts down the entries looked at.
func lastChange(ctx context.Context, b backend.Backend, rel string, budget *int) (time.Time, error) {
	fi, err := backend.Stat(ctx, b, rel)
	if err != nil {
		return time.Time{}, err
	}
	newest := fi.ModTime
	if !fi.IsDir() || fi.IsSymlink() {
		return newest, nil
	}
	dirs := []string{rel}
	for len(dirs) > 0 {
		dir := dirs[len(dirs)-1]
		dirs = dirs[:len(dirs)-1]
		entries, err := b.List(ctx, dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed meanwhile
		}
		if err != nil {
			return time.Time{}, err
		}
		if *budget -= len(entries); *budget < 0 {
			return time.Time{}, errTooLarge
		}
		for _, e := range entries {
			if e.ModTime.After(newest) {
				newest = e.ModTime
			}
			if e.Type.IsDir() && e.Type&fs.ModeSymlink == 0 {
				dirs = append(dirs, dir+"/"+e.Name)
			}
		}
	}
	return newest, nil
}

// sessionTenantUsage scans what tenant t stores when templates name
// {session}: every session's storage (live or kept for review) and the
// tenant's other writable, unshared mounts.
func (s *Server) sessionTenantUsage(ctx context.Context, t string) (quota.Usage, error) {
	id, err := tenant.ParseID(t)
	if err != nil {
		return quota.Usage{}, err
	}
	var u quota.Usage
	for _, p := range s.collector.places {
		b, closer, err := s.openPlace(ctx, p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // no session made it yet
		}
		if err != nil {
			return quota.Usage{}, fmt.Errorf("%s: %w", p.name, err)
		}
		sessions, err := listSessions(ctx, b, p, id)
		for _, sid := range sessions {
			if err != nil {
				break
			}
			var su quota.Usage
			sub, serr := fs.Sub(backend.FS(ctx, b), p.dir(id)+"/"+string(sid))
			if serr == nil {
				su, serr = quota.ScanFS(ctx, sub)
			}
			err = serr
			u = u.Add(su)
		}
		closer.Close()
		if err != nil {
			return quota.Usage{}, fmt.Errorf("%s: %w", p.name, err)
		}
	}
	for _, tm := range s.cfg.TenantMounts {
		if tm.Template.PerSession() || tm.Template.Shared() {
			continue
		}
		spec, err := tm.Template.Expand(id)
		if err != nil {
			return quota.Usage{}, err
		}
		ms, err := s.cfg.Schemes.Parse(spec)
		if err != nil || ms.ReadOnly {
			continue
		}
		b, closer, err := s.opener.Open(ctx, tm.Name, ms, cmp.Or(ms.Timeout, s.cfg.Namespace.StorageTimeout))
		if err != nil {
			return quota.Usage{}, fmt.Errorf("mount %q: %w", tm.Name, err)
		}
		mu, err := scanUsage(ctx, b)
		closer.Close()
		if err != nil {
			return quota.Usage{}, fmt.Errorf("mount %q: %w", tm.Name, err)
		}
		u = u.Add(mu)
	}
	return u, nil
}

// sessionCollector removes the storage of ended sessions once their
// retention has passed.
type sessionCollector struct {
	s         *Server
	retention time.Duration
	places    []sessionPlace
	now       func() time.Time
	// leftovers: the storage of sessions this process did not see end
	// is removed too (Config.SessionCollectLeftovers), leftoverWait
	// after its last change.
	leftovers    bool
	leftoverWait time.Duration

	mu   sync.Mutex
	live map[sessionKey]bool
	due  map[sessionKey]time.Time
	// leftover are the sessions of due this process did not see end:
	// their last change is read again before their removal.
	leftover map[sessionKey]bool
	wake     chan struct{}

	// discovered: the sessions this process did not see end were
	// looked for (with leftovers).
	discovered bool
	cancel     context.CancelFunc
	done       chan struct{}
}

func (s *Server) newCollector(places []sessionPlace) *sessionCollector {
	r := s.cfg.SessionRetention
	if r == 0 {
		r = DefaultSessionRetention
	}
	now := s.cfg.sessionClock
	if now == nil {
		now = time.Now
	}
	return &sessionCollector{s: s, retention: r, places: places, now: now,
		leftovers: s.cfg.SessionCollectLeftovers, leftoverWait: max(r, cmp.Or(s.cfg.HTTP.SessionTimeout, DefaultSessionTimeout)),
		live: map[sessionKey]bool{}, due: map[sessionKey]time.Time{}, leftover: map[sessionKey]bool{}, wake: make(chan struct{}, 1)}
}

// started marks the session of key live: its storage is not removed.
func (c *sessionCollector) started(key sessionKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.live[key] = true
	delete(c.due, key)
	delete(c.leftover, key)
}

// ended schedules the removal of the storage of the session of key,
// which ended now.
func (c *sessionCollector) ended(key sessionKey) {
	c.mu.Lock()
	delete(c.live, key)
	delete(c.leftover, key)
	if c.retention >= 0 && len(c.places) > 0 {
		c.due[key] = c.now().Add(c.retention)
	}
	c.mu.Unlock()
	c.poke()
}

// kept returns how many ended sessions' storage is awaiting removal.
func (c *sessionCollector) kept() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.due)
}

func (c *sessionCollector) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// start runs the collection in the background until stop; with a clock
// of a test's, the test runs it (sweep).
func (c *sessionCollector) start() {
	if c.retention < 0 || len(c.places) == 0 || c.s.cfg.sessionClock != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel, c.done = cancel, make(chan struct{})
	go c.run(ctx)
}

// stop ends the background collection and waits for it.
func (c *sessionCollector) stop() {
	if c.cancel != nil {
		c.cancel()
		<-c.done
	}
}

// sweep looks for the sessions this process did not see end (once, with
// leftovers), then removes
// every session's storage that is due, in batches; it returns how many
// it removed.
func (c *sessionCollector) sweep(ctx context.Context) (int, error) {
	var errs []error
	if !c.discovered {
		c.discovered = true
		if err := c.discover(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	total := 0
	for {
		n, err := c.collect(ctx)
		total += n
		if err != nil {
			errs = append(errs, err)
		}
		if _, due := c.next(); n == 0 || !due || err != nil {
			return total, errors.Join(errs...)
		}
	}
}

func (c *sessionCollector) run(ctx context.Context) {
	defer close(c.done)
	c.discovered = true
	if err := c.discover(ctx); err != nil && ctx.Err() == nil {
		c.s.logger.ErrorContext(ctx, "looking for the storage of sessions this process did not see end (--session-collect-leftovers); what could not be dated is left alone", "error", err)
	}
	for {
		if _, err := c.collect(ctx); err != nil && ctx.Err() == nil {
			c.s.logger.ErrorContext(ctx, "removing ended sessions' storage", "error", err)
		}
		wait, more := c.next()
		if more {
			wait = 0
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-c.wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// next returns how long until the next removal falls due (an hour when
// none is scheduled), and whether one is due now.
func (c *sessionCollector) next() (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now, wait := c.now(), time.Hour
	for _, at := range c.due {
		d := at.Sub(now)
		if d <= 0 {
			return 0, true
		}
		wait = min(wait, d)
	}
	return wait, false
}

// placeRoot is a place's storage opened at its root, or the error of
// opening it (fs.ErrNotExist for a local directory no session made yet).
type placeRoot struct {
	b      backend.Backend
	closer io.Closer
	err    error
}

// openRoots opens every place's storage at its root; closeAll closes
// them.
func (c *sessionCollector) openRoots(ctx context.Context) (roots []placeRoot, closeAll func()) {
	roots = make([]placeRoot, len(c.places))
	for i, p := range c.places {
		b, closer, err := c.s.openPlace(ctx, p)
		roots[i] = placeRoot{b, closer, err}
	}
	return roots, func() {
		for _, r := range roots {
			if r.err == nil {
				r.closer.Close()
			}
		}
	}
}

// discover schedules, with leftovers, the storage of the sessions this
// process did not see end: every tenant's directory of every place is
// listed once, and each such session is due leftoverWait after its last
// change. A session whose last change cannot be read (its tree too large,
// or the storage failing) is left alone.
func (c *sessionCollector) discover(ctx context.Context) error {
	if !c.leftovers || c.retention < 0 || len(c.places) == 0 {
		return nil
	}
	roots, closeAll := c.openRoots(ctx)
	defer closeAll()
	found := map[sessionKey]bool{}
	var errs []error
	for i, p := range c.places {
		r := roots[i]
		if r.err != nil {
			if !errors.Is(r.err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("%s: %w", p.name, r.err))
			}
			continue
		}
		entries, err := backend.ListTypes(ctx, r.b, ".")
		for _, e := range entries {
			id, idErr := tenant.ParseID(e.Name)
			if !e.Type.IsDir() || idErr != nil {
				continue
			}
			sessions, lerr := listSessions(ctx, r.b, p, id)
			if lerr != nil {
				err = lerr
				break
			}
			for _, sid := range sessions {
				found[sessionKey{tenant: id, session: sid}] = true
			}
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("%s: %w", p.name, err))
		}
	}
	n := 0
	for k := range found {
		if c.known(k) {
			continue
		}
		due, err := c.leftoverDue(ctx, roots, k)
		if err != nil {
			errs = append(errs, fmt.Errorf("tenant %s, session %s: %w", k.tenant, k.session, err))
			continue
		}
		c.mu.Lock()
		if _, scheduled := c.due[k]; !c.live[k] && !scheduled {
			c.due[k], c.leftover[k] = due, true
			n++
		}
		c.mu.Unlock()
	}
	if n > 0 {
		c.s.logger.InfoContext(ctx, "found the storage of sessions this process did not see end (--session-collect-leftovers); each is removed when the retention and the session timeout have passed since its last change", "sessions", n, "wait", c.leftoverWait)
	}
	return errors.Join(errs...)
}

// known reports whether the session of k is live here or its removal
// already scheduled.
func (c *sessionCollector) known(k sessionKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, scheduled := c.due[k]
	return c.live[k] || scheduled
}

// leftoverDue returns when the storage of the session of k, which this
// process did not see end, falls due: leftoverWait after the newest
// modification time in its trees in every place (now when none has one).
func (c *sessionCollector) leftoverDue(ctx context.Context, roots []placeRoot, k sessionKey) (time.Time, error) {
	budget := maxAgeWalk
	var newest time.Time
	for i, p := range c.places {
		r := roots[i]
		if r.err != nil {
			if errors.Is(r.err, fs.ErrNotExist) {
				continue
			}
			return time.Time{}, fmt.Errorf("%s: %w", p.name, r.err)
		}
		at, err := lastChange(ctx, r.b, p.dir(k.tenant)+"/"+string(k.session), &budget)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return time.Time{}, fmt.Errorf("%s: %w", p.name, err)
		}
		if at.After(newest) {
			newest = at
		}
	}
	now := c.now()
	if newest.IsZero() || newest.After(now) {
		newest = now
	}
	return newest.Add(c.leftoverWait), nil
}

// collect removes the storage of at most maxCollectBatch sessions whose
// retention has passed and that are not live, and returns how many it
// removed. A leftover's last change is read again first: a later one
// puts it off. A session whose removal failed is tried again a
// retention's tenth later (at least a minute), unless its storage is not
// a directory of its own (a link), which is left alone.
func (c *sessionCollector) collect(ctx context.Context) (int, error) {
	c.mu.Lock()
	now := c.now()
	var batch []sessionKey
	for k, at := range c.due {
		if len(batch) == maxCollectBatch {
			break
		}
		if c.live[k] {
			delete(c.due, k)
			continue
		}
		if !at.After(now) {
			batch = append(batch, k)
			delete(c.due, k)
		}
	}
	c.mu.Unlock()
	if len(batch) == 0 {
		return 0, nil
	}
	roots, closeAll := c.openRoots(ctx)
	defer closeAll()
	removed := 0
	var errs []error
	for _, k := range batch {
		c.mu.Lock()
		leftover := c.leftover[k]
		c.mu.Unlock()
		if leftover {
			// Its last change again: one since it was found (the
			// operator was wrong, and another process holds it live)
			// puts it off.
			due, err := c.leftoverDue(ctx, roots, k)
			c.mu.Lock()
			switch {
			case err != nil:
				delete(c.leftover, k) // left alone
			case due.After(now) && !c.live[k]:
				c.due[k] = due
			}
			c.mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("tenant %s, session %s: %w", k.tenant, k.session, err))
				continue
			}
			if due.After(now) {
				continue
			}
		}
		var failed error
		for i, p := range c.places {
			r := roots[i]
			if r.err != nil {
				if !errors.Is(r.err, fs.ErrNotExist) {
					failed = errors.Join(failed, fmt.Errorf("%s: %w", p.name, r.err))
				}
				continue
			}
			rel := p.dir(k.tenant) + "/" + string(k.session)
			err := noLinkOnTheWay(ctx, r.b, rel)
			if err == nil {
				err = backend.RemoveAll(ctx, r.b, rel, backend.RemoveAllOptions{})
			}
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				failed = errors.Join(failed, fmt.Errorf("%s: %w", p.name, err))
			}
		}
		if failed != nil {
			errs = append(errs, fmt.Errorf("tenant %s, session %s: %w", k.tenant, k.session, failed))
			c.mu.Lock()
			if !c.live[k] && !errors.Is(failed, errNotSessionDir) {
				c.due[k] = c.now().Add(max(c.retention/10, time.Minute))
			} else {
				delete(c.leftover, k)
			}
			c.mu.Unlock()
			continue
		}
		c.mu.Lock()
		delete(c.leftover, k)
		c.mu.Unlock()
		removed++
		c.s.logger.InfoContext(ctx, "removed an ended session's storage", "tenant", string(k.tenant), "session", string(k.session))
		if c.s.quotas != nil && LimitsStorage(c.s.cfg.Quota, c.s.cfg.QuotaTenants) {
			c.s.quotas.Rescan(string(k.tenant))
		}
	}
	return removed, errors.Join(errs...)
}

// errNotSessionDir is the error of a session's storage that is not a
// directory of its own (a link): it is never removed, nor tried again.
var errNotSessionDir = errors.New("not a directory (a link is not followed); left alone")

// noLinkOnTheWay checks that every directory of rel on b, rel itself
// included, is a directory and not a link, so that removing rel removes
// the template's expansion and nothing a link leads to (a link named as a
// session is not one); a missing one is fs.ErrNotExist.
func noLinkOnTheWay(ctx context.Context, b backend.Backend, rel string) error {
	segs := strings.Split(rel, "/")
	for i := range segs {
		p := strings.Join(segs[:i+1], "/")
		fi, err := backend.Stat(ctx, b, p)
		if err != nil {
			return err
		}
		if !fi.IsDir() || fi.IsSymlink() {
			return fmt.Errorf("%w: %s", errNotSessionDir, p)
		}
	}
	return nil
}
