//go:build !fencefs_oneshot

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/cmd/fencefs/internal/config"
	"github.com/fencefs/fencefs/mcpserver"
)

// toolInfo is one entry of `fencefs tools`: what an MCP host sees in
// tools/list.
type toolInfo struct {
	Name        string               `json:"name"`
	Description string               `json:"description"`
	InputSchema json.RawMessage      `json:"inputSchema"`
	Annotations *mcp.ToolAnnotations `json:"annotations"`
	// OutputSchema describes the structured content of the tools that
	// return some.
	OutputSchema any `json:"outputSchema,omitempty"`
}

// listTools prints the configured tools as a JSON array.
func listTools(ctx context.Context, s *config.Settings, rest []string, stdout, stderr io.Writer) int {
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "fencefs: tools takes no arguments, got %q\n", rest)
		return exitFatal
	}
	ns, err := openNamespace(ctx, s, newLogger(stderr, s.LogLevel, s.LogFormat))
	if err != nil {
		fmt.Fprintf(stderr, "fencefs: %v\n", err)
		return exitFatal
	}
	defer ns.Close()
	infos := []toolInfo{}
	for _, t := range ns.Tools().Tools() {
		m := mcpserver.Tool(t)
		infos = append(infos, toolInfo{Name: m.Name, Description: m.Description, InputSchema: t.InputSchema, Annotations: m.Annotations, OutputSchema: m.OutputSchema})
	}
	out, err := json.MarshalIndent(infos, "", "  ")
	if err != nil {
		fmt.Fprintf(stderr, "fencefs: %v\n", err)
		return exitFatal
	}
	fmt.Fprintf(stdout, "%s\n", out)
	return exitOK
}
