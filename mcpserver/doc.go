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
//     with its path(s), unified diff and, for a directory, the entries it
//     takes along (names escaped so they show as written), and happens
//     only on accept of that very change within ApprovalTTL;
//     ApprovalKey lets replicas take one another's answers.
//   - Resources: the files of the namespace as a resource template
//     (resources/read with the file's MIME type, text or blob, capped in
//     size), completion of its path argument, and subscriptions that are
//     told when a tool call through any server sharing the same [Changes]
//     changes a subscribed file (judged by the policy, bounded per session
//     by MaxSubscriptions and a rate, freed when the session ends).
//   - Stateless: the server answers stateless HTTP, so it offers clients
//     before 2026-07-28 neither subscriptions nor approvals, which that
//     transport cannot carry to them, and says so.
//   - Skills: a [SkillSource]'s skills as prompts and as SEP-2640
//     skill:// resources (skills/list, skills/get,
//     resources/directory/read), found again on an interval.
//   - Wrap: a command's own checks and records around every tool call.
//
// Tools that change storage report the new content hash as structured
// content beside the contract's text; file_info, list_directory and the
// walkers and searches report theirs as data split exactly as the tool
// printed it. Every structured result also carries the text itself (its
// field "text"), for clients that show the model the structure.
//
// A failed call's result names how it ended and, for a refusal, its
// kind in its _meta ([MetaOutcome], [MetaKind]; [ResultKind] reads it),
// and carries the error for Go code around the server (GetError); the
// model's text is the same.
//
// The server answers only the methods of what it declares, and every
// cacheable answer is private to the caller's client. A walk whose caller sent a progress token reports the
// count of entries it has visited.
package mcpserver
