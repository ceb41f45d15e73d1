package security

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fencefs/fencefs/tools"
)

// swapFiles is how many files stand before the one swapped for a FIFO,
// so that ripgrep is still busy with them when the swap lands.
const swapFiles = 1500

// fifoSwapLayout fills ws/many with files that all match, sorted before
// zz-last.txt, the file swapped for a FIFO while grep runs.
func fifoSwapLayout(s secrets) layout {
	l := baseLayout(s)
	body := strings.Repeat("filler line without the word\n", 100) + "needle\n"
	for i := range swapFiles {
		l[fmt.Sprintf("ws/many/f%04d.txt", i)] = file(body)
	}
	l["ws/many/zz-last.txt"] = file("needle\n")
	return l
}

// watchNames calls fn, in a goroutine, with the name of every entry of
// dir that an inotify event of mask reports, until fn returns true or the
// test ends.
func watchNames(t *testing.T, dir string, mask uint32, fn func(name string) bool) {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := unix.InotifyAddWatch(fd, dir, mask); err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "inotify")
	t.Cleanup(func() { f.Close() })
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			if err != nil {
				return
			}
			for off := 0; off+unix.SizeofInotifyEvent <= n; {
				ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
				name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)]), "\x00")
				off += unix.SizeofInotifyEvent + int(ev.Len)
				if fn(name) {
					return
				}
			}
		}
	}()
}

// swapOnFirstOpen replaces dir/zz-last.txt by a FIFO as soon as a file of
// dir is opened (ripgrep has then listed the directory, and the file is
// regular in its listing), and closes the returned channel once it has.
func swapOnFirstOpen(t *testing.T, dir string) <-chan struct{} {
	t.Helper()
	swapped := make(chan struct{})
	watchNames(t, dir, unix.IN_OPEN, func(name string) bool {
		if !strings.HasPrefix(name, "f0") {
			return false
		}
		tmp := filepath.Join(dir, "fifo.tmp")
		err := syscall.Mkfifo(tmp, 0o644)
		if err == nil {
			err = os.Rename(tmp, filepath.Join(dir, "zz-last.txt"))
		}
		if err != nil {
			t.Errorf("swapping in the FIFO: %v", err)
		}
		close(swapped)
		return true
	})
	return swapped
}

// TestFIFOSwappedUnderGrep replaces a regular file by a FIFO after
// ripgrep listed its directory and before it opens the file: the grep
// still answers, well before ripgrep's timeout, with the matches of the
// regular files and nothing of the FIFO, because a ripgrep waiting on a
// FIFO is stopped and the built-in engine, which never opens a special
// file, searches again.
func TestFIFOSwappedUnderGrep(t *testing.T) {
	forWorlds(t, []string{kindLocal, kindMounted}, fifoSwapLayout, func(t *testing.T, w *world) {
		// The timeout is the bound the call must beat, not a measure.
		s := w.set(t, tools.Options{RipgrepTimeout: 25 * time.Second, MaxSearchResults: 10 * swapFiles})
		dir := filepath.Join(w.hostRoot, "many")
		// A round whose swap lands after ripgrep read the file shows it
		// and proves nothing; rounds go on until two met the FIFO.
		hits := 0
		for round := 0; round < 8 && hits < 2; round++ {
			swapped := swapOnFirstOpen(t, dir)
			out, err := call(t, s, grepTool, map[string]any{"pattern": "needle", "path": "many"})
			select {
			case <-swapped:
			case <-time.After(cmdDeadline):
				t.Fatalf("round %d: grep opened no file of the directory: %q, %v", round, clip(out), err)
			}
			if err != nil {
				t.Fatalf("round %d: grep with a FIFO swapped in: %v", round, err)
			}
			want := swapFiles
			if strings.Contains(out, "zz-last.txt:1:needle") {
				want++ // read before the swap
			} else {
				hits++
			}
			if got := strings.Count(out, "needle"); got != want {
				t.Errorf("round %d: %d matches, want %d:\n%s", round, got, want, clip(out))
			}
			last := filepath.Join(dir, "zz-last.txt")
			if err := os.Remove(last); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(last, []byte("needle\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if hits == 0 {
			t.Fatalf("no round swapped the FIFO in before ripgrep read the file; the test proved nothing")
		}
	})
}
