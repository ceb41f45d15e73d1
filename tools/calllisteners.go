package tools

import (
	"context"
	"sync/atomic"

	"github.com/fencefs/fencefs/tools/internal/textsearch"
)

// callListenersKey keys the per-call listeners in a context.
type callListenersKey struct{}

// callListeners are listeners that travel with one call's context rather
// than with the Set, so that a server sharing one Set among many callers
// (an MCP server with many sessions) can ask and tell the caller's own
// host.
type callListeners struct {
	change func(context.Context, *ChangeRequest) error
	event  func(context.Context, Event)
	walked *atomic.Int64
	lines  func(pathLens []int)
}

// WithChangeListener returns a copy of ctx under which every tool call
// also announces its change requests to fn, after Options.OnChangeRequest
// and only when that did not cancel the change. fn may Cancel the
// request; the re-check after it and the result text of a cancelled
// change are the same as for Options.OnChangeRequest.
func WithChangeListener(ctx context.Context, fn func(context.Context, *ChangeRequest) error) context.Context {
	l := listenersOf(ctx)
	l.change = fn
	return context.WithValue(ctx, callListenersKey{}, l)
}

// WithEventListener returns a copy of ctx under which every tool call
// also reports its events to fn, after Options.OnEvent.
func WithEventListener(ctx context.Context, fn func(context.Context, Event)) context.Context {
	l := listenersOf(ctx)
	l.event = fn
	return context.WithValue(ctx, callListenersKey{}, l)
}

// WithWalkCounter returns a copy of ctx under which the walkers
// (search_files, find_files, list_files, grep) add one to n for each
// entry they visit (grep through ripgrep: each file ripgrep reports), so
// that a caller can tell how far a long walk has come while it runs.
func WithWalkCounter(ctx context.Context, n *atomic.Int64) context.Context {
	l := listenersOf(ctx)
	l.walked = n
	return context.WithValue(ctx, callListenersKey{}, l)
}

// WithPrintedPaths returns a copy of ctx under which search_files and
// grep give fn, before they return their text, the byte length of the
// path that starts each of its match and context lines, in order ("--"
// separators are not lines), so that a caller can split the lines exactly
// although a path may itself hold ":12:".
func WithPrintedPaths(ctx context.Context, fn func(pathLens []int)) context.Context {
	l := listenersOf(ctx)
	l.lines = fn
	return context.WithValue(ctx, callListenersKey{}, l)
}

// newPrinter returns the printer of a search under ctx, recording its
// paths when the call's caller asked for them.
func newPrinter(ctx context.Context, maxLines int, separators bool) *textsearch.Printer {
	pr := textsearch.NewPrinter(maxLines, separators)
	if listenersOf(ctx).lines != nil {
		pr.RecordPaths()
	}
	return pr
}

// reportPrinted gives the caller of ctx the paths' lengths of pr, the
// printer whose text the search returns.
func reportPrinted(ctx context.Context, pr *textsearch.Printer) {
	if fn := listenersOf(ctx).lines; fn != nil {
		fn(pr.PathLens())
	}
}

func listenersOf(ctx context.Context) callListeners {
	l, _ := ctx.Value(callListenersKey{}).(callListeners)
	return l
}

// changeListener returns the listener a change under ctx announces to:
// Options.OnChangeRequest, the context's, both in that order, or nil for
// none (then no diff needs to be built for it).
func (s *Set) changeListener(ctx context.Context) func(context.Context, *ChangeRequest) error {
	own, call := s.opts.OnChangeRequest, listenersOf(ctx).change
	switch {
	case own == nil:
		return call
	case call == nil:
		return own
	}
	return func(ctx context.Context, req *ChangeRequest) error {
		if err := own(ctx, req); err != nil {
			return err
		}
		if _, ok := req.Cancelled(); ok {
			return nil
		}
		return call(ctx, req)
	}
}
