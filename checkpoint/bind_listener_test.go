package checkpoint_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/fencefs/fencefs/checkpoint"
	"github.com/fencefs/fencefs/memfs"
	"github.com/fencefs/fencefs/tools"
)

// TestBindAfterInnerListeners: a change listener added inside the bound
// context (an approval asking the user, as mcpserver adds inside a
// Wrap) runs before the journal; a change it cancels is not journaled,
// one it lets through is, with its after-state.
func TestBindAfterInnerListeners(t *testing.T) {
	ctx := context.Background()
	j, set := memJournal(t)
	for _, c := range []struct {
		path   string
		accept bool
	}{{"declined.txt", false}, {"accepted.txt", true}} {
		cctx := tools.WithChangeListener(j.Bind(ctx), func(_ context.Context, req *tools.ChangeRequest) error {
			if !c.accept {
				req.Cancel("the user declined the change")
			}
			return nil
		})
		args, _ := json.Marshal(map[string]string{"path": c.path, "content": "x"})
		if _, err := set.Call(cctx, "write_file", args); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	cps := j.Checkpoints()
	if len(cps) != 1 || cps[0].Path != "accepted.txt" || cps[0].Changes[0].After == nil {
		t.Fatalf("checkpoints: %+v, want the accepted write alone, with its after-state", cps)
	}
}

// TestBindBuildsNoDiff: the journal reads no diff, so an edit it alone
// hears (with a listener that reads none either) is journaled without a
// diff being built; one listener that reads diffs gets it.
func TestBindBuildsNoDiff(t *testing.T) {
	ctx := context.Background()
	j, set := memJournal(t)
	if _, err := set.Call(ctx, "write_file", json.RawMessage(`{"path":"f.txt","content":"a\n"}`)); err != nil {
		t.Fatal(err)
	}
	var diffs []string
	hear := func(_ context.Context, req *tools.ChangeRequest) error {
		diffs = append(diffs, req.Diff)
		return nil
	}
	edits := []json.RawMessage{
		json.RawMessage(`{"path":"f.txt","old_text":"a","new_text":"b"}`),
		json.RawMessage(`{"path":"f.txt","old_text":"b","new_text":"c"}`),
	}
	for i, reads := range []bool{false, true} {
		cctx := tools.WithChangeListener(j.Bind(ctx), hear, tools.ReadsNoDiff)
		if reads {
			cctx = tools.WithChangeListener(cctx, func(context.Context, *tools.ChangeRequest) error { return nil })
		}
		if _, err := set.Call(cctx, "edit_file", edits[i]); err != nil {
			t.Fatal(err)
		}
	}
	if len(diffs) != 2 || diffs[0] != "" || diffs[1] == "" {
		t.Errorf("diffs heard %q, want none beside the journal alone and one beside a listener that reads it", diffs)
	}
	if err := j.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(j.Checkpoints()); n != 2 {
		t.Errorf("%d checkpoints, want the two edits'", n)
	}
}

// memJournal opens a journal of a memfs namespace in another memfs, and
// every tool over the namespace.
func memJournal(t *testing.T) (*checkpoint.Journal, *tools.Set) {
	t.Helper()
	ns := memfs.New()
	j, err := checkpoint.Open(context.Background(), ns, memfs.New(), checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	set, err := tools.New(ns, tools.Options{Tools: tools.AllTools()})
	if err != nil {
		t.Fatal(err)
	}
	return j, set
}
