//go:build !fencefs_oneshot

package main

import (
	"log/slog"
	"runtime/debug"

	"github.com/fencefs/fencefs/internal/gctune"
	"github.com/fencefs/fencefs/server"
)

// tuneGC sets the collector of a long-running server (gctune.Tune:
// GOGC 400, and a heap that may reach 64 MiB between collections however
// small the live data), unless the operator chose with GOGC. Every MCP
// call allocates a few hundred KiB in the SDK's JSON decoding, most of it
// garbage at once: at Go's default of 100 the collector runs every few
// calls and costs a quarter of a read_file's CPU. stop ends the tuning.
func tuneGC(getenv func(string) string) (stop func()) {
	return gctune.Tune(getenv, gctune.GCPercent, gctune.MinHeap)
}

// limitMemory sets the soft memory limit of a long-running server (see
// server.MemoryLimit: GOMEMLIMIT, else --memory-limit, else most of the
// cgroup's limit) and says which, so that its heap stays bounded as its
// cached tenants grow while the collector's target stays high.
func limitMemory(getenv func(string) string, flag int64, logger *slog.Logger) {
	limit, source := server.MemoryLimit(getenv, flag)
	if limit > 0 {
		debug.SetMemoryLimit(limit)
	}
	if source != "" {
		logger.Debug("memory limit", "source", source, "bytes", debug.SetMemoryLimit(-1))
	}
}
