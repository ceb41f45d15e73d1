// Package telemetry traces fencefs with OpenTelemetry: a span per tool
// call, as a link of a server's chain ([Tracing.Wrap]) or around an
// in-process call ([Tracing.Call]); a child span per storage operation
// ([Tracing.Backend]) and per S3 HTTP request ([Tracing.S3ClientOptions]);
// and the caller's trace context taken from HTTP headers
// ([Tracing.Extract]) and from an MCP request's _meta, so that a
// platform's trace continues through fencefs.
//
// Tracing costs nothing when it is off: [New] returns nil without a
// TracerProvider, and a nil *Tracing wraps nothing (its Wrap returns the
// handler it is given, its Backend the backend).
//
// Paths are sensitive: spans name them only when Options.Paths says so.
package telemetry

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/fencefs/fencefs/tools"
)

// ScopeName is the instrumentation scope of fencefs's spans.
const ScopeName = "github.com/fencefs/fencefs/telemetry"

// The attributes of a tool call's span.
const (
	// AttrTool is the tool's name ("read_file").
	AttrTool = attribute.Key("fencefs.tool")
	// AttrTenant is the tenant of the call, when Options.Tenant names one.
	AttrTenant = attribute.Key("fencefs.tenant")
	// AttrOutcome is how the call ended ([tools.Outcome]: ok, refused,
	// error, cancelled, timed_out).
	AttrOutcome = attribute.Key("fencefs.outcome")
	// AttrRefusal is the kind of a refusal ([tools.Kind]), on a refused
	// or timed-out call.
	AttrRefusal = attribute.Key("fencefs.refusal.kind")
	// AttrArgsBytes is the size of the call's JSON arguments.
	AttrArgsBytes = attribute.Key("fencefs.request.bytes")
	// AttrResultBytes is the size of the text the call returns.
	AttrResultBytes = attribute.Key("fencefs.response.bytes")
	// AttrDurationMS is the call's duration in milliseconds, for
	// backends that query attributes rather than span times.
	AttrDurationMS = attribute.Key("fencefs.duration_ms")
	// AttrPaths are the paths a call acted on (as the model named them),
	// only with Options.Paths.
	AttrPaths = attribute.Key("fencefs.paths")
)

// The attributes of a storage operation's span.
const (
	// AttrOperation is the backend operation ("open_read", "list",
	// "stat", "commit", ...).
	AttrOperation = attribute.Key("fencefs.storage.operation")
	// AttrStorage names the storage (a mount's name, or the backend's
	// kind: "s3", "local").
	AttrStorage = attribute.Key("fencefs.storage.name")
	// AttrPath is the storage path, only with Options.Paths.
	AttrPath = attribute.Key("fencefs.storage.path")
	// AttrBytes is the number of bytes a read or a write moved.
	AttrBytes = attribute.Key("fencefs.storage.bytes")
)

// Options configure tracing.
type Options struct {
	// TracerProvider makes the spans. Nil turns tracing off: New returns
	// nil.
	TracerProvider trace.TracerProvider
	// Propagator reads the caller's trace context; nil is W3C Trace
	// Context (traceparent, tracestate).
	Propagator propagation.TextMapPropagator
	// Tenant, when set, names the tenant of a call from its context (a
	// server's authenticated caller); "" records none.
	Tenant func(ctx context.Context) string
	// Paths records the paths of tool calls and storage operations on
	// their spans. Off by default: paths can be sensitive.
	Paths bool
}

// Tracing makes the spans of tool calls and storage operations. A nil
// *Tracing is tracing turned off: every method returns what it wraps
// unchanged. It is safe for concurrent use.
type Tracing struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	opts   Options
}

// New returns the tracing opts describe, or nil when opts has no
// TracerProvider, so that a server built without one allocates no span.
func New(opts Options) *Tracing {
	if opts.TracerProvider == nil {
		return nil
	}
	prop := opts.Propagator
	if prop == nil {
		prop = propagation.TraceContext{}
	}
	return &Tracing{tracer: opts.TracerProvider.Tracer(ScopeName), prop: prop, opts: opts}
}

// Extract returns ctx carrying the remote span context the HTTP headers h
// name (traceparent), for the spans started under it; ctx unchanged
// without one.
func (t *Tracing) Extract(ctx context.Context, h propagation.TextMapCarrier) context.Context {
	if t == nil {
		return ctx
	}
	return t.prop.Extract(ctx, h)
}

// metaCarrier reads an MCP request's _meta as a propagation carrier:
// string values only.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string { s, _ := m[key].(string); return s }
func (m metaCarrier) Set(key, value string) { m[key] = value }
func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// InjectMeta sets the trace context of ctx into an MCP request's _meta
// (traceparent, tracestate), for a client that calls fencefs and wants
// its trace continued; meta must not be nil.
func (t *Tracing) InjectMeta(ctx context.Context, meta map[string]any) {
	if t == nil {
		return
	}
	t.prop.Inject(ctx, metaCarrier(meta))
}

// fromMeta returns ctx under the trace context of meta when it holds one
// (traceparent in an MCP request's _meta, which names the call more
// closely than the HTTP request that carried it), ctx otherwise.
func (t *Tracing) fromMeta(ctx context.Context, meta map[string]any) context.Context {
	if len(meta) == 0 {
		return ctx
	}
	if _, ok := meta["traceparent"]; !ok {
		return ctx
	}
	return t.prop.Extract(ctx, metaCarrier(meta))
}

// call is one tool call being traced.
type call struct {
	t     *Tracing
	span  trace.Span
	start time.Time
	ended bool
	err   error
	paths []string
}

