package mcpserver_test

import (
	"context"
	"fmt"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/mcpserver"
	"github.com/fencefs/fencefs/memfs"
	"github.com/fencefs/fencefs/tools"
)

// A tool set over in-memory storage served to an SDK client; a real
// server runs the same *mcp.Server over &mcp.StdioTransport{} or
// mcp.NewStreamableHTTPHandler.
func ExampleNew() {
	ctx := context.Background()
	set, err := tools.New(memfs.New(), tools.Options{NoContentHashes: true})
	if err != nil {
		log.Fatal(err)
	}
	server := mcpserver.New(set, mcpserver.Options{Instructions: "Relative paths start at the workspace root."})

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

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "notes.md", "content": "hello\n"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	res, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "missing.md"}})
	fmt.Println(res.IsError, res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// Wrote 6 chars (1 line) to notes.md.
	// true File not found: missing.md
}

// With Approve, a change is shown to the user through the host's
// elicitation and made only on accept.
func ExampleOptions_approve() {
	ctx := context.Background()
	set, err := tools.New(memfs.New(), tools.Options{NoContentHashes: true})
	if err != nil {
		log.Fatal(err)
	}
	server := mcpserver.New(set, mcpserver.Options{Approve: mcpserver.ApproveChanges})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	host := mcp.NewClient(&mcp.Implementation{Name: "host"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			fmt.Print(req.Params.Message)
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	cs, err := host.Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "notes.md", "content": "hello\n"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// Allow writing notes.md?
	//
	// --- a/notes.md
	// +++ b/notes.md
	// @@ -0,0 +1 @@
	// +hello
	// ['notes.md' was not written: the user declined the change]
}
