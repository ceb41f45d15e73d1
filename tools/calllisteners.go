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
	// change and event are in the order they were added; the slices are
	// never appended to in place, as contexts derived from one another
	// share them.
	change []func(context.Context, *ChangeRequest) error
	commit []func(context.Context, *ChangeRequest) error
	event  []func(context.Context, Event)
	ended  []func(ctx context.Context, tool string, err error)
	walked *atomic.Int64
	lines  func(pathLens []int)
	// changeDiffs and eventDiffs: a change (or before-commit) listener,
	// an event listener, that reads diffs is among them.
	changeDiffs, eventDiffs bool
}

// ListenerOption describes a listener added to a context with
// [WithChangeListener], [WithBeforeCommit] or [WithEventListener].
type ListenerOption int

// ReadsNoDiff says the listener never reads a diff (ChangeRequest.Diff
// and Truncated, FileEdited.Diff and Truncated). A change that only such
// listeners hear carries none (Diff empty, Truncated false), and the
// tools do not build it: comparing the old text with the new is most of
// what listening adds to an edit. A listener that binds or shows the
// change to a person (an approval) reads the diff and must not say this.
const ReadsNoDiff ListenerOption = 1

// readsDiffs reports whether a listener added with opts reads diffs.
func readsDiffs(opts []ListenerOption) bool {
	for _, o := range opts {
		if o == ReadsNoDiff {
			return false
		}
	}
	return true
}

// WithChangeListener returns a copy of ctx under which every tool call
// also announces its change requests to fn, after Options.OnChangeRequest
// and the change listeners ctx already carries, in the order they were
// added, and only when none of them failed or cancelled the change: the
// first error or Cancel stops the change, and the listeners after it do
// not hear of it. fn may Cancel the request; the re-check after it and
// the result text of a cancelled change are the same as for
// Options.OnChangeRequest. A listener added by an outer caller (a
// quota's reservation) thus still runs when an inner one (an approval)
// adds its own, and can tell from req.Cancelled after the call whether
// the change it saw was let through. See [ReadsNoDiff] for opts.
func WithChangeListener(ctx context.Context, fn func(context.Context, *ChangeRequest) error, opts ...ListenerOption) context.Context {
	l := listenersOf(ctx)
	l.change = append(l.change[:len(l.change):len(l.change)], fn)
	l.changeDiffs = l.changeDiffs || readsDiffs(opts)
	return context.WithValue(ctx, callListenersKey{}, l)
}

// WithBeforeCommit returns a copy of ctx under which every change request
// of a tool call is also given to fn once Options.OnChangeRequest and
// every change listener let it through (none failed or cancelled it),
// just before the change is made: the change an approval asked the user
// about is heard only in the round the user accepted it. fn may Cancel
// the request or fail, as a change listener may; a server appends its
// write-ahead audit record there (audit.Logger.Append) and cancels the
// change when the record cannot be written. Hooks run in the order they
// were added. See [ReadsNoDiff] for opts.
func WithBeforeCommit(ctx context.Context, fn func(context.Context, *ChangeRequest) error, opts ...ListenerOption) context.Context {
	l := listenersOf(ctx)
	l.commit = append(l.commit[:len(l.commit):len(l.commit)], fn)
	l.changeDiffs = l.changeDiffs || readsDiffs(opts)
	return context.WithValue(ctx, callListenersKey{}, l)
}

// commitWaitsKey keys the commitWaits of the change a tool announces.
type commitWaitsKey struct{}

// commitWaits are the functions listeners gave WaitBeforeCommit for the
// change req.
type commitWaits struct {
	req   *ChangeRequest
	hooks []func() error
}

