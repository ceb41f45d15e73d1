package rg

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestFIFOEndsTheRun hands rg a FIFO by name, as a regular file it listed
// becomes when a FIFO is swapped in before rg opens it: the open (no
// writer) or the read (a writer that never writes) would hold rg until
// its timeout; instead the run ends with ErrSpecialFile long before it,
// and rg is gone.
func TestFIFOEndsTheRun(t *testing.T) {
	needRG(t)
	for _, writer := range []bool{false, true} {
		dir := tree(t, map[string]string{"a.txt": "foo\n"})
		fifo := filepath.Join(dir, "held")
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Fatal(err)
		}
		if writer {
			// A writer that holds the FIFO open and writes nothing; opened
			// non-blocking for reading first so that its own open does not
			// wait.
			rd, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
			if err != nil {
				t.Fatal(err)
			}
			wr, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			rd.Close()
			t.Cleanup(func() { wr.Close() })
		}
		// The timeout is the bound the watch must beat, not a measure.
		r := &Runner{Timeout: 30 * time.Second}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := r.Search(ctx, SearchQuery{Query: Query{Dir: dir, Paths: []string{"a.txt", "held"}}, Pattern: "foo"}, func(File) bool { return true })
		cancel()
		if !errors.Is(err, ErrSpecialFile) {
			t.Errorf("writer %v: Search over a FIFO = %v; want ErrSpecialFile", writer, err)
		}
	}
}

// TestFIFOWait: the kernel's FIFO waits are recognised, and the waits of
// ordinary work (writing rg's output, reading a file, a futex) are not.
func TestFIFOWait(t *testing.T) {
	for fn, want := range map[string]bool{
		"wait_for_partner": true, "anon_pipe_read": true, "pipe_read": true, "pipe_wait": true,
		"anon_pipe_write": false, "pipe_write": false, "futex_wait_queue": false, "0": false, "": false, "do_sys_poll": false,
	} {
		if got := fifoWait(fn); got != want {
			t.Errorf("fifoWait(%q) = %v, want %v", fn, got, want)
		}
	}
}
