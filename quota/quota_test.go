package quota

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/local"
)

// tenantDirs is a directory per tenant on local disk, scanned through the
// local backend's io/fs view.
type tenantDirs struct {
	root  string
	scans int
	mu    sync.Mutex
}

func newTenantDirs(t *testing.T, files map[string]string) *tenantDirs {
	t.Helper()
	d := &tenantDirs{root: t.TempDir()}
	for name, content := range files {
		d.write(t, name, content)
	}
	return d
}

func (d *tenantDirs) write(t *testing.T, name, content string) {
	t.Helper()
	p := filepath.Join(d.root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (d *tenantDirs) remove(t *testing.T, name string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(d.root, filepath.FromSlash(name))); err != nil {
		t.Fatal(err)
	}
}

func (d *tenantDirs) Usage(ctx context.Context, tenant string) (Usage, error) {
	d.mu.Lock()
	d.scans++
	d.mu.Unlock()
	fsys, err := local.New(filepath.Join(d.root, tenant))
	if err != nil {
		return Usage{}, err
	}
	defer fsys.Close()
	return ScanFS(ctx, backend.FS(ctx, fsys))
}

func (d *tenantDirs) scanCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.scans
}

func newManager(t *testing.T, opts Options) *Manager {
	t.Helper()
	m, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func wantLimit(t *testing.T, err error, limit string) *LimitError {
	t.Helper()
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != limit || !errors.Is(err, ErrLimit) {
		t.Fatalf("err %v, want the %s limit", err, limit)
	}
	if !strings.Contains(err.Error(), limit) || !strings.Contains(err.Error(), "retry") {
		t.Fatalf("message %q does not name the limit and the retry", err)
	}
	return le
}

func TestScanFS(t *testing.T) {
	d := newTenantDirs(t, map[string]string{"t1/a": "12345", "t1/sub/b": "123", "t1/sub/deep/c": "", "t10/x": "1234567890"})
	if err := os.Symlink("a", filepath.Join(d.root, "t1", "link")); err != nil {
		t.Fatal(err)
	}
	u, err := d.Usage(context.Background(), "t1")
	if err != nil {
		t.Fatal(err)
	}
	if u != (Usage{Bytes: 8, Files: 6}) {
		t.Fatalf("usage %+v, want 8 bytes in 6 entries (3 files, 2 directories, 1 link)", u)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Usage(ctx, "t1"); !errors.Is(err, context.Canceled) {
		t.Fatalf("scan with a cancelled context: %v", err)
	}
}

func TestStoredLimits(t *testing.T) {
	d := newTenantDirs(t, map[string]string{"t1/a": strings.Repeat("a", 60), "t1/b": strings.Repeat("b", 40), "t1/c": ""})
	m := newManager(t, Options{Default: Limits{MaxBytes: 150, MaxFiles: 4}, Usage: d, UsageTTL: time.Hour})
	ctx := context.Background()

	first, err := m.Reserve(ctx, "t1", Write(0, false, 40))
	if err != nil {
		t.Fatal(err)
	}
	// The first reservation is pending: 100 + 40 + 20 > 150.
	_, err = m.Reserve(ctx, "t1", Write(0, false, 20))
	if le := wantLimit(t, err, LimitBytes); le.Used != 140 || le.Want != 20 || le.Max != 150 {
		t.Fatalf("%+v", le)
	}
	// 3 files + 1 pending: a fifth is over MaxFiles, though it is empty.
	_, err = m.Reserve(ctx, "t1", Write(0, false, 0))
	wantLimit(t, err, LimitFiles)
	first.Cancel()
	second, err := m.Reserve(ctx, "t1", Write(0, false, 20))
	if err != nil {
		t.Fatalf("after the cancel: %v", err)
	}
	second.Commit()
	second.Cancel() // the first call counts
	if stored, pending := m.UsageOf("t1"); stored != (Usage{120, 4}) || pending != (Usage{}) {
		t.Fatalf("usage %+v pending %+v", stored, pending)
	}

	// Growing an existing file counts only the growth.
	_, err = m.Reserve(ctx, "t1", Write(60, true, 91))
	wantLimit(t, err, LimitBytes)
	grow, err := m.Reserve(ctx, "t1", Write(60, true, 90))
	if err != nil {
		t.Fatal(err)
	}
	grow.Commit()

	// A delete gives space back.
	_, err = m.Reserve(ctx, "t1", Write(0, false, 10))
	wantLimit(t, err, LimitBytes)
	del, err := m.Reserve(ctx, "t1", Remove(40))
	if err != nil {
		t.Fatal(err)
	}
	del.Commit()
	if _, err := m.Reserve(ctx, "t1", Write(0, false, 10)); err != nil {
		t.Fatalf("after a delete: %v", err)
	}
	if n := d.scanCount(); n != 1 {
		t.Fatalf("%d scans within one UsageTTL", n)
	}
}

// TestOverQuotaMayShrink: a tenant already over its limit (the limit was
// lowered, or other replicas overshot) can still delete and shrink.
func TestOverQuotaMayShrink(t *testing.T) {
	d := newTenantDirs(t, map[string]string{"t1/a": strings.Repeat("a", 100)})
	m := newManager(t, Options{Default: Limits{MaxBytes: 10}, Usage: d})
	ctx := context.Background()
	for _, delta := range []Usage{Write(100, true, 50), Remove(100), {Bytes: -1}} {
		r, err := m.Reserve(ctx, "t1", delta)
		if err != nil {
			t.Fatalf("Reserve(%+v): %v", delta, err)
		}
		r.Cancel()
	}
	_, err := m.Reserve(ctx, "t1", Write(100, true, 101))
	wantLimit(t, err, LimitBytes)
}

// TestUsageRescanned: a scan older than UsageTTL is done again, which
// takes in what was written outside this Manager (another replica).
func TestUsageRescanned(t *testing.T) {
	d := newTenantDirs(t, map[string]string{"t1/a": strings.Repeat("a", 50)})
	ctx := context.Background()
	cached := newManager(t, Options{Default: Limits{MaxBytes: 100}, Usage: d, UsageTTL: time.Hour})
	rescanning := newManager(t, Options{Default: Limits{MaxBytes: 100}, Usage: d, UsageTTL: time.Nanosecond})
	for _, m := range []*Manager{cached, rescanning} {
		if r, err := m.Reserve(ctx, "t1", Write(0, false, 10)); err != nil {
			t.Fatal(err)
		} else {
			r.Cancel()
		}
	}
	d.write(t, "t1/b", strings.Repeat("b", 45)) // another replica's write
	if r, err := cached.Reserve(ctx, "t1", Write(0, false, 10)); err != nil {
		t.Fatalf("within UsageTTL the outside write is not seen: %v", err)
	} else {
		r.Cancel()
	}
	_, err := rescanning.Reserve(ctx, "t1", Write(0, false, 10))
	wantLimit(t, err, LimitBytes)
}

func TestUsageError(t *testing.T) {
	boom := errors.New("storage down")
	m := newManager(t, Options{Default: Limits{MaxFiles: 10}, Usage: UsageFunc(func(context.Context, string) (Usage, error) { return Usage{}, boom })})
	_, err := m.Reserve(context.Background(), "t1", Write(0, false, 1))
	if !errors.Is(err, boom) || errors.Is(err, ErrLimit) {
		t.Fatalf("Reserve with a failing scan: %v", err)
	}
	// A delete needs no scan.
	if _, err := m.Reserve(context.Background(), "t1", Remove(1)); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentReserve: of many writers racing for the last bytes,
// exactly as many as fit get in.
func TestConcurrentReserve(t *testing.T) {
	d := newTenantDirs(t, map[string]string{"t1/a": ""})
	m := newManager(t, Options{Default: Limits{MaxBytes: 100}, Usage: d})
	var wg sync.WaitGroup
	var mu sync.Mutex
	admitted, refused := 0, 0
	for range 50 {
		wg.Go(func() {
			r, err := m.Reserve(context.Background(), "t1", Write(0, false, 10))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				admitted++
				r.Commit()
			case errors.Is(err, ErrLimit):
				refused++
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if admitted != 10 || refused != 40 {
		t.Fatalf("%d admitted, %d refused; want 10 and 40", admitted, refused)
	}
	if n := d.scanCount(); n != 1 {
		t.Fatalf("%d scans for concurrent first changes", n)
	}
}

func TestConcurrentCalls(t *testing.T) {
	m := newManager(t, Options{Default: Limits{MaxConcurrent: 2}, Overrides: map[string]Limits{"big": {MaxConcurrent: 3}}})
	r1, err := m.Admit("t1")
	if err != nil {
		t.Fatal(err)
	}
	r2, err := m.Admit("t1")
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Admit("t1")
	if le := wantLimit(t, err, LimitConcurrent); le.Max != 2 {
		t.Fatalf("%+v", le)
	}
	for range 3 {
		if _, err := m.Admit("big"); err != nil {
			t.Fatalf("override: %v", err)
		}
	}
	if _, err := m.Admit("t2"); err != nil {
		t.Fatalf("another tenant: %v", err)
	}
	r1()
	r1() // a second release changes nothing
	r3, err := m.Admit("t1")
	if err != nil {
		t.Fatalf("after a release: %v", err)
	}
	_, err = m.Admit("t1")
	wantLimit(t, err, LimitConcurrent)
	r2()
	r3()
}

func TestRate(t *testing.T) {
	// One call per 1000 s with a burst of 2: the third call is refused
	// however slow the machine.
	m := newManager(t, Options{Default: Limits{CallsPerSecond: 0.001, Burst: 2}})
	for range 2 {
		release, err := m.Admit("t1")
		if err != nil {
			t.Fatal(err)
		}
		release()
	}
	_, err := m.Admit("t1")
	le := wantLimit(t, err, LimitRate)
	if le.RetryAfter < 900*time.Second || le.RetryAfter > 1000*time.Second {
		t.Fatalf("RetryAfter %v, want about 1000s", le.RetryAfter)
	}
	// A refused call takes no token: the wait stays the same.
	_, err = m.Admit("t1")
	if le2 := wantLimit(t, err, LimitRate); le2.RetryAfter > le.RetryAfter {
		t.Fatalf("RetryAfter grew from %v to %v", le.RetryAfter, le2.RetryAfter)
	}
	if _, err := m.Admit("t2"); err != nil {
		t.Fatalf("another tenant: %v", err)
	}
}

// TestIdleTenantsDropped: a tenant idle for a UsageTTL is forgotten (and
// scanned again when it comes back); one with calls running is kept.
func TestIdleTenantsDropped(t *testing.T) {
	d := newTenantDirs(t, map[string]string{"t1/a": "x", "t2/a": "y"})
	m := newManager(t, Options{Default: Limits{MaxFiles: 10, MaxConcurrent: 5}, Usage: d, UsageTTL: time.Nanosecond})
	ctx := context.Background()
	r, err := m.Reserve(ctx, "t1", Write(0, false, 1))
	if err != nil {
		t.Fatal(err)
	}
	r.Commit()
	running, err := m.Admit("t2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Admit("t3"); err != nil { // sweeps t1, keeps t2
		t.Fatal(err)
	}
	m.mu.Lock()
	_, has1 := m.tenants["t1"]
	_, has2 := m.tenants["t2"]
	m.mu.Unlock()
	if has1 || !has2 {
		t.Fatalf("after the sweep: t1 kept %v, t2 kept %v", has1, has2)
	}
	running()
}

func TestNewOptions(t *testing.T) {
	for _, opts := range []Options{
		{Default: Limits{MaxBytes: 1}},
		{Overrides: map[string]Limits{"t1": {MaxFiles: 1}}},
		{Default: Limits{MaxConcurrent: -1}},
		{Default: Limits{CallsPerSecond: 1}, UsageTTL: -1},
	} {
		if _, err := New(opts); err == nil {
			t.Errorf("New(%+v) accepted", opts)
		}
	}
}

func TestResize(t *testing.T) {
	cases := []struct {
		before, after int64
		want          Usage
	}{
		{-1, 5, Usage{5, 1}},
		{-1, 0, Usage{0, 1}},
		{7, -1, Usage{-7, -1}},
		{7, 3, Usage{-4, 0}},
		{3, 7, Usage{4, 0}},
		{-1, -1, Usage{}},
	}
	for _, tc := range cases {
		if got := Resize(tc.before, tc.after); got != tc.want {
			t.Errorf("Resize(%d, %d) = %+v, want %+v", tc.before, tc.after, got, tc.want)
		}
		if tc.before >= 0 && tc.after >= 0 && Resize(tc.before, tc.after) != Write(tc.before, true, tc.after) {
			t.Errorf("Resize(%d, %d) differs from Write", tc.before, tc.after)
		}
	}
}

// TestRescan: after Rescan, the next growing change sees storage as it
// is, not as the deltas left it (a directory deleted outside the deltas
// gives its space back).
func TestRescan(t *testing.T) {
	d := newTenantDirs(t, map[string]string{"t1/dir/a": strings.Repeat("a", 90)})
	ctx := context.Background()
	m := newManager(t, Options{Default: Limits{MaxBytes: 100}, Usage: d, UsageTTL: time.Hour})
	_, err := m.Reserve(ctx, "t1", Write(0, false, 20))
	wantLimit(t, err, LimitBytes)
	d.remove(t, "t1/dir")
	_, err = m.Reserve(ctx, "t1", Write(0, false, 20))
	wantLimit(t, err, LimitBytes) // within UsageTTL, the old scan stands
	m.Rescan("t1")
	m.Rescan("t2") // a tenant not seen: nothing to do
	r, err := m.Reserve(ctx, "t1", Write(0, false, 20))
	if err != nil {
		t.Fatalf("after Rescan: %v", err)
	}
	r.Commit()
	if stored, _ := m.UsageOf("t1"); stored != (Usage{20, 1}) {
		t.Errorf("stored %+v after the rescan and one write", stored)
	}
}
