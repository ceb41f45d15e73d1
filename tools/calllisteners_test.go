package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestCallListeners: the listeners of a call's context see the call's
// change requests after the Set's own listener and only when it let the
// change through, may cancel with the library's texts, and see its events.
func TestCallListeners(t *testing.T) {
	tests := []struct {
		name      string
		own       string // the Set listener's cancel reason; "" lets through
		call      string // the context listener's cancel reason
		want      string
		wantAsked bool
		wantFile  string
	}{
		{"both let through", "", "", "Wrote 1 char (1 line) to f.txt.", true, "b"},
		{"context cancels", "", "the user declined", "['f.txt' was not written: the user declined]", true, "a\n"},
		{"set cancels first", "policy says no", "", "['f.txt' was not written: policy says no]", false, "a\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := localFixture(t)
			fx.put(t, "f.txt", "a\n")
			s := newSet(t, fx.b, Options{NoContentHashes: true, OnChangeRequest: func(_ context.Context, r *ChangeRequest) error {
				if tt.own != "" {
					r.Cancel(tt.own)
				}
				return nil
			}})
			asked := false
			rec := &recorder{}
			ctx := WithChangeListener(context.Background(), func(_ context.Context, r *ChangeRequest) error {
				asked = true
				if !strings.Contains(r.Diff, "+b") {
					t.Errorf("diff %q lacks the new line", r.Diff)
				}
				if tt.call != "" {
					r.Cancel(tt.call)
				}
				return nil
			})
			ctx = WithEventListener(ctx, rec.on)
			out, err := s.Call(ctx, "write_file", args(t, "path", "f.txt", "content", "b"))
			if err != nil {
				t.Fatal(err)
			}
			wantEqual(t, out, tt.want)
			if asked != tt.wantAsked {
				t.Errorf("context listener asked: %v, want %v", asked, tt.wantAsked)
			}
			wantEqual(t, fx.mustGet(t, "f.txt"), tt.wantFile)
			wantKinds := ""
			if tt.wantFile == "b" {
				wantKinds = "file_written"
			}
			wantEqual(t, rec.kinds(), wantKinds)
		})
	}
}

