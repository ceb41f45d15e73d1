// Package gctune sets the garbage collector of a long-running MCP
// server: fencefs serve, and the SDK floor it is measured against, which
// must collect as it does.
//
// Every MCP call allocates a few hundred KiB in the SDK's JSON decoding,
// nearly all of it garbage at once, while a server's live heap is a few MiB (most of it what the
// linked storage SDKs keep from their start). Go lets the heap grow to
// GOGC percent over the live data, but to at least 4 MiB times GOGC/100:
// at 400, 16 MiB, which the calls fill every few dozen calls, and each
// collection marks the whole live heap again. A floor under the heap's
// growth (the heap may reach MinHeap before a collection, however small
// the live data) makes the collections of a small server rarer, and
// changes nothing once the live data is large: a server of many tenants
// keeps GCPercent, and a memory limit still bounds the heap.
package gctune

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Defaults of Tune for fencefs serve.
const (
	// GCPercent is the collector's target over the live heap.
	GCPercent = 400
	// MinHeap is the heap a server lets grow to between collections,
	// however small its live data.
	MinHeap = 64 << 20
)

// Tune sets the collector of a long-running server: percent (GOGC)
// over the live heap, raised after each collection as far as needed for
// the heap to grow to minHeap before the next. It does nothing when the
// operator chose with GOGC (getenv reads the environment). stop ends the
// tuning and leaves the last target in place.
func Tune(getenv func(string) string, percent int, minHeap uint64) (stop func()) {
	t := start(getenv, percent, minHeap, debug.SetGCPercent, heapMetrics())
	if t == nil {
		return func() {}
	}
	return t.stop
}

// heapMetrics returns the reader of the runtime's live heap and scan
// work (the live heap, the goroutine stacks and the globals) that the
// last collection left; its caller serializes its calls.
func heapMetrics() func() (live, scan uint64) {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"}}
	return func() (uint64, uint64) {
		metrics.Read(sample)
		live := sample[0].Value.Uint64()
		return live, live + sample[1].Value.Uint64() + sample[2].Value.Uint64()
	}
}

// start starts a tuner that reads the heap with heap and sets the target
// with set (heapMetrics and debug.SetGCPercent but in a test); nil when
// the operator chose with GOGC.
func start(getenv func(string) string, percent int, minHeap uint64, set func(int) int, heap func() (live, scan uint64)) *gcTuner {
	if getenv("GOGC") != "" {
		return nil
	}
	t := &gcTuner{percent: percent, minHeap: minHeap, set: set, heap: heap}
	t.tune()
	t.arm()
	return t
}

// gcTuner sets the target after each collection: a cleanup of an object
// dropped at once runs after the collection that frees it, and arms the
// next.
type gcTuner struct {
	percent int
	minHeap uint64
	set     func(int) int
	heap    func() (live, scan uint64)
	mu      sync.Mutex
	last    int
	stopped bool
	// armed counts the cleanups armed.
	armed int
}

// sentinel is dropped at once; its cleanup marks a collection. It holds
// a pointer so that it is never a tiny allocation, whose cleanup may not
// run.
type sentinel struct {
	_ *int
	_ [2]uint64
}

func (t *gcTuner) arm() {
	t.mu.Lock()
	t.armed++
	t.mu.Unlock()
	runtime.AddCleanup(new(sentinel), (*gcTuner).collected, t)
}

// collected runs after a collection: it sets the target and arms the
// next, until stop.
func (t *gcTuner) collected() {
	t.mu.Lock()
	stopped := t.stopped
	t.mu.Unlock()
	if !stopped {
		t.tune()
		t.arm()
	}
}

func (t *gcTuner) stop() {
	t.mu.Lock()
	t.stopped = true
	t.mu.Unlock()
}

// tune sets the target for the live heap the last collection left.
func (t *gcTuner) tune() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	live, scan := t.heap()
	p := gcPercentFor(live, scan, t.percent, t.minHeap)
	if p != t.last {
		t.set(p)
		t.last = p
	}
}

// maxGCPercent bounds the target of a nearly empty heap.
const maxGCPercent = 100_000

// gcPercentFor returns the target that lets a heap of live bytes grow to
// minHeap, and at least percent. The runtime's goal is live plus percent
// of scan (the live heap, the goroutine stacks and the globals).
func gcPercentFor(live, scan uint64, percent int, minHeap uint64) int {
	if live == 0 || scan == 0 || live >= minHeap {
		return percent
	}
	p := int((minHeap - live) * 100 / scan)
	return min(max(p, percent), maxGCPercent)
}
