package gctune

import (
	"runtime"
	"runtime/debug"
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

// TestTune: the target follows the live heap after each collection (a
// small heap gets a high target, a large one GCPercent), GOGC leaves the
// operator's target alone, and stop ends the tuning.
func TestTune(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	const min = 256 << 20 // above this test binary's live heap
	stop := Tune(func(string) string { return "" }, 400, min)
	runtime.GC()
	runtime.GC()
	small := gcPercent()
	if small <= 400 {
		t.Fatalf("small live heap: target %d, want above 400", small)
	}
	big := make([]*[1 << 20]byte, 300) // 300 MiB live, above min
	for i := range big {
		big[i] = new([1 << 20]byte)
	}
	// A collection runs the cleanup that sets the next target; the
	// cleanup goroutine runs it after the collection, so collect until
	// it did (each collection queues one more).
	for i := 0; i < 100 && gcPercent() != 400; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	got := gcPercent()
	runtime.KeepAlive(big)
	if got != 400 {
		t.Fatalf("300 MiB live: target %d, want 400", got)
	}
	stop()
	debug.SetGCPercent(123)
	big = nil
	runtime.GC()
	runtime.GC()
	if got := gcPercent(); got != 123 {
		t.Errorf("after stop: target %d, want 123 left alone", got)
	}

	debug.SetGCPercent(77)
	Tune(func(k string) string {
		if k == "GOGC" {
			return "77"
		}
		return ""
	}, 400, min)()
	runtime.GC()
	if got := gcPercent(); got != 77 {
		t.Errorf("GOGC=77: target %d, want the operator's 77", got)
	}
}

// gcPercent returns the collector's target.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}
