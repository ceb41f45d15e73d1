package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/mcpserver"
	"github.com/fencefs/fencefs/memfs"
	"github.com/fencefs/fencefs/tools"
)

// tenantKey carries the caller's tenant in a connection's context; an
// HTTP server puts it in each request's context from its verified
// identity.
type tenantKey struct{}

// One server for two tenants: each call works on the Target of the
// caller's tenant, found from the request's context, so a tenant costs
// its tool set, not a server of its own.
func ExampleNewShared() {
	ctx := context.Background()
	targets := map[string]*mcpserver.Target{}
	for _, tenant := range []string{"alice", "bob"} {
		set, err := tools.New(memfs.New(), tools.Options{NoContentHashes: true})
		if err != nil {
			log.Fatal(err)
		}
		raw, _ := json.Marshal(map[string]string{"path": "notes.md", "content": "notes of " + tenant + "\n"})
		if _, err := set.Call(ctx, "write_file", raw); err != nil {
			log.Fatal(err)
		}
		targets[tenant] = &mcpserver.Target{Set: set}
	}
	// Every tenant's set has the same options, so any describes the tools.
	server := mcpserver.NewShared(targets["alice"].Set, mcpserver.Options{}, func(ctx context.Context) (*mcpserver.Target, error) {
		tenant, _ := ctx.Value(tenantKey{}).(string)
		if t := targets[tenant]; t != nil {
			return t, nil
		}
		return nil, errors.New("no such tenant")
	})

	for _, tenant := range []string{"alice", "bob"} {
		st, ct := mcp.NewInMemoryTransports()
		// The session's requests run under the context it was connected
		// with.
		ss, err := server.Connect(context.WithValue(ctx, tenantKey{}, tenant), st, nil)
		if err != nil {
			log.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "host"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			log.Fatal(err)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "notes.md"}})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Print(res.Content[0].(*mcp.TextContent).Text)
		cs.Close()
		ss.Close()
	}
	// Output:
	// [notes.md | 1 line]
	//      1	notes of alice
	// [notes.md | 1 line]
	//      1	notes of bob
}
