package checkpoint_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/checkpoint"
	"github.com/fencefs/fencefs/memfs"
	"github.com/fencefs/fencefs/tools"
)

// TestAdmit: every object the journal adds to its store is asked of
// Options.Admit first, with the call's context; a refusal cancels the
// change with its text (the file keeps its content, the store gains
// nothing more) and fails a restore before it changes anything.
func TestAdmit(t *testing.T) {
	ctx := context.Background()
	ns, store := memfs.New(), memfs.New()
	type key struct{}
	var asked, budget int64 = 0, 1 << 20
	j, err := checkpoint.Open(ctx, ns, store, checkpoint.Options{InlineBytes: -1, Admit: func(ctx context.Context, n int64) error {
		if ctx.Value(key{}) == nil {
			t.Error("Admit without the call's context")
		}
		if asked+n > budget {
			return errors.New("over budget")
		}
		asked += n
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	set, _ := tools.New(ns, tools.Options{})
	cctx := context.WithValue(ctx, key{}, true)
	call := func(args string) string {
		t.Helper()
		out, err := set.Call(j.Bind(cctx), "write_file", json.RawMessage(args))
		if err != nil {
			return err.Error()
		}
		return out
	}
	call(`{"path": "a.txt", "content": "` + strings.Repeat("a", 1000) + `"}`)
	if u := j.Usage(); asked != u.Bytes || u.Blobs != 0 || u.RecordCount != 1 {
		t.Fatalf("asked %d, usage %+v", asked, u)
	}
	// The overwrite's pre-image (1000 bytes, as an object) does not fit.
	budget = asked + 500
	out := call(`{"path": "a.txt", "content": "b"}`)
	if !strings.Contains(out, "over budget") {
		t.Errorf("refused write: %q", out)
	}
	if data, _ := backend.ReadFile(ctx, ns, "a.txt"); len(data) != 1000 {
		t.Errorf("a.txt after the refused write: %q", data)
	}
	if u := j.Usage(); asked != u.Bytes || u.RecordCount != 1 {
		t.Errorf("asked %d, usage %+v", asked, u)
	}
	// A restore's record does not fit either: nothing is restored.
	budget = asked
	if _, err := j.Restore(cctx, 0, checkpoint.RestoreOptions{}); !errors.As(err, new(*checkpoint.AdmitError)) {
		t.Errorf("restore over budget: %v", err)
	}
	if _, err := backend.Stat(ctx, ns, "a.txt"); err != nil {
		t.Errorf("a.txt after the refused restore: %v", err)
	}
}

// TestBeforeApply: a restore's BeforeApply hears the paths it is about
// to change; its refusal leaves every path and the journal as they were.
func TestBeforeApply(t *testing.T) {
	ctx := context.Background()
	ns, store := memfs.New(), memfs.New()
	j, err := checkpoint.Open(ctx, ns, store, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	set, _ := tools.New(ns, tools.Options{})
	for _, name := range []string{"a.txt", "b.txt"} {
		if _, err := set.Call(j.Bind(ctx), "write_file", json.RawMessage(`{"path": "`+name+`", "content": "x"}`)); err != nil {
			t.Fatal(err)
		}
	}
	before := len(j.Checkpoints())
	var heard []string
	_, err = j.Restore(ctx, 0, checkpoint.RestoreOptions{BeforeApply: func(_ context.Context, items []checkpoint.Item) error {
		for _, it := range items {
			heard = append(heard, it.Path)
		}
		return errors.New("the audit log could not be written")
	}})
	if !errors.As(err, new(*checkpoint.AdmitError)) || strings.Join(heard, " ") != "a.txt b.txt" {
		t.Fatalf("refused restore: %v, heard %q", err, heard)
	}
	if _, err := backend.Stat(ctx, ns, "a.txt"); err != nil {
		t.Errorf("a.txt after the refused restore: %v", err)
	}
	if n := len(j.Checkpoints()); n != before {
		t.Errorf("%d checkpoints after the refused restore, %d before", n, before)
	}
	res, err := j.Restore(ctx, 0, checkpoint.RestoreOptions{BeforeApply: func(context.Context, []checkpoint.Item) error { return nil }})
	if err != nil || len(res.Restored) != 2 {
		t.Errorf("restore: %v %+v", err, res)
	}
}