// begin starts the span of a call of tool under ctx.
func (t *Tracing) begin(ctx context.Context, tool string, args int, kind trace.SpanKind) (context.Context, *call) {
	start := time.Now()
	ctx, span := t.tracer.Start(ctx, "tools/call "+tool, trace.WithSpanKind(kind), trace.WithTimestamp(start),
		trace.WithAttributes(AttrTool.String(tool), attribute.String("mcp.method.name", "tools/call"),
			attribute.String("gen_ai.tool.name", tool), AttrArgsBytes.Int(args)))
	if t.opts.Tenant != nil {
		if id := t.opts.Tenant(ctx); id != "" {
			span.SetAttributes(AttrTenant.String(id))
		}
	}
	c := &call{t: t, span: span, start: start}
	ctx = tools.WithCallEnd(ctx, c.noteEnd)
	if t.opts.Paths {
		ctx = tools.WithEventListener(ctx, c.noteEvent, tools.ReadsNoDiff)
	}
	return ctx, c
}

// noteEnd keeps how the tool's run ended; the last run is the call's.
func (c *call) noteEnd(_ context.Context, _ string, err error) {
	c.ended, c.err = true, err
}

// noteEvent keeps the paths an event names.
func (c *call) noteEvent(_ context.Context, ev tools.Event) {
	switch e := ev.(type) {
	case tools.FileRead:
		c.paths = append(c.paths, e.Path)
	case tools.DirectoryListed:
		c.paths = append(c.paths, e.Path)
	case tools.FileWritten:
		c.paths = append(c.paths, e.Path)
	case tools.FileEdited:
		c.paths = append(c.paths, e.Path)
	case tools.FileDeleted:
		c.paths = append(c.paths, e.Path)
	case tools.FileMoved:
		c.paths = append(c.paths, e.From, e.To)
	case tools.DirectoryCreated:
		c.paths = append(c.paths, e.Path)
	case tools.FilesSearched:
		c.paths = append(c.paths, e.Path)
	}
}

// finish ends the span: the outcome is the tool's own error when it
// failed, refused when the result is marked as an error all the same (a
// link refused the call before the tool ran, or after: a quota that
// cancelled its change; refusal, the result's Go error, then gives its
// kind), failed when the handler failed, ok otherwise.
func (c *call) finish(resultBytes int, refused bool, refusal, failed error) {
	outcome, kind := tools.OutcomeOK, tools.Kind("")
	switch {
	case failed != nil:
		outcome = tools.OutcomeOf(failed)
		c.span.RecordError(failed)
	case c.ended && c.err != nil:
		outcome = tools.OutcomeOf(c.err)
		if tools.IsRetry(c.err) {
			kind = tools.KindOf(c.err)
		} else {
			c.span.RecordError(c.err)
		}
	case refused:
		outcome = tools.OutcomeRefused
		if tools.IsRetry(refusal) {
			outcome, kind = tools.OutcomeOf(refusal), tools.KindOf(refusal)
		}
	}
	end := time.Now()
	c.span.SetAttributes(AttrOutcome.String(string(outcome)), AttrResultBytes.Int(resultBytes),
		AttrDurationMS.Float64(float64(end.Sub(c.start))/float64(time.Millisecond)))
	if kind != "" {
		c.span.SetAttributes(AttrRefusal.String(string(kind)))
	}
	if len(c.paths) > 0 {
		c.span.SetAttributes(AttrPaths.StringSlice(c.paths))
	}
	if outcome == tools.OutcomeError {
		c.span.SetStatus(codes.Error, string(outcome))
	}
	c.span.End(trace.WithTimestamp(end))
}

// Wrap implements the Link of a server's chain (server.Link): a span per
// call of t, a child of the trace the request's _meta names (traceparent,
// tracestate), or else the one its HTTP request's headers name, or else
// the one in ctx. A nil *Tracing returns next.
func (t *Tracing) Wrap(tool *tools.Tool, next mcp.ToolHandler) mcp.ToolHandler {
	if t == nil {
		return next
	}
	name := tool.Name
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := 0
		if req != nil && req.Extra != nil && req.Extra.Header.Get("traceparent") != "" {
			ctx = t.prop.Extract(ctx, propagation.HeaderCarrier(req.Extra.Header))
		}
		if req != nil && req.Params != nil {
			ctx = t.fromMeta(ctx, req.Params.Meta)
			args = len(req.Params.Arguments)
		}
		ctx, c := t.begin(ctx, name, args, trace.SpanKindServer)
		res, err := next(ctx, req)
		n := 0
		if res != nil {
			for _, content := range res.Content {
				if tc, ok := content.(*mcp.TextContent); ok {
					n += len(tc.Text)
				}
			}
		}
		var refusal error
		if res != nil && res.IsError {
			refusal = res.GetError()
		}
		c.finish(n, res != nil && res.IsError, refusal, err)
		return res, err
	}
}

// Call runs tool with args under a span, as [Tracing.Wrap] does for a
// server: for a host that calls the tools in process (a framework's tool
// loop). A nil *Tracing calls the tool alone.
func (t *Tracing) Call(ctx context.Context, tool *tools.Tool, args json.RawMessage) (string, error) {
	if t == nil {
		return tool.Call(ctx, args)
	}
	ctx, c := t.begin(ctx, tool.Name, len(args), trace.SpanKindInternal)
	text, err := tool.Call(ctx, args)
	c.finish(len(text), false, nil, nil)
	return text, err
}

// Handler returns next under the trace context of each request's
// headers (traceparent, tracestate), so that the spans of the tool calls
// it answers continue the caller's trace. A nil *Tracing returns next.
func (t *Tracing) Handler(next http.Handler) http.Handler {
	if t == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("traceparent") == "" {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r.WithContext(t.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))))
	})
}
