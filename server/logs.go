package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"runtime/pprof"
	"sync"
	"unsafe"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tenant"
	"github.com/fencefs/fencefs/tools"
)

// RequestIDHeader carries the id the server gives each HTTP request: set
// on the request, so a tool call finds it in its headers, and on the
// answer, so a client can quote it.
const RequestIDHeader = "X-Request-Id"

// callInfo is what every log line of one request or tool call carries.
type callInfo struct {
	tenant, requestID string
}

type callInfoKey struct{}

// or returns ci with the fields it leaves empty taken from o.
func (ci callInfo) or(o callInfo) callInfo {
	if ci.tenant == "" {
		ci.tenant = o.tenant
	}
	if ci.requestID == "" {
		ci.requestID = o.requestID
	}
	return ci
}

// withCallInfo returns ctx carrying ci, keeping the fields ci leaves
// empty from what ctx carried.
func withCallInfo(ctx context.Context, ci callInfo) context.Context {
	if prev, ok := ctx.Value(callInfoKey{}).(callInfo); ok {
		ci = ci.or(prev)
	}
	return context.WithValue(ctx, callInfoKey{}, ci)
}

// callInfoOf returns the callInfo ctx carries (zero when none).
func callInfoOf(ctx context.Context) callInfo {
	ci, _ := ctx.Value(callInfoKey{}).(callInfo)
	return ci
}

// LogHandler adds the tenant and request id of a record's context (put
// there by RequestID and Logging) to the record, so that every line of
// one call can be found by either.
type LogHandler struct{ slog.Handler }

// Handle implements slog.Handler. A record whose context carries no
// call (the MCP SDK logs without the request's context) takes the call
// its goroutine serves, bound by bindLogs.
func (h LogHandler) Handle(ctx context.Context, r slog.Record) error {
	ci := callInfoOf(ctx)
	if ci.tenant == "" || ci.requestID == "" {
		ci = ci.or(boundCallInfo())
	}
	if ci.tenant != "" {
		r.AddAttrs(slog.String("tenant", ci.tenant))
	}
	if ci.requestID != "" {
		r.AddAttrs(slog.String("request_id", ci.requestID))
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h LogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return LogHandler{h.Handler.WithAttrs(attrs)}
}

// WithGroup implements slog.Handler.
func (h LogHandler) WithGroup(name string) slog.Handler {
	return LogHandler{h.Handler.WithGroup(name)}
}

// namespaceLogs is the handler of an MCP server of one namespace's own
// (a stateful session's, stdio's): the SDK's lines of a session's later
// requests are written by goroutines its first request started, bound to
// no request by then (see bindLogs), so they name the namespace's tenant,
// which no request of that server can change.
type namespaceLogs struct {
	slog.Handler
	tenant string
}

// Handle implements slog.Handler.
func (h namespaceLogs) Handle(ctx context.Context, r slog.Record) error {
	if ci := callInfoOf(ctx); ci.tenant == "" && boundCallInfo().tenant == "" {
		ctx = withCallInfo(ctx, callInfo{tenant: h.tenant})
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h namespaceLogs) WithAttrs(attrs []slog.Attr) slog.Handler {
	return namespaceLogs{h.Handler.WithAttrs(attrs), h.tenant}
}

// WithGroup implements slog.Handler.
func (h namespaceLogs) WithGroup(name string) slog.Handler {
	return namespaceLogs{h.Handler.WithGroup(name), h.tenant}
}

// newRequestID returns a fresh random request id.
func newRequestID() string {
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// RequestID gives each HTTP request an id of the server's (any the
// client sent is replaced: the id is the server's, for its own log), in
// its context, its header and the answer's header.
func RequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := newRequestID()
		r.Header.Set(RequestIDHeader, id)
		w.Header().Set(RequestIDHeader, id)
		next.ServeHTTP(w, r.WithContext(withCallInfo(r.Context(), callInfo{requestID: id})))
	})
}

// Logging is the Link that puts the call's tenant (from its verified
// identity) and request id (from its HTTP request) in the context of a
// tool call, for its log lines (LogHandler) and its audit line.
type Logging struct{}