// TestCallListenersChain: listeners added to a context that already has
// some run after them, in order; every event listener hears every event,
// the first change listener to cancel or fail stops the change and the
// ones after it, and a context derived twice from one parent keeps its
// two chains apart.
func TestCallListenersChain(t *testing.T) {
	tests := []struct {
		name     string
		cancelAt int // the change listener that cancels (1-based); 0 none
		failAt   int // the change listener that fails; 0 none
		want     string
		asked    string
		wantFile string
	}{
		{"all let through", 0, 0, "Wrote 1 char (1 line) to f.txt.", "123", "b"},
		{"second cancels", 2, 0, "['f.txt' was not written: no 2]", "12", "a\n"},
		{"first fails", 0, 1, "", "1", "a\n"},
		{"last cancels", 3, 0, "['f.txt' was not written: no 3]", "123", "a\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := localFixture(t)
			fx.put(t, "f.txt", "a\n")
			s := newSet(t, fx.b, Options{NoContentHashes: true})
			var asked, heard strings.Builder
			ctx := context.Background()
			for i := 1; i <= 3; i++ {
				ctx = WithChangeListener(ctx, func(_ context.Context, r *ChangeRequest) error {
					fmt.Fprint(&asked, i)
					if tt.failAt == i {
						return errors.New("listener down")
					}
					if tt.cancelAt == i {
						r.Cancel(fmt.Sprint("no ", i))
					}
					return nil
				})
				ctx = WithEventListener(ctx, func(_ context.Context, ev Event) { fmt.Fprint(&heard, i, ev.Kind(), ";") })
			}
			out, err := s.Call(ctx, "write_file", args(t, "path", "f.txt", "content", "b"))
			if tt.failAt != 0 {
				if err == nil || IsRetry(err) || OutcomeOf(err) != OutcomeError {
					t.Fatalf("a failed listener: %q, %v", out, err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			wantEqual(t, out, tt.want)
			wantEqual(t, asked.String(), tt.asked)
			wantEqual(t, fx.mustGet(t, "f.txt"), tt.wantFile)
			wantHeard := ""
			if tt.wantFile == "b" {
				wantHeard = "1file_written;2file_written;3file_written;"
			}
			wantEqual(t, heard.String(), wantHeard)
		})
	}

	// Two contexts derived from one parent each keep their own chain.
	fx := localFixture(t)
	s := newSet(t, fx.b, Options{NoContentHashes: true})
	var got []string
	parent := WithChangeListener(context.Background(), func(context.Context, *ChangeRequest) error {
		got = append(got, "parent")
		return nil
	})
	parent = WithChangeListener(parent, func(context.Context, *ChangeRequest) error { return nil })
	a := WithChangeListener(parent, func(context.Context, *ChangeRequest) error {
		got = append(got, "a")
		return nil
	})
	b := WithChangeListener(parent, func(context.Context, *ChangeRequest) error {
		got = append(got, "b")
		return nil
	})
	ok := func(ctx context.Context, name string) {
		if _, err := s.Call(ctx, "write_file", args(t, "path", name, "content", "x")); err != nil {
			t.Fatal(err)
		}
	}
	ok(a, "a.txt")
	ok(b, "b.txt")
	wantEqual(t, strings.Join(got, ","), "parent,a,parent,b")
}

// TestCallEnd: the listeners of WithCallEnd hear the error of every call
// as it returns it, so a host that sees only a protocol's result can tell
// a refusal's kind and how the call ended.
func TestCallEnd(t *testing.T) {
	fx := localFixture(t)
	fx.put(t, "f.txt", "a\n")
	s := newSet(t, fx.b, Options{})
	ro := newSet(t, fx.b, Options{ReadOnly: true})
	var got []string
	ctx := context.Background()
	for _, who := range []string{"outer", "inner"} {
		ctx = WithCallEnd(ctx, func(_ context.Context, tool string, err error) {
			got = append(got, fmt.Sprintf("%s %s %s %s", who, tool, OutcomeOf(err), KindOf(err)))
		})
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	s.Call(ctx, "read_file", args(t, "path", "f.txt"))
	s.Call(ctx, "read_file", args(t, "path", "nope"))
	s.Call(cctx, "read_file", args(t, "path", "f.txt"))
	ro.Call(ctx, "write_file", args(t, "path", "f.txt", "content", "b"))
	wantEqual(t, strings.Join(got, "\n"), strings.Join([]string{
		"outer read_file ok ", "inner read_file ok ",
		"outer read_file refused not_found", "inner read_file refused not_found",
		"outer read_file cancelled ", "inner read_file cancelled ",
		"outer write_file refused read_only", "inner write_file refused read_only",
	}, "\n"))
}

// TestBeforeCommit: a hook added with WithBeforeCommit hears a change only
// after Options.OnChangeRequest and every change listener let it through,
// whatever order they were added in; a change one of them cancelled is
// never heard; a hook that cancels stops the change.
func TestBeforeCommit(t *testing.T) {
	for _, tt := range []struct {
		name       string
		listener   string // "" lets through, "cancel"
		hook       string // "" lets through, "cancel"
		want, file string
		heard      string
	}{
		{"let through", "", "", "Wrote 1 char (1 line) to f.txt.", "b", "own,listener,hook;"},
		{"listener cancels", "cancel", "", "['f.txt' was not written: no]", "a\n", "own,listener,"},
		{"hook cancels", "", "cancel", "['f.txt' was not written: audit]", "a\n", "own,listener,hook;"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fx := localFixture(t)
			fx.put(t, "f.txt", "a\n")
			var heard strings.Builder
			s := newSet(t, fx.b, Options{NoContentHashes: true, OnChangeRequest: func(context.Context, *ChangeRequest) error {
				heard.WriteString("own,")
				return nil
			}})
			ctx := WithBeforeCommit(context.Background(), func(_ context.Context, r *ChangeRequest) error {
				heard.WriteString("hook;")
				if tt.hook == "cancel" {
					r.Cancel("audit")
				}
				return nil
			})
			ctx = WithChangeListener(ctx, func(_ context.Context, r *ChangeRequest) error {
				heard.WriteString("listener,")
				if tt.listener == "cancel" {
					r.Cancel("no")
				}
				return nil
			})
			out, err := s.Call(ctx, "write_file", args(t, "path", "f.txt", "content", "b"))
			if err != nil || out != tt.want {
				t.Fatalf("got %q, %v; want %q", out, err, tt.want)
			}
			if got := fx.mustGet(t, "f.txt"); got != tt.file {
				t.Errorf("f.txt holds %q, want %q", got, tt.file)
			}
			if heard.String() != tt.heard {
				t.Errorf("heard %q, want %q", heard.String(), tt.heard)
			}
		})
	}
}

// TestReadsNoDiff: a change heard only by listeners that read no diff
// carries none, for every tool that changes files, and is still made and
// heard; one listener that reads diffs, of either kind, anywhere in the
// chain, or the Set's own listeners without ListenersReadNoDiff, gets
// them built again.
func TestReadsNoDiff(t *testing.T) {
	calls := []struct {
		tool string
		kv   []any
	}{
		{"write_file", []any{"path", "a.txt", "content", "A\n"}},
		{"edit_file", []any{"path", "b.txt", "old_text", "b", "new_text", "B"}},
		{"delete_file", []any{"path", "c.txt"}},
		{"move_file", []any{"source", "d.txt", "destination", "e.txt"}},
		{"copy_file", []any{"source", "b.txt", "destination", "f.txt"}},
		{"apply_patch", []any{"patch", "*** Begin Patch\n*** Update File: a.txt\n@@\n-A\n+x\n*** Add File: g.txt\n+g\n*** End Patch\n"}},
	}
	for _, tt := range []struct {
		name string
		// extra adds listeners that read diffs; own sets the Set's.
		extra, own string
		noDiffOwn  bool
		wantDiffs  string // "" none, "all", "edit" (for the FileEdited events: edit_file's and apply_patch's)
	}{
		{name: "no diff read", wantDiffs: ""},
		{name: "own listeners read none", own: "both", noDiffOwn: true, wantDiffs: ""},
		{name: "own listeners read none, a change listener reads", own: "both", noDiffOwn: true, extra: "change", wantDiffs: "all"},
		{name: "a change listener reads", extra: "change", wantDiffs: "all"},
		{name: "a before-commit hook reads", extra: "commit", wantDiffs: "all"},
		{name: "an event listener reads", extra: "event", wantDiffs: "edit"},
		{name: "own change listener reads", own: "change", wantDiffs: "all"},
		{name: "own event listener reads", own: "event", wantDiffs: "edit"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fx := localFixture(t)
			for _, f := range []string{"a.txt", "b.txt", "c.txt", "d.txt"} {
				fx.put(t, f, f[:1]+"\n")
			}
			opts := Options{ListenersReadNoDiff: tt.noDiffOwn}
			for _, c := range calls {
				opts.Tools = append(opts.Tools, c.tool)
			}
			if tt.own == "change" || tt.own == "both" {
				opts.OnChangeRequest = func(context.Context, *ChangeRequest) error { return nil }
			}
			if tt.own == "event" || tt.own == "both" {
				opts.OnEvent = func(context.Context, Event) {}
			}
			s := newSet(t, fx.b, opts)
			var reqs []ChangeRequest
			var edits []FileEdited
			ctx := WithChangeListener(context.Background(), func(_ context.Context, r *ChangeRequest) error {
				reqs = append(reqs, *r)
				return nil
			}, ReadsNoDiff)
			ctx = WithBeforeCommit(ctx, func(context.Context, *ChangeRequest) error { return nil }, ReadsNoDiff)
			ctx = WithEventListener(ctx, func(_ context.Context, ev Event) {
				if e, ok := ev.(FileEdited); ok {
					edits = append(edits, e)
				}
			}, ReadsNoDiff)
			switch tt.extra {
			case "change":
				ctx = WithChangeListener(ctx, func(context.Context, *ChangeRequest) error { return nil })
			case "commit":
				ctx = WithBeforeCommit(ctx, func(context.Context, *ChangeRequest) error { return nil })
			case "event":
				ctx = WithEventListener(ctx, func(context.Context, Event) {})
			}
			for _, c := range calls {
				out, err := s.Call(ctx, c.tool, args(t, c.kv...))
				if err != nil || strings.HasPrefix(out, "[") {
					t.Fatalf("%s: %q, %v", c.tool, out, err)
				}
			}
			if len(reqs) != len(calls) || len(edits) != 2 {
				t.Fatalf("heard %d requests and %d edits, want %d and 2", len(reqs), len(edits), len(calls))
			}
			for i, r := range reqs {
				if r.Sizes == nil {
					t.Errorf("%s: request without sizes", calls[i].tool)
				}
				if got, want := r.Diff != "", tt.wantDiffs == "all" || tt.wantDiffs == "edit" && (calls[i].tool == "edit_file" || calls[i].tool == "apply_patch"); got != want {
					t.Errorf("%s: request carries a diff: %v, want %v (%q)", calls[i].tool, got, want, r.Diff)
				}
			}
			for _, e := range edits {
				if got, want := e.Diff != "", tt.wantDiffs != ""; got != want {
					t.Errorf("FileEdited %s carries a diff: %v, want %v (%q)", e.Path, got, want, e.Diff)
				}
			}
			wantEqual(t, fx.mustGet(t, "a.txt"), "x\n")
			wantEqual(t, fx.mustGet(t, "f.txt"), "B\n")
			wantEqual(t, fx.mustGet(t, "g.txt"), "g\n")
			if _, ok := fx.get(t, "c.txt"); ok {
				t.Error("c.txt was not deleted")
			}
		})
	}
}
