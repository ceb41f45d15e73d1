//go:build unix

package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/fencefs/fencefs/internal/testexe"
)

// TestRipgrepSlotsRunning: Running counts the ripgrep process while it
// runs, and not once it ended. The stand-in for rg opens one FIFO when it
// starts and reads another before it goes on, so the test knows, without
// waiting on a clock, that the process is running.
func TestRipgrepSlotsRunning(t *testing.T) {
	needRG(t)
	real, _ := exec.LookPath("rg")
	dir := t.TempDir()
	started, proceed := filepath.Join(dir, "started"), filepath.Join(dir, "proceed")
	for _, f := range []string{started, proceed} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Skipf("no FIFOs here: %v", err)
		}
	}
	fake := filepath.Join(dir, "rg")
	script := fmt.Sprintf("#!/bin/sh\nPATH=/usr/bin:/bin\necho >%s\nread x <%s\nexec %s \"$@\"\n", started, proceed, real)
	testexe.Write(t, fake, script)
	fx := localFixture(t)
	fx.put(t, "f.txt", "needle\n")
	slots := NewRipgrepSlots(2)
	s := newSet(t, fx.b, Options{Tools: AllTools(), RipgrepPath: fake, RipgrepSlots: slots})
	if n := slots.Running(); n != 0 {
		t.Fatalf("Running %d before any grep", n)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Call(context.Background(), nameGrep, json.RawMessage(`{"pattern":"needle"}`))
		done <- err
	}()
	data, err := os.ReadFile(started) // returns once the process wrote to it
	if err != nil || len(data) == 0 {
		t.Fatalf("reading the start FIFO: %q, %v", data, err)
	}
	if n := slots.Running(); n != 1 {
		t.Errorf("Running %d while one ripgrep runs", n)
	}
	if err := os.WriteFile(proceed, []byte("go\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := slots.Running(); n != 0 {
		t.Errorf("Running %d after the grep", n)
	}
}
