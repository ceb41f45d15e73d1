package rg

import (
	"os"
	"strconv"
	"time"
)

// fifoCheck is how often a running rg is checked for a thread waiting on
// a FIFO; the first check comes after one interval, so a short run is
// never looked at.
const fifoCheck = 100 * time.Millisecond

// fifoWait reports whether a thread sleeping in the kernel function fn
// waits to open a FIFO that has no writer, or to read one that has
// nothing to read (the names of current and older kernels). rg reads no
// pipe of its own (its stdin is /dev/null), so a thread there waits on a
// FIFO in the tree.
func fifoWait(fn string) bool {
	switch fn {
	case "wait_for_partner", "fifo_open", "anon_pipe_read", "fifo_pipe_read", "pipe_read", "pipe_wait", "pipe_wait_readable":
		return true
	}
	return false
}

// watchFIFOs calls held once, and stops watching, when a thread of the
// process pid waits on a FIFO, as rg does when a regular file it listed
// is replaced by a FIFO before it opens it: rg skips the special files
// it lists, but opens the others by name, and such an open or read
// blocks until someone writes. stop ends the watch.
func watchFIFOs(pid int, held func()) (stop func()) {
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(fifoCheck)
		defer tick.Stop()
		dir := "/proc/" + strconv.Itoa(pid) + "/task"
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if waitsOnFIFO(dir) {
				held()
				return
			}
		}
	}()
	return func() { close(done) }
}

// waitsOnFIFO reports whether a thread listed in the /proc task
// directory dir sleeps waiting on a FIFO (see fifoWait).
func waitsOnFIFO(dir string) bool {
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return false // the process ended
	}
	for _, t := range tasks {
		wchan, err := os.ReadFile(dir + "/" + t.Name() + "/wchan")
		if err == nil && fifoWait(string(wchan)) {
			return true
		}
	}
	return false
}
