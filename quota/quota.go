// Package quota enforces per-tenant limits: bytes and files stored, calls
// per second and calls running at once. A call that would go over a limit
// is refused before it touches storage, with a *LimitError that names the
// limit and says when to retry.
//
// # How usage is counted
//
// Stored usage (bytes of regular files, and the number of entries:
// files, directories and every other entry, since each takes storage) is
// scanned from
// the tenant's storage by a UsageSource the first time a tenant's change
// is checked, and again once the scan is older than Options.UsageTTL.
// Between scans each change the server commits moves the cached figure by
// its own delta, and changes admitted but not committed yet are counted as
// pending, so concurrent writers on one replica cannot both take the last
// free byte. A scan replaces the cached figure, which takes in changes made
// by other replicas or outside the server.
//
// # Several replicas
//
// Each replica keeps its own figures: there is no coordination service.
// Rate and concurrency limits are per replica, so N replicas behind a load
// balancer admit up to N times the configured rate and concurrency; set
// them to the total divided by N. Stored limits are checked against a
// replica's view: in the worst case all N replicas, each having scanned
// usage U, admit changes up to the limit M within one UsageTTL, and the
// tenant ends at most (N-1)*(M-U) over M, until the next scans refuse
// every further growth. With one replica there is no overshoot beyond
// changes made outside the server.
package quota

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Names of the limits, as LimitError.Limit reports them.
const (
	LimitBytes      = "stored bytes"
	LimitFiles      = "stored files"
	LimitRate       = "calls per second"
	LimitConcurrent = "concurrent calls"
)

// DefaultUsageTTL is how long a usage scan is trusted when
// Options.UsageTTL is 0.
const DefaultUsageTTL = 5 * time.Minute

// Limits are one tenant's limits; a zero field sets no limit.
type Limits struct {
	// MaxBytes bounds the bytes of the tenant's regular files.
	MaxBytes int64 `yaml:"max_bytes" json:"max_bytes,omitempty"`
	// MaxFiles bounds the number of the tenant's entries: regular files,
	// directories and any other entry (a link), each of which takes
	// storage, so thousands of empty directories do not pass a limit of
	// five files.
	MaxFiles int64 `yaml:"max_files" json:"max_files,omitempty"`
	// CallsPerSecond is the sustained rate of calls.
	CallsPerSecond float64 `yaml:"calls_per_second" json:"calls_per_second,omitempty"`
	// Burst is how many calls may come at once above the rate; 0 means
	// the rate rounded up (at least 1).
	Burst int `yaml:"burst" json:"burst,omitempty"`
	// MaxConcurrent bounds the calls running at once.
	MaxConcurrent int `yaml:"max_concurrent" json:"max_concurrent,omitempty"`
}

func (l Limits) check() error {
	if l.MaxBytes < 0 || l.MaxFiles < 0 || l.CallsPerSecond < 0 || l.Burst < 0 || l.MaxConcurrent < 0 {
		return fmt.Errorf("negative limit in %+v", l)
	}
	return nil
}

func (l Limits) burst() int {
	if l.Burst > 0 {
		return l.Burst
	}
	return max(1, int(l.CallsPerSecond+0.999999))
}

// Usage is what a tenant stores, or the change a call makes to it.
type Usage struct {
	// Bytes are the bytes of regular files.
	Bytes int64
	// Files counts entries: regular files, directories and others.
	Files int64
}

// Add returns u + v.
func (u Usage) Add(v Usage) Usage { return Usage{u.Bytes + v.Bytes, u.Files + v.Files} }

// growth returns the parts of u that grow usage; shrinking parts are never
// refused and never held as pending.
func (u Usage) growth() Usage { return Usage{max(u.Bytes, 0), max(u.Files, 0)} }

// Changes a call makes, for Reserve.

// Write is the change of writing size bytes to a file that had oldSize
// bytes, or did not exist (existed false).
func Write(oldSize int64, existed bool, size int64) Usage {
	if !existed {
		return Usage{Bytes: size, Files: 1}
	}
	return Usage{Bytes: size - oldSize}
}

