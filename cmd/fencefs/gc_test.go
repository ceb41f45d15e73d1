//go:build !fencefs_oneshot

package main

import (
	"runtime/debug"
	"testing"

	"github.com/fencefs/fencefs/internal/gctune"
)

func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }

	stop := tuneGC(getenv)
	got := debug.SetGCPercent(100)
	stop()
	if got < gctune.GCPercent {
		t.Errorf("GOGC unset: collector target %d, want at least %d", got, gctune.GCPercent)
	}
	env["GOGC"] = "50"
	debug.SetGCPercent(50)
	tuneGC(getenv)()
	if got := debug.SetGCPercent(100); got != 50 {
		t.Errorf("GOGC=50: collector target %d, want the operator's 50", got)
	}
}
