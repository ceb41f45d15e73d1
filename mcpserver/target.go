package mcpserver

import (
	"context"
	"errors"
	"maps"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tools"
)

// A Target is what the requests of one caller work on: the tool set its
// calls run, the Changes its resource subscriptions hear of, and the
// links around each of its calls. A server of NewShared finds the Target
// of each request when the request arrives, so that every caller of one
// tool list (each tenant of a platform) shares one MCP server, and a
// caller costs its Target, not a server of its own.
//
// A Target builds the handler of each of its tools on the tool's first
// call and keeps it; it is safe for concurrent use, and must not be
// copied once used.
type Target struct {
	// Set is the tool set the calls run; it offers at least the tools of
	// the servers that find the target.
	Set *tools.Set
	// Changes carries the changes of the target's calls to the
	// subscribers who share it (the sessions of one namespace), and no
	// further; nil gives the target one of its own.
	Changes *Changes
	// Wrap, when set, wraps the handler of each of the target's tools,
	// inside the server's Options.Wrap, so that links that depend on the
	// caller (its namespace's checks) are the caller's own.
	Wrap func(t *tools.Tool, next mcp.ToolHandler) mcp.ToolHandler

	mu sync.Mutex
	// bound are the target's handlers for each server that found it:
	// one, but for a target given to several servers.
	bound []*bound
}

// bound are the handlers of one target on one server, and the handlers
// of the tools called so far.
type bound struct {
	h     *handlers
	tools map[string]mcp.ToolHandler
}

// maxBound bounds the servers a target keeps handlers for; beyond it,
// each request builds them again.
const maxBound = 4

// errNoTarget answers a request whose target cannot be found.
var errNoTarget = errors.New("mcpserver: no target for the request")

// NewShared returns an MCP server offering the tools of defs (their
// names, descriptions and schemas; defs itself is never called),
// configured by opts, each of whose requests (tool calls, resources/read,
// completion, subscriptions) works on the Target find returns from the
// request's context. An error from find answers the request with it.
// opts.Changes is not used: each Target carries its own.
//
// Every Target's Set must describe its tools as defs does: the server
// announces defs' texts to every caller.
func NewShared(defs *tools.Set, opts Options, find func(ctx context.Context) (*Target, error)) *mcp.Server {
	return build(defs, opts, find)
}

// handlers returns the handlers of t on the server of c.
func (t *Target) handlers(c *common) *handlers {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.boundLocked(c).h
}

func (t *Target) boundLocked(c *common) *bound {
	for _, b := range t.bound {
		if b.h.common == c {
			return b
		}
	}
	if t.Changes == nil {
		t.Changes = NewChanges()
	}
	b := &bound{h: &handlers{common: c, set: t.Set, changes: t.Changes}}
	if len(t.bound) < maxBound {
		t.bound = append(t.bound, b)
	}
	return b
}

// tool returns the handler of the tool name of t on the server of c,
// built on its first call: the tool of t's set, wrapped by t.Wrap.
func (t *Target) tool(c *common, name string) mcp.ToolHandler {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.boundLocked(c)
	if th, ok := b.tools[name]; ok {
		return th
	}
	var th mcp.ToolHandler
	if tool, ok := t.Set.Tool(name); ok {
		th = b.h.tool(tool)
		if t.Wrap != nil {
			th = t.Wrap(tool, th)
		}
	} else {
		// The server offers a tool the target's set does not: a set
		// built for another list. Nothing runs.
		th = func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return refused(tools.KindDenied, "Tool '"+name+"' is not available to this caller."), nil
		}
	}
	if b.tools == nil {
		b.tools = make(map[string]mcp.ToolHandler, 1)
	}
	b.tools[name] = th
	return th
}

// dispatch is the server's handler of the tool name: the handler of the
// request's target.
func (c *common) dispatch(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		t, err := c.target(ctx)
		if err != nil {
			return nil, err
		}
		return t.tool(c, name)(ctx, req)
	}
}

// target finds the target of the request of ctx.
func (c *common) target(ctx context.Context) (*Target, error) {
	t, err := c.find(ctx)
	if err == nil && t == nil {
		err = errNoTarget
	}
	return t, err
}

// on returns the handlers of the request of ctx.
func (c *common) on(ctx context.Context) (*handlers, error) {
	t, err := c.target(ctx)
	if err != nil {
		return nil, err
	}
	return t.handlers(c), nil
}

func (c *common) onReadResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	h, err := c.on(ctx)
	if err != nil {
		return nil, err
	}
	return h.readResource(ctx, req)
}

func (c *common) onComplete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	h, err := c.on(ctx)
	if err != nil {
		return nil, err
	}
	return h.complete(ctx, req)
}

func (c *common) onSubscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	h, err := c.on(ctx)
	if err != nil {
		return err
	}
	return h.subscribe(ctx, req)
}

func (c *common) onUnsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	h, err := c.on(ctx)
	if err != nil {
		return err
	}
	return h.unsubscribe(ctx, req)
}

// audienceKey marks, in the _meta of a notifications/resources/updated a
// Changes sends, the sessions it is for. The SDK sends a server's update
// to every session of the server subscribed to the URI, and the sessions
// of a shared server belong to many namespaces (tenants) whose files
// have the same URIs: toAudience lets it reach only the sessions of the
// namespace that changed, and takes the mark off.
const audienceKey = "fencefs/audience"

// audience are the sessions a resource update is for.
type audience map[*mcp.ServerSession]bool

// toAudience is the sending middleware of every server: a resource update
// marked with its audience reaches only the sessions in it, unmarked.
func toAudience(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "notifications/resources/updated" {
			return next(ctx, method, req)
		}
		p, ok := req.GetParams().(*mcp.ResourceUpdatedNotificationParams)
		if !ok || p == nil {
			return next(ctx, method, req)
		}
		a, marked := p.Meta[audienceKey].(audience)
		if !marked {
			return next(ctx, method, req)
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if !a[ss] {
			return nil, nil
		}
		// The same params go to every session: a copy loses the mark.
		q := *p
		q.Meta = maps.Clone(p.Meta)
		delete(q.Meta, audienceKey)
		if len(q.Meta) == 0 {
			q.Meta = nil
		}
		return next(ctx, method, &mcp.ServerRequest[*mcp.ResourceUpdatedNotificationParams]{Session: ss, Params: &q})
	}
}