// Mkdir is the change of creating n directories (create_directory with
// its missing parents, the parents apply_patch makes for new files, the
// directories of a copied tree).
func Mkdir(n int64) Usage { return Usage{Files: n} }

// Remove is the change of removing a file of size bytes.
func Remove(size int64) Usage { return Usage{Bytes: -size, Files: -1} }

// Resize is the change of one file going from before bytes to after
// bytes, where -1 stands for no file (created, or removed), as
// tools.SizeChange spells it. A directory a change creates is spelled
// -1 to 0 there (SizeChange.Dir), and counts as one entry here.
func Resize(before, after int64) Usage {
	var u Usage
	if before >= 0 {
		u = u.Add(Remove(before))
	}
	if after >= 0 {
		u = u.Add(Usage{Bytes: after, Files: 1})
	}
	return u
}

// A UsageSource reports what a tenant stores, by scanning its storage.
type UsageSource interface {
	Usage(ctx context.Context, tenant string) (Usage, error)
}

// UsageFunc is a function that is a UsageSource.
type UsageFunc func(ctx context.Context, tenant string) (Usage, error)

// Usage calls f.
func (f UsageFunc) Usage(ctx context.Context, tenant string) (Usage, error) { return f(ctx, tenant) }

// ScanFS counts the entries below the root of fsys (regular files,
// directories, links and any other; the root itself is not counted) and
// the bytes of the regular files, for a UsageSource over the io/fs view
// of a tenant's namespace (backend.FS).
func ScanFS(ctx context.Context, fsys fs.FS) (Usage, error) {
	var u Usage
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if name == "." {
			return nil
		}
		if !d.Type().IsRegular() {
			u.Files++
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		u.Bytes += fi.Size()
		u.Files++
		return nil
	})
	if err != nil {
		return Usage{}, fmt.Errorf("quota: scan: %w", err)
	}
	return u, nil
}

// ErrLimit is matched by every *LimitError.
var ErrLimit = errors.New("limit exceeded")

// LimitError is a call refused by a limit. It is retryable: after
// RetryAfter for a rate, once other calls finish for concurrency, once the
// tenant frees space for stored limits.
type LimitError struct {
	Tenant string
	// Limit is one of LimitBytes, LimitFiles, LimitRate, LimitConcurrent.
	Limit string
	// Max is the limit; Used what the tenant has (stored, or calls
	// running); Want what the call would add.
	Max, Used, Want int64
	// Rate is the limit, for LimitRate.
	Rate float64
	// RetryAfter is when a call may come again, for LimitRate.
	RetryAfter time.Duration
}

// Error names the tenant, the limit and, for the rate, when to retry.
func (e *LimitError) Error() string {
	switch e.Limit {
	case LimitRate:
		return fmt.Sprintf("quota: tenant %s: over its limit of %g %s; retry after %v", e.Tenant, e.Rate, e.Limit, e.RetryAfter.Round(time.Millisecond))
	case LimitConcurrent:
		return fmt.Sprintf("quota: tenant %s: limit of %d %s reached; retry when one ends", e.Tenant, e.Max, e.Limit)
	default:
		return fmt.Sprintf("quota: tenant %s: limit of %d %s: %d stored, the change adds %d; free space and retry", e.Tenant, e.Max, e.Limit, e.Used, e.Want)
	}
}

// Is makes errors.Is(err, ErrLimit) true.
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// Options configure a Manager.
type Options struct {
	// Default are the limits of a tenant without an override.
	Default Limits
	// Overrides are the limits of named tenants, replacing Default whole.
	Overrides map[string]Limits
	// Usage scans a tenant's stored usage; required when any MaxBytes or
	// MaxFiles is set.
	Usage UsageSource
	// UsageTTL is how long a scan is trusted; 0 means DefaultUsageTTL.
	UsageTTL time.Duration
}

