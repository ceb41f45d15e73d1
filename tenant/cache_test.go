package tenant

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// closer records the values a cache closed.
type closer struct {
	mu     sync.Mutex
	closed []string
}

func (c *closer) close(k ID, v string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = append(c.closed, v)
}

func (c *closer) list() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.closed)
}

func newTestCache(t *testing.T, size int, build func(context.Context, ID) (string, error), cl *closer) *Cache[ID, string] {
	t.Helper()
	c, err := NewCache(CacheOptions[ID, string]{Size: size, Build: build, OnEvict: cl.close})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustGet(t *testing.T, c *Cache[ID, string], k ID) (string, func()) {
	t.Helper()
	v, release, err := c.Get(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	return v, release
}

// TestCacheBuildsOnce starts many first requests for two keys at once,
// with the build held until they have all asked.
func TestCacheBuildsOnce(t *testing.T) {
	var builds atomic.Int32
	gate := make(chan struct{})
	c := newTestCache(t, 4, func(_ context.Context, k ID) (string, error) {
		builds.Add(1)
		<-gate
		return "set of " + string(k), nil
	}, &closer{})
	const n = 32
	var started, done sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range 2 * n {
		k := ID(fmt.Sprintf("t%d", i%2))
		started.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			started.Done()
			v, release, err := c.Get(context.Background(), k)
			if err == nil && v != "set of "+string(k) {
				err = fmt.Errorf("%s got %q", k, v)
			}
			release()
			errs <- err
		}()
	}
	started.Wait()
	close(gate)
	done.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := builds.Load(); got != 2 {
		t.Fatalf("%d builds for two keys", got)
	}
}

func TestCacheLRU(t *testing.T) {
	cl := &closer{}
	c := newTestCache(t, 2, func(_ context.Context, k ID) (string, error) { return string(k), nil }, cl)
	_, r1 := mustGet(t, c, "t1")
	r1()
	_, r2 := mustGet(t, c, "t2")
	r2()
	_, r1 = mustGet(t, c, "t1") // t1 is now the most recently used
	r1()
	_, r3 := mustGet(t, c, "t3")
	r3()
	if got := cl.list(); !slices.Equal(got, []string{"t2"}) {
		t.Fatalf("closed %q, want [t2]", got)
	}
	if c.Len() != 2 {
		t.Fatalf("Len %d", c.Len())
	}

	// A value evicted while held is closed when its holder releases it.
	_, held := mustGet(t, c, "t1")
	c.Remove("t1")
	if got := cl.list(); len(got) != 1 {
		t.Fatalf("closed %q while t1 was held", got)
	}
	held()
	held() // a second release changes nothing
	if got := cl.list(); !slices.Equal(got, []string{"t2", "t1"}) {
		t.Fatalf("closed %q, want [t2 t1]", got)
	}
	c.Close()
	if got := cl.list(); !slices.Equal(got, []string{"t2", "t1", "t3"}) {
		t.Fatalf("closed %q after Close", got)
	}
}

func TestCacheBuildError(t *testing.T) {
	var calls atomic.Int32
	boom := errors.New("storage down")
	cl := &closer{}
	c := newTestCache(t, 2, func(_ context.Context, k ID) (string, error) {
		if calls.Add(1) == 1 {
			return "", boom
		}
		return string(k), nil
	}, cl)
	if _, _, err := c.Get(context.Background(), "t1"); !errors.Is(err, boom) {
		t.Fatalf("first Get: %v", err)
	}
	if c.Len() != 0 {
		t.Fatal("a failed build stayed in the cache")
	}
	if v, release := mustGet(t, c, "t1"); v != "t1" {
		t.Fatalf("second Get %q", v)
	} else {
		release()
	}
	if len(cl.list()) != 0 {
		t.Fatal("a failed build was closed")
	}
}

// TestCacheWaiterCancelled: a request whose context ends while another
// builds gets its context's error; the build goes on for the others.
func TestCacheWaiterCancelled(t *testing.T) {
	gate := make(chan struct{})
	building := make(chan struct{})
	c := newTestCache(t, 2, func(_ context.Context, k ID) (string, error) {
		close(building)
		<-gate
		return string(k), nil
	}, &closer{})
	first := make(chan error, 1)
	go func() {
		_, release, err := c.Get(context.Background(), "t1")
		release()
		first <- err
	}()
	<-building
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := c.Get(ctx, "t1"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter: %v", err)
	}
	close(gate)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
}

func TestNewCacheOptions(t *testing.T) {
	if _, err := NewCache(CacheOptions[ID, string]{Size: 0, Build: func(context.Context, ID) (string, error) { return "", nil }}); err == nil {
		t.Fatal("size 0 accepted")
	}
	if _, err := NewCache(CacheOptions[ID, string]{Size: 1}); err == nil {
		t.Fatal("no Build accepted")
	}
}
