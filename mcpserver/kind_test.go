package mcpserver

import (
	"context"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tools"
)

// TestResultKind: a refused call's result carries its kind and outcome
// in _meta, as a client receives it (ResultKind reads it), and its error
// for Go code around the server (a receiving middleware's GetError), at
// both protocol versions; the server's own refusal of an unapproved
// change is of kind denied. The text the model reads is unchanged.
func TestResultKind(t *testing.T) {
	for _, version := range []string{"", "2025-11-25"} {
		w := newWorkspace(t, tools.Options{}, map[string]string{"f.txt": "old\n"})
		var seen error
		server := New(w.set, Options{})
		server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				res, err := next(ctx, method, req)
				if r, ok := res.(*mcp.CallToolResult); ok {
					seen = r.GetError()
				}
				return res, err
			}
		})
		cs := connectVersion(t, server, nil, version)
		for _, tt := range []struct {
			tool string
			args map[string]any
			want tools.Kind
		}{
			{"read_file", map[string]any{"path": "missing.txt"}, tools.KindNotFound},
			{"write_file", map[string]any{"path": "f.txt", "content": "x", "expected_hash": "000000000000"}, tools.KindConflict},
			{"read_file", map[string]any{"path": "../up.txt"}, tools.KindOutside},
		} {
			seen = nil
			res, text := call(t, cs, tt.tool, tt.args)
			if !res.IsError || ResultKind(res) != tt.want || res.Meta[MetaOutcome] != string(tools.OutcomeRefused) {
				t.Errorf("%s %s(%v): %q, _meta %v; want kind %s", version, tt.tool, tt.args, text, res.Meta, tt.want)
			}
			if !errors.Is(seen, tt.want) || tools.Message(seen) != text {
				t.Errorf("%s %s(%v): the middleware saw %v, want kind %s", version, tt.tool, tt.args, seen, tt.want)
			}
		}
		res, _ := call(t, cs, "read_file", map[string]any{"path": "f.txt"})
		if res.IsError || ResultKind(res) != tools.KindUnknown || res.Meta[MetaOutcome] != nil {
			t.Errorf("%s: a read that succeeded carries _meta %v", version, res.Meta)
		}

		approving := connectVersion(t, New(w.set, Options{Approve: ApproveChanges}), nil, version)
		res, text := call(t, approving, "write_file", map[string]any{"path": "f.txt", "content": "x"})
		if !res.IsError || text != noElicitation || ResultKind(res) != tools.KindDenied {
			t.Errorf("%s: an unapproved change: %q, _meta %v; want kind denied", version, text, res.Meta)
		}
	}
}
