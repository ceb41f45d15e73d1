package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tools"
)

// Options configure the server [New] returns. The zero value serves the
// tools only, as plain results, with no approval.
type Options struct {
	// Name and Version identify the server to the host; Name defaults
	// to "fencefs".
	Name, Version string
	// Instructions tell the model how to use the server (where relative
	// paths start); empty sends none.
	Instructions string
	// Logger receives one debug line per call and the failures; nil
	// discards them. Logs never go to the client.
	Logger *slog.Logger
	// Approve selects which calls need the user's approval.
	Approve Approval
	// ApprovalFallback, when set, decides the changes of a session whose
	// client cannot elicit (it may Cancel them, or return an error to
	// abort the call). Nil refuses every change of such a session with an
	// error result, so nothing is ever written unapproved.
	ApprovalFallback func(ctx context.Context, req *tools.ChangeRequest) error
	// Resources serves the files of the namespace as resources, with
	// completion of their paths and subscriptions.
	Resources bool
	// MaxSubscriptions caps the resource subscriptions one session holds;
	// 0 means DefaultMaxSubscriptions. Each is judged by the policy as
	// resources/read is, its URI is at most MaxSubscriptionURIBytes, a
	// session subscribes at most SubscribeRate times a second, and its
	// subscriptions are freed when it ends.
	MaxSubscriptions int
	// Stateless tells the server it answers stateless streamable HTTP
	// (mcp.StreamableHTTPOptions.Stateless), where each request is a
	// session of its own and nothing reaches the client outside the
	// answer to one of its requests. A client of protocol 2025-11-25 or
	// earlier is then offered no resource subscriptions (nothing could
	// deliver their updates) and is told, not asked, when a change needs
	// approval: its elicitation could never come back to this session.
	// Protocol 2026-07-28 carries both (subscriptions/listen, multi
	// round-trip requests). Stdio and stateful HTTP leave it false.
	Stateless bool
	// MaxResourceBytes caps the size of a file resources/read returns;
	// 0 means DefaultMaxResourceBytes.
	MaxResourceBytes int64
	// Skills, when set, serves the skills it finds as prompts and as
	// SEP-2640 resources, and declares the skills extension.
	Skills *SkillSource
	// ProgressInterval is how often a walk or search whose caller sent a
	// progress token reports that it is still going; 0 means
	// DefaultProgressInterval.
	ProgressInterval time.Duration
	// Changes, when set, is shared by every server that should hear of
	// each other's changes (a server per session over one namespace);
	// nil gives the server one of its own. NewShared does not use it:
	// each Target carries its own.
	Changes *Changes
	// ApprovalKey signs the state of an approval the client sends back
	// with the user's answer. Servers that may answer the second round of
	// one another's approvals (replicas behind one URL, stateless) need
	// the same secret key, of at least 32 random bytes; nil gives the
	// server a random key of its own, and an answer that reaches another
	// server is then asked again.
	ApprovalKey []byte
	// ApprovalTTL is how long the user's answer to an approval stays
	// good after the user was asked; a later answer cancels the change
	// (the model is told to retry, which asks again). 0 means
	// DefaultApprovalTTL.
	ApprovalTTL time.Duration
	// Wrap, when set, wraps each tool's handler, so that a command can
	// put its own checks and records (quotas, audit, metrics) around
	// every call, approval rounds included. It is called once per tool
	// when the server is built, with the tool as the server describes it
	// (for NewShared, defs' tool), around the handler of the request's
	// target.
	Wrap func(t *tools.Tool, next mcp.ToolHandler) mcp.ToolHandler
	// SessionID, when set, gives the id of each session the server opens
	// over stateful streamable HTTP (mcp.ServerOptions.GetSessionID), for
	// a server that made the session's storage before the session
	// existed; nil lets the SDK draw a random one.
	SessionID func() string
}

// DefaultMaxResourceBytes is the largest file resources/read returns by
// default: a host attaches it to the model's context whole.
const DefaultMaxResourceBytes = 1 << 20

// New returns an MCP server offering every tool of set, configured by
// opts.
func New(set *tools.Set, opts Options) *mcp.Server {
	if opts.Changes == nil {
		opts.Changes = NewChanges()
	}
	t := &Target{Set: set, Changes: opts.Changes}
	return build(set, opts, func(context.Context) (*Target, error) { return t, nil })
}

