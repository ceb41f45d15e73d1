package tools

import (
	"runtime"
	"testing"
	"time"

	"github.com/fencefs/fencefs/local"
)

// BenchmarkNewSet measures what one more tenant's tool set costs: the
// CPU and allocations of New over a local backend with the default
// tools, and the live heap each set keeps (live-B/set, measured over
// 1,000 sets kept alive after a collection, the backends included).
//
//	go test ./tools -run '^$' -bench 'NewSet' -benchmem
func BenchmarkNewSet(b *testing.B) {
	dir := b.TempDir()
	b.Run("new", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			lb, err := local.New(dir)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := New(lb, Options{}); err != nil {
				b.Fatal(err)
			}
			lb.Close()
		}
	})
	b.Run("live", func(b *testing.B) {
		const sets = 1000
		for b.Loop() {
			before := liveHeap()
			kept := make([]*Set, sets)
			for i := range kept {
				lb, err := local.New(dir)
				if err != nil {
					b.Fatal(err)
				}
				if kept[i], err = New(lb, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			after := liveHeap()
			b.ReportMetric(float64(after-before)/sets, "live-B/set")
			runtime.KeepAlive(kept)
		}
	})
}

// liveHeap collects and returns the bytes of live heap objects.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	time.Sleep(10 * time.Millisecond) // let finalizers of the last cycle run
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestSharedSchemasAreClipped checks that two Sets share one input schema
// and that appending to it cannot write into memory the other reads.
func TestSharedSchemasAreClipped(t *testing.T) {
	dir := t.TempDir()
	var sets [2]*Set
	for i := range sets {
		lb, err := local.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { lb.Close() })
		if sets[i], err = New(lb, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := sets[0].Tool(nameReadFile)
	b, _ := sets[1].Tool(nameReadFile)
	if &a.InputSchema[0] != &b.InputSchema[0] {
		t.Error("two Sets of the same options keep two copies of read_file's schema")
	}
	if a.Description != b.Description {
		t.Error("two Sets of the same options describe read_file differently")
	}
	if cap(a.InputSchema) != len(a.InputSchema) {
		t.Errorf("a shared schema has spare capacity (%d > %d) an append would write into", cap(a.InputSchema), len(a.InputSchema))
	}
}
