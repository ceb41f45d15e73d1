package mcpserver

import (
	"context"
	"log/slog"
)

// SDKLogger returns the logger to give the MCP SDK (its server options,
// its streamable HTTP handler's) in place of l: the SDK's informational
// lines (connecting, a session connected, initialized, disconnected) come
// down to debug, its warnings and errors stay; over stateless HTTP every
// request would otherwise cost three lines though nothing happened. The
// SDK writes its lines without the request's context; l's handler finds
// the request by other means if it can (server.LogHandler does, by the
// goroutine that serves the request).
func SDKLogger(l *slog.Logger) *slog.Logger {
	return slog.New(sdkHandler{l.Handler()})
}

// sdkHandler demotes records below warning to debug.
type sdkHandler struct{ slog.Handler }

func sdkLevel(l slog.Level) slog.Level {
	if l < slog.LevelWarn {
		return slog.LevelDebug
	}
	return l
}

func (h sdkHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.Handler.Enabled(ctx, sdkLevel(l))
}

func (h sdkHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Level = sdkLevel(r.Level)
	return h.Handler.Handle(ctx, r)
}

func (h sdkHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return sdkHandler{h.Handler.WithAttrs(attrs)}
}

func (h sdkHandler) WithGroup(name string) slog.Handler {
	return sdkHandler{h.Handler.WithGroup(name)}
}
