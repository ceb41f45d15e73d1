package server

import (
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/mcpserver"
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

// ErrNotGranted is wrapped by the error of a call the Scopes link
// refused: the scopes of the request's token do not grant the tool. The
// refusal is of kind tools.KindDenied.
var ErrNotGranted = errors.New("the scopes of the request's token do not grant the tool")

// ErrAuditBroken is wrapped by the error of a change the Audit link
// refused because the audit log cannot be written (the log's own error
// is wrapped beside it). The refusal is of kind tools.KindUnavailable.
var ErrAuditBroken = errors.New("the audit log cannot be written")

// refusal is the result of a call a link refuses, as the tools' own
// refusals are: text for the model and, as mcpserver marks a tool's
// refusal, the kind in the result's _meta (mcpserver.MetaKind, for a
// client) and in its Go error (res.GetError(), for a link or wrapper
// around it: errors.Is(err, kind), tools.KindOf). The error wraps cause
// when there is one (a *quota.LimitError, ErrNotGranted,
// ErrAuditBroken), which the model is not shown.
func refusal(kind tools.Kind, text string, cause error) *mcp.CallToolResult {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
	err := &linkRefusal{retry: &tools.RetryError{Message: text, Kind: kind}, cause: cause}
	res.SetError(err)
	res.Meta = mcp.Meta{mcpserver.MetaOutcome: string(tools.OutcomeOf(err)), mcpserver.MetaKind: string(kind)}
	return res
}

// linkRefusal is the error of a call a link refused: a refusal of its
// kind, and the cause behind it.
type linkRefusal struct {
	retry *tools.RetryError
	cause error
}

// Error returns the text the model was shown.
func (e *linkRefusal) Error() string { return e.retry.Message }

// Unwrap gives errors.Is and errors.As the refusal and its cause.
func (e *linkRefusal) Unwrap() []error {
	if e.cause == nil {
		return []error{e.retry}
	}
	return []error{e.retry, e.cause}
}
