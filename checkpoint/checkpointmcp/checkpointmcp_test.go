package checkpointmcp_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/checkpoint"
	"github.com/fencefs/fencefs/checkpoint/checkpointmcp"
	"github.com/fencefs/fencefs/mcpserver"
	"github.com/fencefs/fencefs/memfs"
	"github.com/fencefs/fencefs/tools"
)

// connect serves set journaled in j, with the checkpoint tools, to an
// SDK client.
func connect(t *testing.T, set *tools.Set, j *checkpoint.Journal, opts checkpointmcp.Options) *mcp.ClientSession {
	t.Helper()
	ctx := t.Context()
	server := mcpserver.New(set, mcpserver.Options{Wrap: checkpointmcp.Wrap(j, nil)})
	checkpointmcp.Add(server, j, opts)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

// TestTools: calls through the MCP server are journaled; the model lists
// checkpoints, is refused a restore over another writer's change with
// the conflict named, forces it, and undoes it.
func TestTools(t *testing.T) {
	ctx := t.Context()
	ns := memfs.New()
	set, err := tools.New(ns, tools.Options{NoContentHashes: true})
	if err != nil {
		t.Fatal(err)
	}
	j, err := checkpoint.Open(ctx, ns, memfs.New(), checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var restores []uint64
	cs := connect(t, set, j, checkpointmcp.Options{Restore: true, OnRestore: func(_ context.Context, to uint64, _ *checkpoint.Result, _ error) {
		restores = append(restores, to)
	}})
	j.Mark(ctx, "turn-1")
	call(t, cs, "write_file", map[string]any{"path": "a.txt", "content": "one\n"})
	call(t, cs, "write_file", map[string]any{"path": "a.txt", "content": "two\n"})
	call(t, cs, "write_file", map[string]any{"path": "b.txt", "content": "b\n"})

	out, isErr := call(t, cs, checkpointmcp.ListTool, map[string]any{"limit": 2})
	if isErr || strings.Count(out, "[turn-1]  write") != 2 || !strings.Contains(out, "write b.txt") || strings.Contains(out, "\n1  ") {
		t.Errorf("list_checkpoints:\n%s", out)
	}
	if err := backend.WriteFile(ctx, ns, "b.txt", []byte("theirs\n"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	out, isErr = call(t, cs, checkpointmcp.RestoreTool, map[string]any{"checkpoint": 0})
	if !isErr || !strings.HasPrefix(out, "Restore to checkpoint 0 refused: 1 path was changed by someone else since (pass force: true to overwrite):\nb.txt: changed by another writer") {
		t.Errorf("restore over a conflict: %v %s", isErr, out)
	}
	out, isErr = call(t, cs, checkpointmcp.RestoreTool, map[string]any{"checkpoint": 0, "force": true})
	if want := "Restored 2 paths to checkpoint 0: a.txt, b.txt. Overwrote changes by someone else to: b.txt. This restore is checkpoint 5; restore to 4 to undo it."; isErr || out != want {
		t.Errorf("forced restore: %v\n%s\nwant\n%s", isErr, out, want)
	}
	for _, p := range []string{"a.txt", "b.txt"} {
		if _, err := backend.Stat(ctx, ns, p); err == nil {
			t.Errorf("%s still exists", p)
		}
	}
	out, isErr = call(t, cs, checkpointmcp.RestoreTool, map[string]any{"checkpoint": 4})
	if isErr || !strings.HasPrefix(out, "Restored 2 paths to checkpoint 4") {
		t.Errorf("undo: %v %s", isErr, out)
	}
	if data, _ := backend.ReadFile(ctx, ns, "b.txt"); string(data) != "theirs\n" {
		t.Errorf("b.txt after the undo: %q", data)
	}
	if len(restores) != 3 {
		t.Errorf("OnRestore heard %v", restores)
	}
	out, isErr = call(t, cs, checkpointmcp.RestoreTool, map[string]any{"checkpoint": 99})
	if !isErr || !strings.Contains(out, "failed; nothing was changed") {
		t.Errorf("restore to a checkpoint that is not: %v %s", isErr, out)
	}
}

// TestListOnly: without Options.Restore the model can list but not
// restore.
func TestListOnly(t *testing.T) {
	ns := memfs.New()
	set, _ := tools.New(ns, tools.Options{})
	j, err := checkpoint.Open(t.Context(), ns, memfs.New(), checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, set, j, checkpointmcp.Options{})
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	got := strings.Join(names, ",")
	if !strings.Contains(got, checkpointmcp.ListTool) || strings.Contains(got, checkpointmcp.RestoreTool) {
		t.Errorf("tools %s", got)
	}
	out, isErr := call(t, cs, checkpointmcp.ListTool, nil)
	if isErr || out != "No checkpoints.\nThe oldest checkpoint kept is 0." {
		t.Errorf("list on an empty journal: %q", out)
	}
}

// TestRefusalKinds: the checkpoint tools' refusals carry their kind as
// the file tools' do, in _meta for the client and as a Go error for the
// links around the tool (an audit line's outcome and kind).
func TestRefusalKinds(t *testing.T) {
	ctx := t.Context()
	ns := memfs.New()
	set, err := tools.New(ns, tools.Options{NoContentHashes: true})
	if err != nil {
		t.Fatal(err)
	}
	j, err := checkpoint.Open(ctx, ns, memfs.New(), checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	server := mcpserver.New(set, mcpserver.Options{Wrap: checkpointmcp.Wrap(j, nil)})
	var seen []error
	checkpointmcp.Add(server, j, checkpointmcp.Options{Restore: true, Wrap: func(_ *tools.Tool, next mcp.ToolHandler) mcp.ToolHandler {
		return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := next(ctx, req)
			if res != nil {
				seen = append(seen, res.GetError())
			}
			return res, err
		}
	}})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call(t, cs, "write_file", map[string]any{"path": "a.txt", "content": "one\n"})
	if err := backend.WriteFile(ctx, ns, "a.txt", []byte("theirs\n"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args map[string]any
		kind tools.Kind
	}{
		{map[string]any{"checkpoint": 0}, tools.KindConflict},
		{map[string]any{}, tools.KindInvalid},
		{map[string]any{"checkpoint": 0, "bogus": 1}, tools.KindInvalid},
	} {
		seen = nil
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: checkpointmcp.RestoreTool, Arguments: c.args})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || mcpserver.ResultKind(res) != c.kind || res.Meta[mcpserver.MetaOutcome] != string(tools.OutcomeRefused) {
			t.Errorf("%v: isError %v, _meta %v; want a refusal of kind %s", c.args, res.IsError, res.Meta, c.kind)
		}
		if len(seen) != 1 || !errors.Is(seen[0], c.kind) || tools.OutcomeOf(seen[0]) != tools.OutcomeRefused {
			t.Errorf("%v: the links saw %v; want a refusal of kind %s", c.args, seen, c.kind)
		}
	}
}