// WaitBeforeCommit asks the tool that announced req under ctx (the
// context a change listener is given) to call fn once the change is let
// through (no listener failed or cancelled it) and its new content is
// staged, just before it becomes visible: a listener starts slow work
// when it hears of the change (a checkpoint journal storing the
// pre-image) and the tool's own staging (a temporary file and its sync)
// overlaps it. An error from fn fails the change with nothing committed,
// as an error from the listener would. A change that is cancelled, or
// fails before its commit, never calls fn: work fn waits for must end on
// its own. Only the write of one file (write_file, edit_file) can wait;
// for any other change WaitBeforeCommit keeps nothing and reports false,
// and the listener must finish its work before it returns.
func WaitBeforeCommit(ctx context.Context, req *ChangeRequest, fn func() error) bool {
	w, ok := ctx.Value(commitWaitsKey{}).(*commitWaits)
	if !ok || w.req != req {
		return false
	}
	w.hooks = append(w.hooks, fn)
	return true
}

// withCommitWaits returns a copy of ctx under which listeners of req may
// use WaitBeforeCommit, and what they give it.
func withCommitWaits(ctx context.Context, req *ChangeRequest) (context.Context, *commitWaits) {
	w := &commitWaits{req: req}
	return context.WithValue(ctx, commitWaitsKey{}, w), w
}

// run calls the functions given to WaitBeforeCommit, in order, and
// returns the first error.
func (w *commitWaits) run() error {
	for _, fn := range w.hooks {
		if err := fn(); err != nil {
			return err
		}
	}
	return nil
}

// WithEventListener returns a copy of ctx under which every tool call
// also reports its events to fn, after Options.OnEvent and the event
// listeners ctx already carries, in the order they were added: every
// listener hears every event. See [ReadsNoDiff] for opts.
func WithEventListener(ctx context.Context, fn func(context.Context, Event), opts ...ListenerOption) context.Context {
	l := listenersOf(ctx)
	l.event = append(l.event[:len(l.event):len(l.event)], fn)
	l.eventDiffs = l.eventDiffs || readsDiffs(opts)
	return context.WithValue(ctx, callListenersKey{}, l)
}

// WithCallEnd returns a copy of ctx under which every Tool.Call tells fn,
// after the listeners of this kind ctx already carries, how it ended: the
// tool's name and the error the call returns (nil when it succeeded).
// A host that sees only a protocol's result (an MCP tool handler's
// isError) learns from it the refusal's kind ([KindOf]) and how the call
// really ended ([OutcomeOf]). A server that runs a tool more than once
// for one request (an approval's two rounds) reports each run; the last
// is the request's answer.
func WithCallEnd(ctx context.Context, fn func(ctx context.Context, tool string, err error)) context.Context {
	l := listenersOf(ctx)
	l.ended = append(l.ended[:len(l.ended):len(l.ended)], fn)
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

// changeDiffs reports whether a change under ctx is heard by a listener
// that reads its diff, so that the diff must be built.
func (s *Set) changeDiffs(ctx context.Context) bool {
	return s.opts.OnChangeRequest != nil && !s.opts.ListenersReadNoDiff || listenersOf(ctx).changeDiffs
}

// eventDiffs reports whether an event emitted under ctx reaches a
// listener that reads its diff (FileEdited.Diff).
func (s *Set) eventDiffs(ctx context.Context) bool {
	return s.ownEvents(ctx) && !s.opts.ListenersReadNoDiff || listenersOf(ctx).eventDiffs
}

// changeListener returns the listener a change under ctx announces to:
// Options.OnChangeRequest, then the context's in the order they were
// added, each only while none before it failed or cancelled the change;
// or nil for none (whether a diff is built for them: changeDiffs).
func (s *Set) changeListener(ctx context.Context) func(context.Context, *ChangeRequest) error {
	l := listenersOf(ctx)
	own, call := s.opts.OnChangeRequest, l.change
	if len(l.commit) > 0 {
		call = append(call[:len(call):len(call)], l.commit...)
	}
	switch {
	case own == nil && len(call) == 0:
		return nil
	case own != nil && len(call) == 0:
		return own
	case own == nil && len(call) == 1:
		return call[0]
	}
	return func(ctx context.Context, req *ChangeRequest) error {
		if own != nil {
			if err := own(ctx, req); err != nil {
				return err
			}
		}
		for _, fn := range call {
			if _, ok := req.Cancelled(); ok {
				return nil
			}
			if err := fn(ctx, req); err != nil {
				return err
			}
		}
		return nil
	}
}
