package tools

import (
	"context"
	"runtime"
	"sync/atomic"

	"golang.org/x/sync/semaphore"

	"github.com/fencefs/fencefs/tools/internal/rg"
)

// RipgrepSlots bounds how many ripgrep processes run at once, so that n
// parallel greps cannot hold n times ripgrep's memory. It is safe for
// concurrent use by any number of Sets.
type RipgrepSlots struct {
	sem *semaphore.Weighted
	n   int
	// running counts the slots held, for a server's metrics.
	running atomic.Int64
}

// NewRipgrepSlots returns a bound of n processes; n <= 0 means
// runtime.NumCPU().
func NewRipgrepSlots(n int) *RipgrepSlots {
	if n <= 0 {
		n = runtime.NumCPU()
	}
	return &RipgrepSlots{sem: semaphore.NewWeighted(int64(n)), n: n}
}

// Size returns the number of processes that may run at once.
func (r *RipgrepSlots) Size() int { return r.n }

// Running returns the number of ripgrep processes running now under r.
func (r *RipgrepSlots) Running() int { return int(r.running.Load()) }

// Acquire takes n slots, waiting until they are free or ctx ends; the
// ripgrep runner calls it before starting a process.
func (r *RipgrepSlots) Acquire(ctx context.Context, n int64) error {
	if err := r.sem.Acquire(ctx, n); err != nil {
		return err
	}
	r.running.Add(n)
	return nil
}

// Release gives back n slots Acquire took.
func (r *RipgrepSlots) Release(n int64) {
	r.running.Add(-n)
	r.sem.Release(n)
}

// RipgrepInstalled reports whether the ripgrep executable path (as in
// Options.RipgrepPath; "" means "rg" looked up in PATH) can be found.
// Without it, grep searches local disk with the built-in engine, as it
// does other storage, so a command can warn at start-up that the
// fallback is in use.
func RipgrepInstalled(path string) bool {
	return (&rg.Runner{Path: path}).Installed()
}
