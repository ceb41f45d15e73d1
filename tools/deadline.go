package tools

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// callContext is a tool call's context under Options.CallTimeout. Most
// calls take microseconds and only ever ask Err, so the deadline is kept
// as a time compared on each Err, and the timer a channel needs is
// started only when something asks for Done (a wait, a child context, a
// process) or Err has been asked often: a short call that never waits
// costs no timer.
type callContext struct {
	parent   context.Context
	deadline time.Time

	mu sync.Mutex
	// timed is the timer-backed context, made on the first Done, or by
	// the Err that finds the deadline passed (so Done and context.Cause
	// agree with Err from then on).
	timed atomic.Pointer[timedContext]
	// released is set when the call has returned.
	released atomic.Bool
	// polls counts the Err calls that read the clock.
	polls atomic.Int32
}

// timedContext is callContext's timer-backed form.
type timedContext struct {
	context.Context
	cancel context.CancelFunc
}

// newCallContext returns parent bounded by timeout, whose expiry has
// errCallDeadline as its cause. Its release method ends it, as
// context.WithTimeout's cancel does.
func newCallContext(parent context.Context, timeout time.Duration) *callContext {
	return &callContext{parent: parent, deadline: time.Now().Add(timeout)}
}

// Deadline is the call's own: it is built only when it comes before the
// parent's.
func (c *callContext) Deadline() (time.Time, bool) { return c.deadline, true }

// Done starts the timer, once.
func (c *callContext) Done() <-chan struct{} { return c.timedCtx().Done() }

// Err is the parent's error, context.DeadlineExceeded once the deadline
// has passed, or context.Canceled once the call has returned.
func (c *callContext) Err() error {
	if t := c.timed.Load(); t != nil {
		return t.Err()
	}
	if err := c.parent.Err(); err != nil {
		return err
	}
	if c.polls.Add(1) <= maxClockPolls && time.Now().Before(c.deadline) && !c.released.Load() {
		return nil
	}
	return c.timedCtx().Err()
}

// maxClockPolls is how many Err calls read the clock before the timer
// starts: a short call asks a few times, while a walk that asks for
// every entry is better served by the timer's one atomic load than by a
// clock read each time.
const maxClockPolls = 64

// Value is the parent's, or the timed context's once made (which answers
// context.Cause with errCallDeadline after the deadline).
func (c *callContext) Value(key any) any {
	if t := c.timed.Load(); t != nil {
		return t.Value(key)
	}
	return c.parent.Value(key)
}

// expired reports that the call's own deadline ended it, not the
// parent's context.
func (c *callContext) expired() bool {
	return c.parent.Err() == nil && !time.Now().Before(c.deadline)
}

func (c *callContext) timedCtx() *timedContext {
	if t := c.timed.Load(); t != nil {
		return t
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.timed.Load(); t != nil {
		return t
	}
	ctx, cancel := context.WithDeadlineCause(c.parent, c.deadline, errCallDeadline)
	if c.released.Load() {
		// Asked after the call returned: the context is over.
		cancel()
	}
	t := &timedContext{Context: ctx, cancel: cancel}
	c.timed.Store(t)
	return t
}

// release stops the timer if one was started. A Done asked for later
// (by something the call left behind) finds the context cancelled.
func (c *callContext) release() {
	c.mu.Lock()
	c.released.Store(true)
	t := c.timed.Load()
	c.mu.Unlock()
	if t != nil {
		t.cancel()
	}
}
