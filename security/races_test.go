package security

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fencefs/fencefs/tools"
)

// Bounds of the race runs: each tool is called until it made raceCalls
// calls or raceBudget passed, whichever comes first.
const (
	raceCalls  = 2000
	raceBudget = 1500 * time.Millisecond
)

// raceLayout is the race fixture: the same names inside the root and in
// the outside directory, so that a redirected access would find a file
// where it expects one. "d" and "f.txt" are swapped with "d-alt" and
// "f-alt" (links to the outside) while the tools run.
func raceLayout(s secrets) layout {
	canary := file(s.tok + "\n")
	return layout{
		"ws/a.txt":                file("hello inside\n"),
		"ws/d/f.txt":              file("inside\n"),
		"ws/d/sub/g.txt":          file("inside g\n"),
		"ws/f.txt":                file("inside\n"),
		"ws/d-alt":                link("@/outside"),
		"ws/f-alt":                link("@/outside/f.txt"),
		"outside/f.txt":           canary,
		"outside/sub/g.txt":       canary,
		"outside/only.txt":        canary,
		"outside/zz-" + s.nameTok: canary,
	}
}

// raceTargets are the paths every tool is aimed at while the swaps run.
var raceTargets = []string{"d/f.txt", "d", "d/sub/g.txt", "d/sub", "f.txt", ".", "d/new.txt", "d/sub/nd"}

// TestSwapRaces swaps a directory and a final component of the root with
// links to the outside (RENAME_EXCHANGE, in a tight loop) while every
// tool runs against them, thousands of times: no call may show a byte or
// a name of the outside, change anything there, or fail with a fatal
// error. The swaps race the check of a path against its use; the local
// backend's no-follow opens must make every lost race a refusal. grep's
// ripgrep opens by host path and can be sent outside; its lines must be
// caught by the check through the backend before they are shown.
func TestSwapRaces(t *testing.T) {
	// delete_file and move_file take the race targets away from the
	// swapper; TestChangeToolRaces races them on files they make.
	swapRaces(t, slices.DeleteFunc(tools.AllTools(), func(n string) bool { return n == deleteFile || n == moveFile }))
}

// swapRaces runs the swap races against the tools ts.
func swapRaces(t *testing.T, ts []string) {
	t.Helper()
	forWorlds(t, []string{kindLocal, kindMounted}, raceLayout, func(t *testing.T, w *world) {
		parent := filepath.Dir(w.hostRoot)
		outside := filepath.Join(parent, "outside")
		before := snapLocal(t, outside)
		s := w.set(t, tools.Options{})
		for _, tool := range ts {
			t.Run(tool, func(t *testing.T) {
				swaps := swapLoop(t, w.hostRoot)
				calls, oks := w.raceTool(t, s, tool)
				n := swaps()
				t.Logf("%s: %d calls (%d succeeded) against %d swaps", tool, calls, oks, n)
				if n == 0 {
					t.Fatal("no swap happened while the tool ran")
				}
			})
		}
		if d := before.diff(snapLocal(t, outside)); len(d) > 0 {
			t.Errorf("the outside changed: %q", d)
		}
	})
}

// swapLoop exchanges root/d with root/d-alt and root/f.txt with
// root/f-alt until the returned function is called, which waits for the
// loop to stop and returns the number of exchanges.
func swapLoop(t *testing.T, root string) func() int64 {
	t.Helper()
	var n atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	pairs := [][2]string{{"d", "d-alt"}, {"f.txt", "f-alt"}}
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			p := pairs[i%2]
			if err := unix.Renameat2(unix.AT_FDCWD, filepath.Join(root, p[0]), unix.AT_FDCWD, filepath.Join(root, p[1]), unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("RENAME_EXCHANGE %s: %v", p, err)
				return
			}
			n.Add(1)
		}
	})
	var once sync.Once
	done := func() int64 {
		once.Do(func() { close(stop); wg.Wait() })
		return n.Load()
	}
	t.Cleanup(func() { done() })
	return done
}

// raceTool calls tool against every race target in turn until raceCalls
// calls were made or raceBudget passed, checking each answer.
func (w *world) raceTool(t *testing.T, s *tools.Set, tool string) (calls, oks int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), raceBudget)
	defer cancel()
	for calls < raceCalls && ctx.Err() == nil {
		p := raceTargets[calls%len(raceTargets)]
		args := pathArgs(tool, p)
		if tool == writeFile {
			args["content"] = "inside\n"
		}
		raw, _ := json.Marshal(args)
		callCtx, cancelCall := context.WithTimeout(t.Context(), callTimeout)
		out, err := s.Call(callCtx, tool, raw)
		cancelCall()
		calls++
		label := w.kind + " " + tool + " " + string(raw)
		switch {
		case err == nil:
			oks++
		case !tools.IsRetry(err) && !pendingFatal(w.kind, tool, err):
			t.Errorf("%s: fatal error %v", label, err)
		}
		errText := ""
		if err != nil {
			errText = err.Error()
		}
		w.checkLeaks(t, label, p, out+"\n"+errText)
		if t.Failed() {
			return calls, oks
		}
	}
	return calls, oks
}
