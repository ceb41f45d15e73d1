package tenant

import (
	"container/list"
	"context"
	"errors"
	"log/slog"
	"sync"
)

// Cache keeps one value per key, such as a tenant's tool set, built on
// first use and kept for the next requests; it holds at most a fixed number
// and evicts the least recently used. Concurrent first requests for a key
// build its value once and all get it. A value that is evicted while
// requests still hold it is closed (OnEvict) only when the last of them
// releases it. A Cache is safe for concurrent use.
type Cache[K comparable, V any] struct {
	build   func(context.Context, K) (V, error)
	onEvict func(K, V)
	max     int
	logger  *slog.Logger

	mu      sync.Mutex
	entries map[K]*list.Element // of *entry[K, V]
	lru     list.List           // front: most recently used
}

type entry[K comparable, V any] struct {
	key   K
	ready chan struct{} // closed once val and err are set
	val   V
	err   error
	refs  int  // holders that have not released
	gone  bool // evicted: OnEvict when refs drops to 0
}

// CacheOptions configure a Cache.
type CacheOptions[K comparable, V any] struct {
	// Size is the most values the cache holds (at least 1).
	Size int
	// Build makes the value of a key. It runs once per key at a time,
	// with the context of the request that asked first, and its error is
	// not kept: the next Get tries again.
	Build func(context.Context, K) (V, error)
	// OnEvict, when set, is called with a value that left the cache, once
	// no Get holds it any more (to close its backends, say).
	OnEvict func(K, V)
	// Logger receives why a value could not be built when WithValue
	// answers 503, whose body does not carry it; nil is slog.Default().
	Logger *slog.Logger
}

// NewCache returns an empty Cache.
func NewCache[K comparable, V any](opts CacheOptions[K, V]) (*Cache[K, V], error) {
	if opts.Size < 1 {
		return nil, errors.New("tenant: cache size must be at least 1")
	}
	if opts.Build == nil {
		return nil, errors.New("tenant: cache needs a Build function")
	}
	return &Cache[K, V]{build: opts.Build, onEvict: opts.OnEvict, max: opts.Size, logger: opts.Logger, entries: make(map[K]*list.Element)}, nil
}

// Get returns the value of key, building it if the cache does not hold it,
// and a release function the caller must call once it is done with the
// value. While a value is being built, other Gets for the same key wait for
// it or for their own ctx.
func (c *Cache[K, V]) Get(ctx context.Context, key K) (V, func(), error) {
	c.mu.Lock()
	el, ok := c.entries[key]
	if ok {
		c.lru.MoveToFront(el)
	} else {
		el = c.lru.PushFront(&entry[K, V]{key: key, ready: make(chan struct{})})
		c.entries[key] = el
	}
	e := el.Value.(*entry[K, V])
	e.refs++
	c.mu.Unlock()

	if !ok {
		c.fill(ctx, el, e)
	}
	select {
	case <-e.ready:
	case <-ctx.Done():
		c.release(e)
		var zero V
		return zero, func() {}, ctx.Err()
	}
	if e.err != nil {
		c.release(e)
		var zero V
		return zero, func() {}, e.err
	}
	var once sync.Once
	return e.val, func() { once.Do(func() { c.release(e) }) }, nil
}

// fill builds e's value; a failed build leaves the cache, so it is tried
// again, and a good one may push the least recently used values out.
func (c *Cache[K, V]) fill(ctx context.Context, el *list.Element, e *entry[K, V]) {
	val, err := c.build(ctx, e.key)
	var closing []*entry[K, V]
	c.mu.Lock()
	e.val, e.err = val, err
	if err != nil {
		c.remove(el, e)
	}
	for c.lru.Len() > c.max && c.lru.Back() != el {
		closing = c.evict(c.lru.Back(), closing)
	}
	c.mu.Unlock()
	close(e.ready)
	c.closeAll(closing)
}

// remove takes e out of the cache's index, if it is still there. c.mu is
// held.
func (c *Cache[K, V]) remove(el *list.Element, e *entry[K, V]) {
	if cur, ok := c.entries[e.key]; ok && cur == el {
		delete(c.entries, e.key)
		c.lru.Remove(el)
	}
}

// evict removes el's entry and adds it to closing when nobody holds it;
// otherwise its last holder's release closes it. c.mu is held.
func (c *Cache[K, V]) evict(el *list.Element, closing []*entry[K, V]) []*entry[K, V] {
	e := el.Value.(*entry[K, V])
	c.remove(el, e)
	e.gone = true
	if e.refs == 0 && e.err == nil {
		closing = append(closing, e)
	}
	return closing
}

// closeAll calls OnEvict for entries that left the cache, outside c.mu so
// a slow close holds up no Get.
func (c *Cache[K, V]) closeAll(closing []*entry[K, V]) {
	if c.onEvict == nil {
		return
	}
	for _, e := range closing {
		c.onEvict(e.key, e.val)
	}
}

func (c *Cache[K, V]) release(e *entry[K, V]) {
	var closing []*entry[K, V]
	c.mu.Lock()
	e.refs--
	if e.gone && e.refs == 0 && e.err == nil {
		closing = append(closing, e)
	}
	c.mu.Unlock()
	c.closeAll(closing)
}

// Len returns how many values the cache holds, built or being built.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// Remove drops key's value, so the next Get builds it again (after the
// tenant's config changed, say). A holder keeps using the old value until
// it releases it, and OnEvict sees it then.
func (c *Cache[K, V]) Remove(key K) {
	var closing []*entry[K, V]
	c.mu.Lock()
	if el, ok := c.entries[key]; ok {
		closing = c.evict(el, closing)
	}
	c.mu.Unlock()
	c.closeAll(closing)
}

// Close drops every value, calling OnEvict for each once its holders have
// released it. The cache stays usable: a later Get builds again.
func (c *Cache[K, V]) Close() {
	var closing []*entry[K, V]
	c.mu.Lock()
	for c.lru.Len() > 0 {
		closing = c.evict(c.lru.Back(), closing)
	}
	c.mu.Unlock()
	c.closeAll(closing)
}