// Manager enforces the limits of every tenant. It is safe for concurrent
// use. A tenant's figures are dropped once it has been idle for a
// UsageTTL, so the Manager holds only the tenants active lately.
type Manager struct {
	opts Options

	mu        sync.Mutex
	tenants   map[string]*state
	lastSweep time.Time
}

// state is one tenant's figures.
type state struct {
	limits  Limits
	limiter *rate.Limiter // nil without a rate limit

	// Guarded by Manager.mu.
	running  int
	pending  Usage // reserved, not yet committed or cancelled
	stored   Usage // as of scanned, moved by commits since
	scanned  time.Time
	lastUsed time.Time

	scan sync.Mutex // one scan at a time per tenant
}

// New returns a Manager for opts.
func New(opts Options) (*Manager, error) {
	needUsage := opts.Default.MaxBytes > 0 || opts.Default.MaxFiles > 0
	if err := opts.Default.check(); err != nil {
		return nil, fmt.Errorf("quota: default: %w", err)
	}
	for t, l := range opts.Overrides {
		if err := l.check(); err != nil {
			return nil, fmt.Errorf("quota: tenant %s: %w", t, err)
		}
		needUsage = needUsage || l.MaxBytes > 0 || l.MaxFiles > 0
	}
	if needUsage && opts.Usage == nil {
		return nil, errors.New("quota: a limit on stored bytes or files needs a UsageSource")
	}
	if opts.UsageTTL < 0 {
		return nil, errors.New("quota: negative UsageTTL")
	}
	if opts.UsageTTL == 0 {
		opts.UsageTTL = DefaultUsageTTL
	}
	return &Manager{opts: opts, tenants: make(map[string]*state)}, nil
}

// LimitsOf returns the limits of tenant.
func (m *Manager) LimitsOf(tenant string) Limits {
	if l, ok := m.opts.Overrides[tenant]; ok {
		return l
	}
	return m.opts.Default
}

// get returns tenant's state, made on first use. m.mu is held.
func (m *Manager) get(tenant string, now time.Time) *state {
	m.sweep(now)
	s, ok := m.tenants[tenant]
	if !ok {
		l := m.LimitsOf(tenant)
		s = &state{limits: l}
		if l.CallsPerSecond > 0 {
			s.limiter = rate.NewLimiter(rate.Limit(l.CallsPerSecond), l.burst())
		}
		m.tenants[tenant] = s
	}
	s.lastUsed = now
	return s
}

// sweep drops tenants idle for a UsageTTL, at most once per UsageTTL. An
// idle tenant's rate limiter is full again by then unless the rate is
// below one call per UsageTTL. m.mu is held.
func (m *Manager) sweep(now time.Time) {
	if now.Sub(m.lastSweep) < m.opts.UsageTTL {
		return
	}
	m.lastSweep = now
	for t, s := range m.tenants {
		if s.running == 0 && s.pending == (Usage{}) && now.Sub(s.lastUsed) >= m.opts.UsageTTL {
			delete(m.tenants, t)
		}
	}
}

// Admit lets a call of tenant start, or refuses it with a *LimitError when
// the tenant is over its rate or has its most calls running. The call
// must call release when it ends (more than once is harmless).
func (m *Manager) Admit(tenant string) (release func(), err error) {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.get(tenant, now)
	if limit := s.limits.MaxConcurrent; limit > 0 && s.running >= limit {
		return func() {}, &LimitError{Tenant: tenant, Limit: LimitConcurrent, Max: int64(limit), Used: int64(s.running), Want: 1}
	}
	if s.limiter != nil {
		r := s.limiter.ReserveN(now, 1)
		if d := r.DelayFrom(now); d > 0 {
			r.CancelAt(now)
			return func() {}, &LimitError{Tenant: tenant, Limit: LimitRate, Rate: s.limits.CallsPerSecond, RetryAfter: d}
		}
	}
	s.running++
	var once sync.Once
	return func() {
		once.Do(func() {
			m.mu.Lock()
			s.running--
			m.mu.Unlock()
		})
	}, nil
}

