package testexe_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/fencefs/fencefs/internal/testexe"
)

// TestWriteWhileForking writes and runs scripts while other goroutines
// fork children, the situation in which a script written by this process
// fails to run with "text file busy".
func TestWriteWhileForking(t *testing.T) {
	dir := t.TempDir()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = exec.Command("/bin/true").Run()
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()
	for i := range 50 {
		p := filepath.Join(dir, "s"+string(rune('a'+i%26))+string(rune('a'+i/26)))
		testexe.Write(t, p, "#!/bin/sh\necho ok\n")
		out, err := exec.Command(p).Output()
		if err != nil || string(out) != "ok\n" {
			t.Fatalf("run %d: %q, %v", i, out, err)
		}
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != 0o755 {
			t.Fatalf("mode of %s: %v, %v", p, fi.Mode(), err)
		}
	}
}
