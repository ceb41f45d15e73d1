package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/fencefs/fencefs/internal/testexe"
)

// TestRipgrepSlots runs eight greps at once on two Sets sharing one
// slot, through a stand-in for rg that notes when two of it run at once:
// none do, and every grep answers. With the slot held elsewhere, a grep
// waits for it only until its context's deadline.
func TestRipgrepSlots(t *testing.T) {
	needRG(t)
	real, _ := exec.LookPath("rg")
	dir := t.TempDir()
	lock, overlap := filepath.Join(dir, "lock"), filepath.Join(dir, "overlap")
	fake := filepath.Join(dir, "rg")
	script := fmt.Sprintf("#!/bin/sh\nPATH=/usr/bin:/bin\nmkdir %[1]s 2>/dev/null || touch %[2]s\n%[3]s \"$@\"\nrc=$?\nrmdir %[1]s\nexit $rc\n", lock, overlap, real)
	testexe.Write(t, fake, script)
	fx := localFixture(t)
	for i := range 20 {
		fx.put(t, fmt.Sprintf("d/f%02d.txt", i), "needle\n")
	}
	slots := NewRipgrepSlots(1)
	sets := []*Set{
		newSet(t, fx.b, Options{Tools: AllTools(), RipgrepPath: fake, RipgrepSlots: slots}),
		newSet(t, fx.b, Options{Tools: AllTools(), RipgrepPath: fake, RipgrepSlots: slots}),
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			out, err := sets[i%2].Call(context.Background(), nameGrep, json.RawMessage(`{"pattern":"needle"}`))
			if err == nil && countLines(out) != 20 {
				err = fmt.Errorf("%d lines:\n%s", countLines(out), out)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(overlap); err == nil {
		t.Error("two ripgrep processes ran at once with one slot")
	}

	if err := slots.sem.Acquire(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := sets[0].Call(ctx, nameGrep, json.RawMessage(`{"pattern":"needle"}`))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("grep waiting for a slot past its deadline: %v, want context.DeadlineExceeded", err)
	}
	slots.sem.Release(1)
	wantEqual(t, ok(t, sets[1], nameGrep, "pattern", "needle", "path", "d/f00.txt"), "d/f00.txt:1:needle")
}

// TestRipgrepSlotsDefault: a Set has a bound of its own, of one process
// per CPU, unless it is given one.
func TestRipgrepSlotsDefault(t *testing.T) {
	fx := localFixture(t)
	s := newSet(t, fx.b, Options{})
	if got := s.opts.RipgrepSlots.Size(); got != runtime.NumCPU() {
		t.Errorf("default slots %d, want %d", got, runtime.NumCPU())
	}
	if got := NewRipgrepSlots(3).Size(); got != 3 {
		t.Errorf("NewRipgrepSlots(3).Size() = %d", got)
	}
}
