package server

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tools"
)

// A Link wraps the handler of one tool's calls with one concern (scopes,
// limits, quotas, require-read, audit, metrics). Links compose into a
// Chain, which mcpserver.Options.Wrap takes; a host binding the tools in
// its own way uses the same links.
type Link interface {
	// Wrap returns next with the link's concern around it, for the calls
	// of t. It may return next itself when the link has nothing to do
	// for t.
	Wrap(t *tools.Tool, next mcp.ToolHandler) mcp.ToolHandler
}

// LinkFunc is a function as a Link.
type LinkFunc func(t *tools.Tool, next mcp.ToolHandler) mcp.ToolHandler

// Wrap calls f.
func (f LinkFunc) Wrap(t *tools.Tool, next mcp.ToolHandler) mcp.ToolHandler { return f(t, next) }

// Chain is a list of links, the first outermost: a call passes through
// them in order on its way to the tool. Nil links are skipped.
type Chain []Link

// Wrap wraps next with every link of c.
func (c Chain) Wrap(t *tools.Tool, next mcp.ToolHandler) mcp.ToolHandler {
	for i := len(c) - 1; i >= 0; i-- {
		if c[i] != nil {
			next = c[i].Wrap(t, next)
		}
	}
	return next
}

// refusal is the result of a call a link refuses: a text the model reads,
// as the tools' own refusals are.
func refusal(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