// build returns the server offering the tools of defs, whose requests
// work on the target find gives them.
func build(defs *tools.Set, opts Options, find func(context.Context) (*Target, error)) *mcp.Server {
	if opts.Name == "" {
		opts.Name = "fencefs"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.MaxResourceBytes <= 0 {
		opts.MaxResourceBytes = DefaultMaxResourceBytes
	}
	if opts.ProgressInterval <= 0 {
		opts.ProgressInterval = DefaultProgressInterval
	}
	if opts.ApprovalTTL <= 0 {
		opts.ApprovalTTL = DefaultApprovalTTL
	}
	if opts.MaxSubscriptions <= 0 {
		opts.MaxSubscriptions = DefaultMaxSubscriptions
	}
	c := &common{opts: opts, key: opts.ApprovalKey, find: find}
	if len(c.key) == 0 {
		// The key signs the approval state a client echoes back; it
		// lives as long as the server, whose sessions alone can echo it.
		c.key = make([]byte, 32)
		rand.Read(c.key)
	}
	sopts := &mcp.ServerOptions{
		Logger:       SDKLogger(opts.Logger),
		Instructions: opts.Instructions,
		// No MCP logging capability: logs go to the Logger, not to the
		// client.
		Capabilities: &mcp.ServerCapabilities{},
		SetCacheable: private,
		GetSessionID: opts.SessionID,
	}
	if opts.Resources {
		sopts.CompletionHandler = c.onComplete
		sopts.SubscribeHandler = c.onSubscribe
		sopts.UnsubscribeHandler = c.onUnsubscribe
	}
	if opts.Skills != nil {
		sopts.Capabilities.Extensions = map[string]any{SkillsExtension: map[string]any{"directoryRead": true}}
	}
	server := mcp.NewServer(&mcp.Implementation{Name: opts.Name, Version: opts.Version}, sopts)
	c.server = server
	for _, t := range defs.Tools() {
		th := c.dispatch(t.Name)
		if opts.Wrap != nil {
			th = opts.Wrap(t, th)
		}
		server.AddTool(Tool(t), th)
	}
	if opts.Resources {
		server.AddResourceTemplate(fileTemplate(), c.onReadResource)
	}
	if opts.Skills != nil {
		opts.Skills.attach(server)
	}
	server.AddReceivingMiddleware((&handlers{common: c}).gate)
	server.AddSendingMiddleware(toAudience)
	return server
}

// common is what the handlers of one server share, whatever the target
// of a request.
type common struct {
	opts   Options
	server *mcp.Server
	key    []byte
	// find gives the target of a request, from its context.
	find func(context.Context) (*Target, error)
}

// handlers serve one server's requests on one target.
type handlers struct {
	*common
	set *tools.Set
	// changes are the target's: its subscribers hear of its changes.
	changes *Changes
}

// Tool describes a fencefs tool to MCP: its hand-written schema goes out
// unchanged, and its annotations become MCP's hints. A tool that changes
// storage also declares the structured content it returns.
func Tool(t *tools.Tool) *mcp.Tool {
	destructive := t.Annotations.Destructive
	openWorld := false // the tools reach only the configured namespace
	mt := &mcp.Tool{
		Name:        t.Name,
		Description: t.Description,
		InputSchema: compactSchema(t.InputSchema),
		Annotations: &mcp.ToolAnnotations{
			Title:           t.Annotations.Title,
			ReadOnlyHint:    t.Annotations.ReadOnly,
			DestructiveHint: &destructive,
			IdempotentHint:  t.Annotations.Idempotent,
			OpenWorldHint:   &openWorld,
		},
	}
	changes, read := schemasWithText()
	if !t.Annotations.ReadOnly {
		mt.OutputSchema = changes
	} else if schema, ok := read[t.Name]; ok {
		mt.OutputSchema = schema
	}
	return mt
}

// tool calls t with the raw arguments; see result for its errors.
func (h *handlers) tool(t *tools.Tool) mcp.ToolHandler {
	changing := !t.Annotations.ReadOnly
	_, data := outputSchemas[t.Name]
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		start := time.Now()
		var rec *changeRecorder
		if changing {
			rec = &changeRecorder{}
			ctx = tools.WithEventListener(ctx, func(ctx context.Context, ev tools.Event) {
				rec.add(ev)
				h.changes.Changed(ctx, ev)
			}, tools.ReadsNoDiff)
			if h.opts.Approve == ApproveChanges {
				var res *mcp.CallToolResult
				var err error
				if ctx, res, err = h.approval(ctx, t, req, start); res != nil || err != nil {
					return res, err
				}
			}
		}
		var sh shape
		if data {
			ctx = sh.listen(ctx)
		}
		ctx, stop := h.reportProgress(ctx, req, t.Name)
		text, err := t.Call(ctx, req.Params.Arguments)
		stop()
		res := h.result(ctx, t, start, text, err)
		if !res.IsError {
			if rec != nil {
				res.StructuredContent = textFirst{text, rec.result()}
			} else if data {
				res.StructuredContent = textFirst{text, structuredResult(t.Name, text, sh)}
			}
		}
		return res, nil
	}
}

