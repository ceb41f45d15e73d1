package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// private makes every cacheable result (the lists, resources/read,
// server/discover) private to the caller's client: a server serves one
// namespace, tool list and skill catalog to the callers it is built for
// (a tenant, a scope), so no intermediary may hand one caller's answer
// to another. The protocol's default is public.
func private(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
	c.CacheScope = "private"
}

// gate answers only what the server declared: the SDK serves every
// standard method whatever the capabilities say. It also keeps the
// transport's limits out of what is declared (see Options.Stateless),
// and has a server that cannot speak 2026-07-28 (stateful HTTP) answer
// server/discover as such a server must, with the versions it speaks in
// an unsupported-version error, rather than with a discovery result no
// 2026-07-28 client can use.
func (h *handlers) gate(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "logging/setLevel":
			// Logs go to the Logger, never to the client.
			return nil, undeclared(method, "logging")
		case "prompts/list", "prompts/get":
			if h.opts.Skills == nil {
				return nil, undeclared(method, "prompts")
			}
		case "resources/list", "resources/templates/list", "resources/read":
			if !h.opts.Resources && h.opts.Skills == nil {
				return nil, undeclared(method, "resources")
			}
		case "initialize":
			res, err := next(ctx, method, req)
			if ir, ok := res.(*mcp.InitializeResult); ok && err == nil && h.opts.Stateless && ir.Capabilities != nil && ir.Capabilities.Resources != nil {
				// initialize is the handshake of 2025-11-25 and before.
				caps := *ir.Capabilities
				r := *caps.Resources
				r.Subscribe = false
				caps.Resources = &r
				ir.Capabilities = &caps
			}
			return res, err
		case "server/discover":
			res, err := next(ctx, method, req)
			if dr, ok := res.(*mcp.DiscoverResult); ok && err == nil && !slices.ContainsFunc(dr.SupportedVersions, func(v string) bool { return v >= newProtocol }) {
				requested := ""
				if p, ok := req.GetParams().(interface{ GetMeta() map[string]any }); ok {
					requested, _ = p.GetMeta()[mcp.MetaKeyProtocolVersion].(string)
				}
				data, _ := json.Marshal(mcp.UnsupportedProtocolVersionData{Supported: dr.SupportedVersions, Requested: requested})
				return nil, &jsonrpc.Error{Code: mcp.CodeUnsupportedProtocolVersion,
					Message: fmt.Sprintf("protocol version %q is not supported by this server; initialize with one of %v", requested, dr.SupportedVersions),
					Data:    data}
			}
			return res, err
		}
		return next(ctx, method, req)
	}
}

// undeclared is the error of a method of a capability the server did not
// declare.
func undeclared(method, capability string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("%s: this server does not declare the %s capability", method, capability)}
}
