package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"

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

// withCallInfo returns ctx carrying ci, keeping the fields ci leaves
// empty from what ctx carried.
func withCallInfo(ctx context.Context, ci callInfo) context.Context {
	if prev, ok := ctx.Value(callInfoKey{}).(callInfo); ok {
		if ci.tenant == "" {
			ci.tenant = prev.tenant
		}
		if ci.requestID == "" {
			ci.requestID = prev.requestID
		}
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

// Handle implements slog.Handler.
func (h LogHandler) Handle(ctx context.Context, r slog.Record) error {
	ci := callInfoOf(ctx)
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
