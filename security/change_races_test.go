package security

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/fencefs/fencefs/tools"
)

// changeRaceSteps is one round of the change tools below the directory
// d, which the swapper exchanges with a link to the outside, where the
// same names exist (sub, sub/g.txt): a redirected removal or rename would
// take an outside file away or rename an outside directory. Each step
// leaves what the next needs when d was the real directory all along.
var changeRaceSteps = []struct {
	tool string
	args map[string]any
}{
	{copyFile, map[string]any{"source": "a.txt", "destination": "d/sub/g.txt", "overwrite": true}},
	{deleteFile, map[string]any{"path": "d/sub/g.txt"}},
	{moveFile, map[string]any{"source": "d/sub", "destination": "d/sub2"}},
	{moveFile, map[string]any{"source": "d/sub2", "destination": "d/sub"}},
	{copyFile, map[string]any{"source": "a.txt", "destination": "d/x.txt", "overwrite": true}},
	{moveFile, map[string]any{"source": "d/x.txt", "destination": "d/f.txt", "overwrite": true}},
}

// TestChangeToolRaces runs delete_file, move_file and copy_file, thousands
// of times, on paths below a directory that is exchanged with a link to
// the outside (RENAME_EXCHANGE in a tight loop): every removal and rename
// works on the descriptor of the parent directory it checked, so a lost
// race is a refusal, never a file removed, moved or written outside, and
// never a fatal error.
func TestChangeToolRaces(t *testing.T) {
	forWorlds(t, []string{kindLocal, kindMounted}, raceLayout, func(t *testing.T, w *world) {
		outside := filepath.Join(filepath.Dir(w.hostRoot), "outside")
		before := snapLocal(t, outside)
		s := w.set(t, tools.Options{Tools: tools.AllTools()})
		swaps := swapLoop(t, w.hostRoot)
		ctx, cancel := context.WithTimeout(t.Context(), raceBudget)
		defer cancel()
		calls, oks := 0, 0
		for calls < raceCalls && ctx.Err() == nil {
			step := changeRaceSteps[calls%len(changeRaceSteps)]
			raw, _ := json.Marshal(step.args)
			callCtx, cancelCall := context.WithTimeout(t.Context(), callTimeout)
			out, err := s.Call(callCtx, step.tool, raw)
			cancelCall()
			calls++
			label := w.kind + " " + step.tool + " " + string(raw)
			switch {
			case err == nil:
				oks++
			case !tools.IsRetry(err):
				t.Fatalf("%s: fatal error %v", label, err)
			}
			errText := ""
			if err != nil {
				errText = err.Error()
			}
			w.checkLeaks(t, label, "d", out+"\n"+errText)
		}
		n := swaps()
		t.Logf("%d calls (%d succeeded) against %d swaps", calls, oks, n)
		if n == 0 || oks == 0 {
			t.Fatalf("the race did not run: %d swaps, %d successful calls", n, oks)
		}
		if d := before.diff(snapLocal(t, outside)); len(d) > 0 {
			t.Errorf("the outside changed: %q", d)
		}
	})
}