// Wrap implements Link.
func (Logging) Wrap(_ *tools.Tool, next mcp.ToolHandler) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var ci callInfo
		if req.Extra != nil {
			if id, err := tenant.FromTokenInfo(req.Extra.TokenInfo); err == nil {
				ci.tenant = string(id.Tenant)
			}
			if req.Extra.Header != nil {
				ci.requestID = req.Extra.Header.Get(RequestIDHeader)
			}
		}
		return next(withCallInfo(ctx, ci), req)
	}
}

// Tenant returns the tenant of the call ctx belongs to ("" outside a
// call, or without identities), for telemetry.Options.Tenant.
func Tenant(ctx context.Context) string { return callInfoOf(ctx).tenant }

// The MCP SDK logs with a logger of its server's options, shared by every
// tenant of a tool list, and without the request's context, so its lines
// cannot carry a call's tenant and request id the way fencefs's own do.
// What a request's lines share is their goroutines: the SDK writes its
// lines in the HTTP handler's goroutine (connecting, connect errors, the
// transport's write errors) or in goroutines the handler started (the
// JSON-RPC connection's reader and the handlers of its messages, which
// log a duplicate initialize, a method invalid before initialization, a
// method the new protocol removed). The runtime copies a goroutine's
// profiler labels to every goroutine it starts, so bindLogs gives the
// handler's goroutine labels of the request's own (a fresh label set: a
// new pointer), and LogHandler finds the call by that pointer. The labels
// also name tenant and request id in CPU profiles.
//
// getProfLabel and setProfLabel are the runtime's accessors of a
// goroutine's label pointer, kept for outside use by go.dev/issue/67401.
// The pointer is only compared, never read: an entry is deleted before
// its label set can be freed, and while any goroutine holds the set no
// other can be allocated at its address.

//go:linkname getProfLabel runtime/pprof.runtime_getProfLabel
func getProfLabel() unsafe.Pointer

//go:linkname setProfLabel runtime/pprof.runtime_setProfLabel
func setProfLabel(labels unsafe.Pointer)

// boundCalls maps the label pointer bindLogs gave a request's goroutine
// to the request's callInfo.
var boundCalls = struct {
	sync.Mutex
	m map[unsafe.Pointer]callInfo
}{m: map[unsafe.Pointer]callInfo{}}

// boundCallInfo returns the call the current goroutine serves, if bindLogs
// bound one to it or to the goroutine that started it (zero otherwise).
func boundCallInfo() callInfo {
	p := getProfLabel()
	if p == nil {
		return callInfo{}
	}
	boundCalls.Lock()
	defer boundCalls.Unlock()
	return boundCalls.m[p]
}

// bindLogs binds the tenant (from the request's identity) and request id
// (from RequestID) of each request to the goroutine that serves it and
// to every goroutine it starts, for the lines of the MCP SDK that next
// is (see LogHandler), until the request ends; the goroutine's labels
// are then restored.
func bindLogs(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ci := callInfoOf(r.Context())
		if id, err := tenant.FromContext(r.Context()); err == nil {
			ci.tenant = string(id.Tenant)
		}
		if ci == (callInfo{}) {
			next.ServeHTTP(w, r)
			return
		}
		var labels pprof.LabelSet
		switch {
		case ci.tenant == "":
			labels = pprof.Labels("request_id", ci.requestID)
		case ci.requestID == "":
			labels = pprof.Labels("tenant", ci.tenant)
		default:
			labels = pprof.Labels("tenant", ci.tenant, "request_id", ci.requestID)
		}
		prev := getProfLabel()
		pprof.SetGoroutineLabels(pprof.WithLabels(r.Context(), labels))
		key := getProfLabel()
		boundCalls.Lock()
		boundCalls.m[key] = ci
		boundCalls.Unlock()
		defer func() {
			boundCalls.Lock()
			delete(boundCalls.m, key)
			boundCalls.Unlock()
			setProfLabel(prev)
		}()
		next.ServeHTTP(w, r)
	})
}
