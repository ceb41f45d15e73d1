package server

import (
	"bytes"
	"context"
	"log/slog"
	"regexp"
	"testing"
	"time"

	"github.com/fencefs/fencefs/audit"
)

// logRecorder hands each record's message and head to a channel.
type logRecorder struct{ heads chan string }

func (r logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r logRecorder) Handle(_ context.Context, rec slog.Record) error {
	rec.Attrs(func(a slog.Attr) bool {
		if rec.Message == "audit head" && a.Key == "head" {
			r.heads <- a.Value.String()
		}
		return true
	})
	return nil
}
func (r logRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r logRecorder) WithGroup(string) slog.Handler      { return r }

// TestLogAuditHeads: the head is logged once it moved, and not again
// while it stays.
func TestLogAuditHeads(t *testing.T) {
	var buf bytes.Buffer
	l := audit.New(&buf, audit.Genesis)
	rec := logRecorder{heads: make(chan string, 16)}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	start := l.Head()
	go func() {
		LogAuditHeads(ctx, l, slog.New(rec), time.Millisecond, start)
		close(done)
	}()
	if err := l.Log(audit.Record{Time: time.Unix(1, 0).UTC(), Tool: "write_file", Outcome: audit.OutcomeOK}); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-rec.heads:
		if got != l.Head() || !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(got) {
			t.Errorf("logged head %q, want %q", got, l.Head())
		}
	case <-time.After(10 * time.Second): // a bound against a hang, not a measure
		t.Fatal("the moved head was not logged")
	}
	cancel()
	<-done
	select {
	case h := <-rec.heads:
		t.Errorf("the unchanged head was logged again: %q", h)
	default:
	}
}
