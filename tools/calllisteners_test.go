package tools

import (
	"context"
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
