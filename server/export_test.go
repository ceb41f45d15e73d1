package server

import (
	"context"
	"time"
)

// WithSessionClock makes now the clock of the sessions' retention of the
// server built from cfg; the test runs the collection (CollectSessions).
func WithSessionClock(cfg *Config, now func() time.Time) { cfg.sessionClock = now }

// CollectSessions looks for an earlier process's sessions (the first
// time) and removes the storage of the ended sessions that are due.
func CollectSessions(ctx context.Context, s *Server) (int, error) {
	return s.collector.sweep(ctx)
}