// Reservation is a change Reserve admitted. Commit it once the change is
// in storage, Cancel it when the change failed or was not made; one of the
// two must be called, and the first call counts.
type Reservation struct {
	m     *Manager
	s     *state
	delta Usage
	once  sync.Once
}

// Reserve checks that tenant may make a change of delta to what it
// stores, before the change commits. A change that grows bytes or files
// past a limit is refused with a *LimitError; one that shrinks them is
// never refused, so a tenant over its quota can always delete. The first
// check of a tenant, and the first after UsageTTL, scans its usage; an
// error of the scan is returned as it is, refusing the change.
func (m *Manager) Reserve(ctx context.Context, tenant string, delta Usage) (*Reservation, error) {
	m.mu.Lock()
	s := m.get(tenant, time.Now())
	m.mu.Unlock()
	limited := s.limits.MaxBytes > 0 || s.limits.MaxFiles > 0
	if limited && delta.growth() != (Usage{}) {
		if err := m.refresh(ctx, tenant, s); err != nil {
			return nil, err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if limited {
		grow, held := delta.growth(), s.stored.Add(s.pending)
		if limit := s.limits.MaxBytes; limit > 0 && grow.Bytes > 0 && held.Bytes+grow.Bytes > limit {
			return nil, &LimitError{Tenant: tenant, Limit: LimitBytes, Max: limit, Used: held.Bytes, Want: grow.Bytes}
		}
		if limit := s.limits.MaxFiles; limit > 0 && grow.Files > 0 && held.Files+grow.Files > limit {
			return nil, &LimitError{Tenant: tenant, Limit: LimitFiles, Max: limit, Used: held.Files, Want: grow.Files}
		}
	}
	s.pending = s.pending.Add(delta.growth())
	return &Reservation{m: m, s: s, delta: delta}, nil
}

// refresh scans tenant's usage when the last scan is missing or too old.
// Concurrent callers wait for one scan.
func (m *Manager) refresh(ctx context.Context, tenant string, s *state) error {
	s.scan.Lock()
	defer s.scan.Unlock()
	m.mu.Lock()
	fresh := !s.scanned.IsZero() && time.Since(s.scanned) < m.opts.UsageTTL
	m.mu.Unlock()
	if fresh {
		return nil
	}
	u, err := m.opts.Usage.Usage(ctx, tenant)
	if err != nil {
		return fmt.Errorf("quota: tenant %s: usage: %w", tenant, err)
	}
	m.mu.Lock()
	s.stored, s.scanned = u, time.Now()
	m.mu.Unlock()
	return nil
}

// Commit records the change as made.
func (r *Reservation) Commit() { r.end(true) }

// Cancel drops the change.
func (r *Reservation) Cancel() { r.end(false) }

func (r *Reservation) end(commit bool) {
	r.once.Do(func() {
		r.m.mu.Lock()
		defer r.m.mu.Unlock()
		g := r.delta.growth()
		r.s.pending = r.s.pending.Add(Usage{-g.Bytes, -g.Files})
		if commit {
			r.s.stored = r.s.stored.Add(r.delta)
		}
	})
}

// Rescan makes the next growing change of tenant scan its usage again,
// for a change whose size was not known (a directory deleted or moved):
// until then the committed deltas may overcount or undercount it.
func (m *Manager) Rescan(tenant string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.tenants[tenant]; ok {
		s.scanned = time.Time{}
	}
}

// UsageOf returns what the Manager counts tenant as storing: its last scan
// moved by the changes committed since, and the changes pending. Both are
// zero for a tenant not seen lately.
func (m *Manager) UsageOf(tenant string) (stored, pending Usage) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.tenants[tenant]; ok {
		return s.stored, s.pending
	}
	return Usage{}, Usage{}
}
