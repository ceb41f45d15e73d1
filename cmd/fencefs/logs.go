package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tenant"
)

// requestIDHeader carries the id the server gives each HTTP request: set
// on the request, so a tool call finds it in its headers, and on the
// answer, so a client can quote it.
const requestIDHeader = "X-Request-Id"

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

// callHandler adds the tenant and request id of a record's context to
// the record, so every line of one call can be found by either.
type callHandler struct{ slog.Handler }

func (h callHandler) Handle(ctx context.Context, r slog.Record) error {
	ci := callInfoOf(ctx)
	if ci.tenant != "" {
		r.AddAttrs(slog.String("tenant", ci.tenant))
	}
	if ci.requestID != "" {
		r.AddAttrs(slog.String("request_id", ci.requestID))
	}
	return h.Handler.Handle(ctx, r)
}

func (h callHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return callHandler{h.Handler.WithAttrs(attrs)}
}

func (h callHandler) WithGroup(name string) slog.Handler {
	return callHandler{h.Handler.WithGroup(name)}
}

// newLogger logs to w at level, as text or (format "json") one JSON
// object a line.
func newLogger(w io.Writer, level slog.Level, format string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if format == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(callHandler{h})
}

// newRequestID returns a fresh random request id.
func newRequestID() string {
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// withRequestID gives each HTTP request an id of the server's (any the
// client sent is replaced: the id is the server's, for its own log), in
// its context, its header and the answer's header.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := newRequestID()
		r.Header.Set(requestIDHeader, id)
		w.Header().Set(requestIDHeader, id)
		next.ServeHTTP(w, r.WithContext(withCallInfo(r.Context(), callInfo{requestID: id})))
	})
}

// logged puts the call's tenant (from its verified token) and request id
// (from its HTTP request) in the context of a tool call, for its log
// lines and its audit line.
func logged(next mcp.ToolHandler) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var ci callInfo
		if req.Extra != nil {
			if id, err := tenant.FromTokenInfo(req.Extra.TokenInfo); err == nil {
				ci.tenant = string(id.Tenant)
			}
			if req.Extra.Header != nil {
				ci.requestID = req.Extra.Header.Get(requestIDHeader)
			}
		}
		return next(withCallInfo(ctx, ci), req)
	}
}