// result maps a tool's answer. Every error is a result with isError set,
// as MCP asks of a tool's own failures (a JSON-RPC error is for the
// protocol): the model gets tools.Message, which names no host path,
// endpoint or credential, and the Logger gets the whole error.
func (h *handlers) result(ctx context.Context, t *tools.Tool, start time.Time, text string, err error) *mcp.CallToolResult {
	logger := h.opts.Logger
	if msg, ok := RetryMessage(err); ok {
		logger.DebugContext(ctx, "tool call refused", "tool", t.Name, "message", msg, "kind", tools.KindOf(err), "duration", time.Since(start))
		return failed(errorResult(msg), err)
	}
	if err != nil {
		level := slog.LevelError
		if errors.Is(err, context.Canceled) {
			level = slog.LevelInfo
		}
		logger.Log(ctx, level, "tool call failed", "tool", t.Name, "error", tools.Cause(err), "duration", time.Since(start))
		return failed(errorResult(tools.Message(err)), err)
	}
	if logger.Enabled(ctx, slog.LevelDebug) {
		logger.DebugContext(ctx, "tool call", "tool", t.Name, "duration", time.Since(start))
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

func errorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// The keys of a failed result's _meta: how the call ended (a
// tools.Outcome: refused, error, cancelled, timed_out) and, for a
// refusal, its kind (a tools.Kind: not_found, conflict, denied, ...), so
// that a host or a wrapper around the server decides by kind, not by
// matching the model's text.
const (
	MetaKind    = "fencefs/kind"
	MetaOutcome = "fencefs/outcome"
)

// failed records err on res: its kind and outcome in res's _meta, and
// err itself for Go code around the handler (res.GetError(), then
// tools.KindOf or errors.Is with a tools.Kind).
func failed(res *mcp.CallToolResult, err error) *mcp.CallToolResult {
	res.SetError(err)
	res.Meta = mcp.Meta{MetaOutcome: string(tools.OutcomeOf(err))}
	if k := tools.KindOf(err); k != tools.KindUnknown {
		res.Meta[MetaKind] = string(k)
	}
	return res
}

// refused is the result of a call the server itself refuses, as a
// refusal of kind with msg for the model.
func refused(kind tools.Kind, msg string) *mcp.CallToolResult {
	return failed(errorResult(msg), tools.Refusal(kind, msg))
}

// ResultKind returns the kind of refusal a tool result of this server
// reports in its _meta, KindUnknown for a result that is no refusal; it
// reads a result as a client receives it, where GetError is nil.
func ResultKind(res *mcp.CallToolResult) tools.Kind {
	if res == nil || !res.IsError {
		return tools.KindUnknown
	}
	k, _ := res.Meta[MetaKind].(string)
	return tools.Kind(k)
}

// RetryMessage returns the message for the model of a retryable error.
func RetryMessage(err error) (string, bool) {
	var r *tools.RetryError
	if !tools.IsRetry(err) || !errors.As(err, &r) {
		return "", false
	}
	return r.Message, true
}

// changesSchema is the output schema of the tools that change storage:
// the files they changed, each with its new content hash.
var changesSchema = json.RawMessage(`{"type":"object","properties":{"changes":{"type":"array","items":{"type":"object",` +
	`"properties":{"kind":{"type":"string","description":"The event: file_written, file_edited, file_deleted, file_moved, file_copied, directory_created, directory_deleted."},` +
	`"path":{"type":"string","description":"The canonical path changed (for a move or copy, the destination)."},` +
	`"from":{"type":"string","description":"For a move or copy, the canonical source path."},` +
	`"hash":{"type":"string","description":"The lowercase hex SHA-256 of the new content, when there is one."}},` +
	`"required":["kind","path"]}}},"required":["changes"]}`)

// change is one entry of a changing tool's structured content.
type change struct {
	Kind string `json:"kind"`
	Path string `json:"path"`
	From string `json:"from,omitempty"`
	Hash string `json:"hash,omitempty"`
}

// changeRecorder collects the changes of one call from its events.
type changeRecorder struct{ changes []change }

func (r *changeRecorder) add(ev tools.Event) {
	if c, ok := changeOf(ev); ok {
		r.changes = append(r.changes, c)
	}
}

func (r *changeRecorder) result() any {
	if r.changes == nil {
		r.changes = []change{}
	}
	return map[string]any{"changes": r.changes}
}

// changeOf describes a changing event; ok is false for a read.
func changeOf(ev tools.Event) (change, bool) {
	switch e := ev.(type) {
	case tools.FileWritten:
		return change{Kind: e.Kind(), Path: e.Path, Hash: e.ContentHash}, true
	case tools.FileEdited:
		return change{Kind: e.Kind(), Path: e.Path, Hash: e.ContentHash}, true
	case tools.FileDeleted:
		return change{Kind: e.Kind(), Path: e.Path}, true
	case tools.FileMoved:
		return change{Kind: e.Kind(), Path: e.To, From: e.From, Hash: e.ContentHash}, true
	case tools.FileCopied:
		return change{Kind: e.Kind(), Path: e.To, From: e.From, Hash: e.ContentHash}, true
	case tools.DirectoryCreated:
		return change{Kind: e.Kind(), Path: e.Path}, true
	case tools.DirectoryDeleted:
		return change{Kind: e.Kind(), Path: e.Path}, true
	}
	return change{}, false
}
