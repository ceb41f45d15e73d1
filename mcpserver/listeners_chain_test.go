package mcpserver

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/quota"
	"github.com/fencefs/fencefs/tools"
)

// quotaWrapper is what a platform puts around the server's tools with
// Options.Wrap: a real quota.Manager reserves each change's growth in a
// change listener of the call's context and commits it only for a change
// that was let through and succeeded; an event listener records what
// the call changed.
type quotaWrapper struct {
	q      *quota.Manager
	mu     sync.Mutex
	asked  int      // change requests the quota listener saw
	events []string // events the wrapper's event listener heard
}

func (qw *quotaWrapper) wrap(t *tools.Tool, next mcp.ToolHandler) mcp.ToolHandler {
	if t.Annotations.ReadOnly {
		return next
	}
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		type held struct {
			req *tools.ChangeRequest
			res *quota.Reservation
		}
		var holds []held
		ctx = tools.WithChangeListener(ctx, func(ctx context.Context, r *tools.ChangeRequest) error {
			qw.mu.Lock()
			qw.asked++
			qw.mu.Unlock()
			var d quota.Usage
			for _, c := range r.Sizes {
				d = d.Add(quota.Resize(c.Before, c.After))
			}
			res, err := qw.q.Reserve(ctx, "t", d)
			if err != nil {
				r.Cancel(err.Error())
				return nil
			}
			holds = append(holds, held{r, res})
			return nil
		})
		ctx = tools.WithEventListener(ctx, func(_ context.Context, ev tools.Event) {
			qw.mu.Lock()
			qw.events = append(qw.events, ev.Kind())
			qw.mu.Unlock()
		})
		res, err := next(ctx, req)
		for _, h := range holds {
			if _, cancelled := h.req.Cancelled(); err == nil && res != nil && !res.IsError && !cancelled {
				h.res.Commit()
			} else {
				h.res.Cancel()
			}
		}
		return res, err
	}
}

// TestWrapperListenersWithApprovals: with approvals on, the server adds a
// change listener of its own to each call; a wrapper's quota listener
// still runs before it and holds (a change over the quota is refused
// before the user is asked, and only an approved change is counted), and
// the wrapper's event listener still hears the change.
func TestWrapperListenersWithApprovals(t *testing.T) {
	tests := []struct {
		name     string
		file     string
		content  string
		action   string
		want     string
		wantAsk  bool
		wantFile bool
		// wantStored is the usage the quota counts after the call.
		wantStored int64
	}{
		{name: "over the quota", file: "big.txt", content: strings.Repeat("x", 20), action: "accept",
			want: "['big.txt' was not written: quota: tenant t: limit of 10 stored bytes: 4 stored, the change adds 20; free space and retry]", wantStored: 4},
		{name: "within the quota, accepted", file: "small.txt", content: "abc", action: "accept",
			want: "Wrote 3 chars (1 line) to small.txt. [hash:" + hash12("abc") + "]", wantAsk: true, wantFile: true, wantStored: 7},
		{name: "within the quota, declined", file: "small.txt", content: "abc", action: "decline",
			want: "['small.txt' was not written: the user declined the change]", wantAsk: true, wantStored: 4},
	}
	for _, version := range []string{"", "2025-11-25"} {
		for _, tt := range tests {
			t.Run(version+"/"+tt.name, func(t *testing.T) {
				w := newWorkspace(t, tools.Options{}, map[string]string{"f.txt": "old\n"})
				q, err := quota.New(quota.Options{
					Default: quota.Limits{MaxBytes: 10},
					Usage: quota.UsageFunc(func(ctx context.Context, _ string) (quota.Usage, error) {
						return quota.ScanFS(ctx, os.DirFS(w.dir))
					}),
				})
				if err != nil {
					t.Fatal(err)
				}
				qw := &quotaWrapper{q: q}
				userAsked := false
				cs := connectVersion(t, New(w.set, Options{Approve: ApproveChanges, Wrap: qw.wrap}), &mcp.ClientOptions{
					ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						userAsked = true
						return &mcp.ElicitResult{Action: tt.action}, nil
					},
				}, version)
				res, text := call(t, cs, "write_file", map[string]any{"path": tt.file, "content": tt.content})
				if text != tt.want || res.IsError {
					t.Errorf("result %q (isError %v), want %q", text, res.IsError, tt.want)
				}
				if userAsked != tt.wantAsk {
					t.Errorf("user asked: %v, want %v", userAsked, tt.wantAsk)
				}
				if qw.asked == 0 {
					t.Error("the wrapper's change listener never ran")
				}
				_, statErr := os.Stat(w.dir + "/" + tt.file)
				if exists := statErr == nil; exists != tt.wantFile {
					t.Errorf("%s exists: %v, want %v", tt.file, exists, tt.wantFile)
				}
				stored, pending := q.UsageOf("t")
				if stored.Bytes != tt.wantStored || pending != (quota.Usage{}) {
					t.Errorf("quota counts %d bytes stored, %+v pending; want %d stored, none pending", stored.Bytes, pending, tt.wantStored)
				}
				wantEvents := ""
				if tt.wantFile {
					wantEvents = "file_written"
				}
				if got := strings.Join(qw.events, ","); got != wantEvents {
					t.Errorf("the wrapper heard %q, want %q", got, wantEvents)
				}
			})
		}
	}
}

// TestWrapperLearnsRefusalKind: over MCP a wrapper sees only isError; the
// error of the tool's call reaches it through tools.WithCallEnd, with
// approvals on as off, so it can tell a refusal's kind and how the call
// really ended without matching the text.
func TestWrapperLearnsRefusalKind(t *testing.T) {
	for _, approve := range []Approval{ApproveNone, ApproveChanges} {
		w := newWorkspace(t, tools.Options{Tools: []string{"read_file", "write_file"}}, map[string]string{"f.txt": "old\n"})
		var last error
		wrap := func(_ *tools.Tool, next mcp.ToolHandler) mcp.ToolHandler {
			return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				last = nil
				ctx = tools.WithCallEnd(ctx, func(_ context.Context, _ string, err error) { last = err })
				return next(ctx, req)
			}
		}
		cs := connect(t, New(w.set, Options{Approve: approve, Wrap: wrap}), &mcp.ClientOptions{
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept"}, nil
			},
		})
		for _, tt := range []struct {
			tool string
			args map[string]any
			want tools.Kind
		}{
			{"read_file", map[string]any{"path": "missing.txt"}, tools.KindNotFound},
			{"write_file", map[string]any{"path": "no/dir/x.txt", "content": "x"}, tools.KindNotFound},
			{"write_file", map[string]any{"path": "f.txt", "content": "x", "expected_hash": "000000000000"}, tools.KindConflict},
			{"read_file", map[string]any{"path": "../up.txt"}, tools.KindOutside},
		} {
			res, text := call(t, cs, tt.tool, tt.args)
			if !res.IsError || !errors.Is(last, tt.want) || tools.OutcomeOf(last) != tools.OutcomeRefused || tools.Message(last) != text {
				t.Errorf("approve %v, %s(%v): result %q (isError %v); the wrapper learnt %v, kind %q; want %q", approve, tt.tool, tt.args, text, res.IsError, last, tools.KindOf(last), tt.want)
			}
		}
		if res, _ := call(t, cs, "write_file", map[string]any{"path": "f.txt", "content": "new\n"}); res.IsError || tools.OutcomeOf(last) != tools.OutcomeOK {
			t.Errorf("approve %v: a write that succeeded: the wrapper learnt %v", approve, last)
		}
	}
}
