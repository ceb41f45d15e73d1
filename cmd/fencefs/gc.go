//go:build !fencefs_oneshot

package main

import (
	"log/slog"
	"runtime/debug"

	"github.com/fencefs/fencefs/server"
)

// serveGCPercent is the garbage collector's target when GOGC is unset.
// Every MCP call allocates a few hundred KiB in the SDK's JSON decoding
// (most of it garbage at once), while a server's live heap is a few MiB:
// at Go's default of 100 the collector runs every few calls and costs a
// quarter of a read_file's CPU. 400 lets the heap grow to five times the
// live data between collections (tens of MiB for a typical server) and
// halves the collector's share; GOGC and GOMEMLIMIT still decide when set.
const serveGCPercent = 400

// tuneGC sets the collector's target of a long-running server, unless
// the operator chose one with GOGC.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(serveGCPercent)
	}
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
