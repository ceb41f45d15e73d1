package gctune

import (
	"runtime"
	"slices"
	"sync"
	"testing"
)

func TestGCPercentFor(t *testing.T) {
	const mib = 1 << 20
	cases := []struct {
		live, scan uint64
		want       int
	}{
		{0, 0, 400},                       // before the first collection
		{1, 1, maxGCPercent},              // bounded
		{4 * mib, 4 * mib, 1500},          // 4 + 4 * 15 = 64 MiB
		{4 * mib, 8 * mib, 750},           // stacks and globals count
		{3 * mib, 5 * mib, 1220},          // a small serve's
		{mib / 2, 2 * mib, 3175},          // a floor server's
		{12800 * 1024, 12800 * 1024, 412}, // 12.5 MiB: 400 would give 62.5 MiB
		{16 * mib, 16 * mib, 400},         // 16 * 5 = 80 MiB >= 64 MiB
		{64 * mib, 65 * mib, 400},         // large live data keeps GOGC
		{1024 * mib, 1030 * mib, 400},
	}
	for _, c := range cases {
		if got := gcPercentFor(c.live, c.scan, 400, 64*mib); got != c.want {
			t.Errorf("live %d, scan %d: %d, want %d", c.live, c.scan, got, c.want)
		}
	}
}

// fakeRuntime is the heap a tuner reads and the targets it sets, in
// place of the runtime's, so that a test neither reads the process's
// target (which the collector's cleanups change meanwhile) nor needs a
// large live heap.
type fakeRuntime struct {
	mu         sync.Mutex
	live, scan uint64
	set        []int
	// changed is signalled after each target set.
	changed chan struct{}
}

func newFakeRuntime() *fakeRuntime { return &fakeRuntime{changed: make(chan struct{}, 1)} }

func (f *fakeRuntime) heap() (uint64, uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.live, f.scan
}

func (f *fakeRuntime) setHeap(live, scan uint64) {
	f.mu.Lock()
	f.live, f.scan = live, scan
	f.mu.Unlock()
}

func (f *fakeRuntime) setGCPercent(p int) int {
	f.mu.Lock()
	f.set = append(f.set, p)
	f.mu.Unlock()
	select {
	case f.changed <- struct{}{}:
	default:
	}
	return 0
}

func (f *fakeRuntime) targets() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.set)
}

// TestTune: the target follows the live heap after each collection (a
// small heap gets a high target at once, a large one GCPercent after the
// next collection), stop ends the tuning, and GOGC leaves the
// operator's target alone.
func TestTune(t *testing.T) {
	const mib = 1 << 20
	f := newFakeRuntime()
	f.setHeap(4*mib, 4*mib)
	tr := start(func(string) string { return "" }, 400, 64*mib, f.setGCPercent, f.heap)
	if got := f.targets(); !slices.Equal(got, []int{1500}) {
		t.Fatalf("4 MiB live at the start: targets %v, want [1500]", got)
	}
	<-f.changed
	// The live heap grows past minHeap: the cleanup armed at the start
	// runs after the next collection, sets GCPercent and arms the next.
	f.setHeap(300*mib, 300*mib)
	runtime.GC()
	<-f.changed
	if got := f.targets(); !slices.Equal(got, []int{1500, 400}) {
		t.Fatalf("300 MiB live after a collection: targets %v, want [1500 400]", got)
	}
	// A collection after the heap shrank raises the target again (each
	// target is set once: the 400 above was not set twice).
	f.setHeap(8*mib, 8*mib)
	runtime.GC()
	<-f.changed
	if got := f.targets(); !slices.Equal(got, []int{1500, 400, 700}) {
		t.Fatalf("8 MiB live after a collection: targets %v, want [1500 400 700]", got)
	}
	// After stop, a collection's cleanup sets nothing and arms nothing.
	tr.stop()
	tr.mu.Lock()
	armed := tr.armed
	tr.mu.Unlock()
	f.setHeap(mib, mib)
	tr.collected()
	tr.mu.Lock()
	armedAfter := tr.armed
	tr.mu.Unlock()
	if got := f.targets(); !slices.Equal(got, []int{1500, 400, 700}) || armedAfter != armed {
		t.Errorf("after stop: targets %v, armed %d -> %d; want nothing set or armed", got, armed, armedAfter)
	}

	// GOGC set: no tuner, no target set.
	g := newFakeRuntime()
	if tr := start(func(k string) string {
		if k == "GOGC" {
			return "77"
		}
		return ""
	}, 400, 64*mib, g.setGCPercent, g.heap); tr != nil || len(g.targets()) != 0 {
		t.Errorf("GOGC=77: tuner %v, targets %v; want none", tr != nil, g.targets())
	}
}

// TestHeapMetrics: the runtime's metrics the tuner reads exist (an
// unknown name would read as KindBad and panic) and give a live heap
// within the scan work.
func TestHeapMetrics(t *testing.T) {
	runtime.GC()
	live, scan := heapMetrics()()
	if live == 0 || scan < live {
		t.Errorf("live %d, scan %d; want a live heap within the scan work", live, scan)
	}
}
