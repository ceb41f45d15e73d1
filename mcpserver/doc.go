// Package mcpserver serves a fencefs tool set ([tools.Set]) as an MCP
// server on the official Go SDK: [New] returns a configured *mcp.Server
// to run over any of the SDK's transports (stdio, streamable HTTP,
// in-memory).
//
// The tools go out raw: each tool's hand-written JSON Schema is the
// input schema, its arguments reach it undecoded, and its text is the
// result's text content. A failed call is a result with isError set
// whose text names no host path, endpoint or credential.
//
// Beyond the tools, [Options] turn on what a host may use:
//   - Approve: every change is shown to the user through MCP elicitation,
//     with its path(s) and unified diff, and happens only on accept.
//   - Resources: the files of the namespace as a resource template
//     (resources/read with the file's MIME type, text or blob, capped in
//     size), completion of its path argument, and subscriptions that are
//     told when a tool call through any server sharing the same [Changes]
//     changes a subscribed file.
//
// Tools that change storage report the new content hash as structured
// content beside the contract's text.
package mcpserver
