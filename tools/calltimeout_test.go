//go:build linux

package tools

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestCallTimeout holds the lock a write of the local backend waits for,
// so that a write_file never finishes by itself: Options.CallTimeout ends
// it with a retry naming the limit, a negative CallTimeout leaves the
// bound to the caller's context, and the file is unchanged either way.
func TestCallTimeout(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
		ctx     time.Duration // the caller's deadline; 0 for none
		retry   string        // the retry's text, or "" for ctx's error
	}{
		{"own deadline", 200 * time.Millisecond, 0, "The call did not finish within 200ms and was stopped."},
		{"caller's deadline first", time.Hour, 200 * time.Millisecond, ""},
		{"no bound", -1, 200 * time.Millisecond, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := localFixture(t)
			fx.put(t, "a.txt", "old\n")
			fd, err := unix.Open(filepath.Clean(fx.dir), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			if err := unix.Flock(fd, unix.LOCK_EX); err != nil {
				t.Fatal(err)
			}
			s := newSet(t, fx.b, Options{CallTimeout: tt.timeout})
			ctx := context.Background()
			if tt.ctx > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.ctx)
				defer cancel()
			}
			_, err = s.Call(ctx, "write_file", args(t, "path", "a.txt", "content", "new\n"))
			switch {
			case tt.retry != "":
				if !IsRetry(err) || !strings.HasPrefix(err.Error(), tt.retry) || !errors.Is(err, KindTimeout) {
					t.Fatalf("error %v (kind %q), want a retry of KindTimeout starting %q", err, KindOf(err), tt.retry)
				}
			case !errors.Is(err, context.DeadlineExceeded) || IsRetry(err):
				t.Fatalf("error %v, want the caller's context.DeadlineExceeded", err)
			}
			if got := OutcomeOf(err); got != OutcomeTimedOut {
				t.Errorf("OutcomeOf(%v) = %s, want %s", err, got, OutcomeTimedOut)
			}
			if got := fx.mustGet(t, "a.txt"); got != "old\n" {
				t.Fatalf("a.txt holds %q after the call ended", got)
			}
		})
	}
}

func TestCallTimeoutDefault(t *testing.T) {
	s := newSet(t, newMemFS(), Options{})
	if s.opts.CallTimeout != DefaultCallTimeout {
		t.Fatalf("CallTimeout %v, want %v", s.opts.CallTimeout, DefaultCallTimeout)
	}
	for _, tool := range s.Tools() {
		if tool.timeout != DefaultCallTimeout {
			t.Errorf("%s: timeout %v", tool.Name, tool.timeout)
		}
	}
}
