package tools

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestCallContext checks the call deadline's context against what
// context.WithTimeoutCause promises, whether or not anything asked for
// Done before the deadline: Err, Done, context.Cause, children, and the
// parent's cancellation.
func TestCallContext(t *testing.T) {
	const timeout = 50 * time.Millisecond
	tests := []struct {
		name string
		// before runs on the context before the deadline passes.
		before func(*callContext) context.Context
	}{
		{"only Err", func(c *callContext) context.Context { return c }},
		{"Done asked early", func(c *callContext) context.Context { c.Done(); return c }},
		{"child context", func(c *callContext) context.Context {
			child, cancel := context.WithCancel(c)
			t.Cleanup(cancel)
			return child
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCallContext(context.Background(), timeout)
			defer c.release()
			if dl, ok := c.Deadline(); !ok || time.Until(dl) > timeout {
				t.Fatalf("Deadline %v %v, want within %v", dl, ok, timeout)
			}
			ctx := tt.before(c)
			if err := ctx.Err(); err != nil {
				t.Fatalf("Err %v before the deadline", err)
			}
			if c.expired() {
				t.Fatal("expired before the deadline")
			}
			select {
			case <-ctx.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("Done not closed 10s after a 50ms deadline")
			}
			if err := ctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Err %v after the deadline", err)
			}
			if cause := context.Cause(ctx); cause != errCallDeadline {
				t.Fatalf("Cause %v, want errCallDeadline", cause)
			}
			if !c.expired() {
				t.Fatal("not expired after the deadline")
			}
		})
	}
}

// TestCallContextPolled checks that a call that only polls Err sees the
// deadline without a timer, and that Done, asked afterwards, is closed.
func TestCallContextPolled(t *testing.T) {
	c := newCallContext(context.Background(), time.Millisecond)
	defer c.release()
	for c.Err() == nil {
		if time.Until(c.deadline) < -10*time.Second {
			t.Fatal("Err still nil 10s after the deadline")
		}
	}
	if c.timed.Load() == nil {
		t.Fatal("no timed context after Err reported the deadline")
	}
	select {
	case <-c.Done():
	default:
		t.Fatal("Done open after Err reported the deadline")
	}
	if cause := context.Cause(c); cause != errCallDeadline {
		t.Fatalf("Cause %v, want errCallDeadline", cause)
	}
}

// TestCallContextParent checks that the parent's cancellation reaches the
// call, with the parent's cause, and is not taken for the call's deadline.
func TestCallContextParent(t *testing.T) {
	for _, early := range []bool{false, true} {
		parent, cancel := context.WithCancelCause(context.Background())
		c := newCallContext(parent, time.Hour)
		if early {
			c.Done()
		}
		stop := errors.New("client went away")
		cancel(stop)
		if err := c.Err(); !errors.Is(err, context.Canceled) {
			t.Errorf("early %v: Err %v, want context.Canceled", early, err)
		}
		select {
		case <-c.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("early %v: Done not closed after the parent's cancel", early)
		}
		if cause := context.Cause(c); cause != stop {
			t.Errorf("early %v: Cause %v, want the parent's", early, cause)
		}
		if c.expired() {
			t.Errorf("early %v: the parent's cancel taken for the call's deadline", early)
		}
		c.release()
	}
}

// TestCallContextReleased checks that what a call leaves behind sees the
// context end when the call returns, as after a WithTimeout's cancel.
func TestCallContextReleased(t *testing.T) {
	for _, early := range []bool{false, true} {
		c := newCallContext(context.Background(), time.Hour)
		if early {
			c.Done()
		}
		c.release()
		if err := c.Err(); !errors.Is(err, context.Canceled) {
			t.Errorf("early %v: Err %v after release, want context.Canceled", early, err)
		}
		select {
		case <-c.Done():
		default:
			t.Errorf("early %v: Done open after release", early)
		}
	}
}

// BenchmarkCallContext compares a call's context made and released with
// one Err, as a short call uses it, against context.WithTimeoutCause.
func BenchmarkCallContext(b *testing.B) {
	ctx := context.Background()
	b.Run("callContext", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c := newCallContext(ctx, time.Minute)
			_ = c.Err()
			c.release()
		}
	})
	b.Run("WithTimeoutCause", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c, cancel := context.WithTimeoutCause(ctx, time.Minute, errCallDeadline)
			_ = c.Err()
			cancel()
		}
	})
}

// TestCallContextManyPolls checks that a call asking Err often gets the
// timer (one atomic load per Err from then on) and still runs until its
// deadline.
func TestCallContextManyPolls(t *testing.T) {
	c := newCallContext(context.Background(), time.Hour)
	defer c.release()
	for i := range maxClockPolls {
		if err := c.Err(); err != nil {
			t.Fatalf("Err %v at poll %d", err, i)
		}
	}
	if c.timed.Load() != nil {
		t.Fatalf("timer started within %d polls", maxClockPolls)
	}
	if err := c.Err(); err != nil {
		t.Fatalf("Err %v after the timer started", err)
	}
	if c.timed.Load() == nil {
		t.Fatalf("no timer after %d polls", maxClockPolls+1)
	}
}

// TestEndlessStreamsEndByTheCallDeadline reads streams that never end,
// whose reader ignores the context, under a short CallTimeout and no
// deadline of the caller's: nothing waits on Done there, so only the
// deadline's clock ends the call, which must stop by it with the
// retry that names the limit (ReadFile, for resources: with the
// context's error).
func TestEndlessStreamsEndByTheCallDeadline(t *testing.T) {
	const timeout = 200 * time.Millisecond
	for _, tt := range []struct{ name, chunk string }{
		{"read_file", "y\n"},
		{"read_file", "yyyyyyyy"},
		{"file_info", "y\n"},
		{"ReadFile", "y\n"},
	} {
		t.Run(tt.name+"/"+tt.chunk[:2], func(t *testing.T) {
			st := &stream{chunk: tt.chunk, end: 1 << 50}
			s := newSet(t, newStreamFS(map[string]*stream{"f": st}), Options{CallTimeout: timeout})
			start := time.Now()
			var err error
			if tt.name == "ReadFile" {
				_, err = s.ReadFile(context.Background(), "f", 1<<50)
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("ReadFile: %v; want the deadline's error", err)
				}
			} else {
				_, err = s.Call(context.Background(), tt.name, args(t, "path", "f"))
				if !IsRetry(err) || !strings.HasPrefix(err.Error(), "The call did not finish within 200ms") {
					t.Errorf("%s: %v; want the call deadline's retry", tt.name, err)
				}
			}
			if took := time.Since(start); took > timeout+5*time.Second {
				t.Errorf("ended %v after a %v deadline", took, timeout)
			}
		})
	}
}
