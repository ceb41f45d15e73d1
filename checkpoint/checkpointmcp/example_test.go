package checkpointmcp_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/checkpoint"
	"github.com/fencefs/fencefs/checkpoint/checkpointmcp"
	"github.com/fencefs/fencefs/mcpserver"
	"github.com/fencefs/fencefs/memfs"
	"github.com/fencefs/fencefs/tools"
)

// An MCP server whose changing calls are journaled, offering the model
// list_checkpoints and restore_checkpoint.
func ExampleAdd() {
	ctx := context.Background()
	ns := memfs.New()
	set, err := tools.New(ns, tools.Options{NoContentHashes: true})
	if err != nil {
		log.Fatal(err)
	}
	clock := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	j, err := checkpoint.Open(ctx, ns, memfs.New(), checkpoint.Options{Now: clock})
	if err != nil {
		log.Fatal(err)
	}
	server := mcpserver.New(set, mcpserver.Options{Wrap: checkpointmcp.Wrap(j, nil)})
	checkpointmcp.Add(server, j, checkpointmcp.Options{Restore: true})

	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	show := func(name string, args map[string]any) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	}
	show("write_file", map[string]any{"path": "notes.md", "content": "hello\n"})
	show(checkpointmcp.ListTool, nil)
	show(checkpointmcp.RestoreTool, map[string]any{"checkpoint": 0})
	// Output:
	// Wrote 6 chars (1 line) to notes.md.
	// 1  2026-01-02T03:04:05Z  write notes.md  (1 path)
	// The oldest checkpoint kept is 0.
	// Restored 1 path to checkpoint 0: notes.md. This restore is checkpoint 3; restore to 2 to undo it.
}
