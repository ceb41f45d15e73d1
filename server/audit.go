package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/audit"
	"github.com/fencefs/fencefs/tenant"
	"github.com/fencefs/fencefs/tools"
)

// callNotes collects, for the audit line of one call, what the tools'
// events say it changed.
type callNotes struct {
	mu      sync.Mutex
	paths   []string
	newHash string
	oldHash string
	// requests are the call's change requests, which a later listener
	// (the user's approval) may cancel.
	requests []*tools.ChangeRequest
}

// noteChangeRequest records req in the notes of the call whose context is
// ctx, so that its line can tell a change the user declined from one
// made: the request is announced before the approval decides.
func noteChangeRequest(ctx context.Context, req *tools.ChangeRequest) {
	if n, ok := ctx.Value(callNotesKey{}).(*callNotes); ok {
		n.mu.Lock()
		n.requests = append(n.requests, req)
		n.mu.Unlock()
	}
}

// cancelled returns the reason when the call announced changes and every
// one was cancelled, so nothing was changed.
func (n *callNotes) cancelled() (reason string, ok bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for i, r := range n.requests {
		why, c := r.Cancelled()
		if !c {
			return "", false
		}
		if i == 0 {
			reason = why
		}
	}
	return reason, len(n.requests) > 0
}

type callNotesKey struct{}

// noteEvent records ev in the notes of the call whose context is ctx.
func noteEvent(ctx context.Context, ev tools.Event) {
	n, ok := ctx.Value(callNotesKey{}).(*callNotes)
	if !ok {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	add := func(ps ...string) {
		for _, p := range ps {
			if !slices.Contains(n.paths, p) {
				n.paths = append(n.paths, p)
			}
		}
	}
	switch e := ev.(type) {
	case tools.FileWritten:
		add(e.Path)
		n.newHash = e.ContentHash
	case tools.FileEdited:
		add(e.Path)
		n.newHash = e.ContentHash
	case tools.FileDeleted:
		add(e.Path)
		n.oldHash = e.ContentHash
	case tools.FileMoved:
		add(e.From, e.To)
		n.newHash = e.ContentHash
	case tools.FileCopied:
		add(e.From, e.To)
		n.newHash = e.ContentHash
	case tools.DirectoryCreated:
		add(e.Path)
	case tools.FileRead:
		add(e.Path)
	}
}

// Audit is the Link that writes one audit line per changing call (per
// call with Reads): who, which tool, which paths and hashes, and how the
// call ended. A change the user declined is logged as refused.
type Audit struct {
	// Log is where the lines go; nil logs nothing.
	Log *audit.Logger
	// Reads logs the reading calls too.
	Reads bool
	// Health, when set, remembers that the log's storage failed, after
	// which every changing call is refused before it runs (fail closed);
	// Server sets one and reports it in its log, /readyz and /metrics.
	Health *AuditHealth
}

// AuditHealth remembers the failure of an audit log's storage (a write or
// sync that failed: disk full, file size limit, I/O error). A failed
// record (one the log refuses as it is) does not break the log. An
// AuditHealth is safe for concurrent use; a nil one remembers nothing.
type AuditHealth struct {
	mu  sync.Mutex
	err error
	// logger says once that the log broke.
	logger *slog.Logger
}

// NewAuditHealth returns an AuditHealth that logs to logger (nil: no
// log) when the audit log breaks.
func NewAuditHealth(logger *slog.Logger) *AuditHealth {
	return &AuditHealth{logger: logger}
}

// Err returns why the audit log is broken, or nil.
func (h *AuditHealth) Err() error {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// note records err, a failure of Log, when it is a failure of the log's
// storage.
func (h *AuditHealth) note(ctx context.Context, err error) {
	var pe *fs.PathError
	if h == nil || !errors.As(err, &pe) {
		return
	}
	h.mu.Lock()
	first := h.err == nil
	if first {
		h.err = err
	}
	h.mu.Unlock()
	if first && h.logger != nil {
		h.logger.ErrorContext(ctx, "the audit log cannot be written: changes are refused until the server is restarted with a working log", "error", err)
	}
}

// auditBroken is what the model is told of a change refused because the
// audit log cannot be written.
const auditBroken = "the audit log could not be written; the server refuses changes until it is fixed"

// brokenRefusal is the result of a change refused because the audit log
// failed with err: of kind tools.KindUnavailable, wrapping
// ErrAuditBroken and err.
func brokenRefusal(err error) *mcp.CallToolResult {
	return refusal(tools.KindUnavailable, auditBroken, fmt.Errorf("%w: %w", ErrAuditBroken, err))
}

// Wrap implements Link.
func (a Audit) Wrap(t *tools.Tool, next mcp.ToolHandler) mcp.ToolHandler {
	log := a.Log
	if log == nil || t.Annotations.ReadOnly && !a.Reads {
		return next
	}
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if !t.Annotations.ReadOnly {
			if herr := a.Health.Err(); herr != nil {
				return brokenRefusal(herr), nil
			}
		}
		start := time.Now()
		notes := &callNotes{}
		end := &callEnd{}
		cctx := tools.WithCallEnd(context.WithValue(ctx, callNotesKey{}, notes), end.note)
		if !t.Annotations.ReadOnly {
			cctx = tools.WithBeforeCommit(cctx, a.writeAhead(t.Name, req), tools.ReadsNoDiff)
		}
		res, err := next(cctx, req)
		if res != nil && len(res.InputRequests) > 0 {
			// The first round of an approval: the user has yet to
			// answer and nothing changed; the round that follows the
			// answer is the one logged.
			return res, err
		}
		rec := audit.Record{Time: start, RequestID: callInfoOf(ctx).requestID, Tool: t.Name, Outcome: audit.OutcomeOK, Duration: time.Since(start)}
		if req.Extra != nil {
			if id, idErr := tenant.FromTokenInfo(req.Extra.TokenInfo); idErr == nil {
				rec.Tenant, rec.Subject = string(id.Tenant), id.Subject
			}
		}
		var args struct {
			Path         string `json:"path"`
			Content      string `json:"content"`
			ExpectedHash string `json:"expected_hash"`
		}
		_ = json.Unmarshal(req.Params.Arguments, &args)
		notes.mu.Lock()
		rec.Paths, rec.NewHash, rec.OldHash = notes.paths, notes.newHash, notes.oldHash
		notes.mu.Unlock()
		if rec.OldHash == "" {
			rec.OldHash = args.ExpectedHash
		}
		if len(rec.Paths) == 0 && args.Path != "" {
			rec.Paths = []string{args.Path}
		}
		var kind tools.Kind
		rec.Outcome, kind, rec.Reason = outcome(err, res, end, notes)
		rec.Kind = string(kind)
		if rec.Outcome == audit.OutcomeOK {
			// Only a call that did what it was asked wrote its bytes.
			rec.Bytes = int64(len(args.Content))
		}
		if lerr := log.Log(rec); lerr != nil {
			// What cannot be recorded must not look like success to the
			// operator, and no further change is made unrecorded.
			a.Health.note(ctx, lerr)
			return brokenRefusal(lerr), nil
		}
		return res, err
	}
}

// writeAhead returns the change listener that appends, durably
// (audit.Logger.Append), a pending line for each change of the call req
// before the change commits; a change whose line cannot be appended is
// cancelled, and the log is then broken for every later change.
func (a Audit) writeAhead(tool string, req *mcp.CallToolRequest) func(context.Context, *tools.ChangeRequest) error {
	return func(ctx context.Context, cr *tools.ChangeRequest) error {
		if _, cancelled := cr.Cancelled(); cancelled {
			return nil
		}
		rec := audit.Record{RequestID: callInfoOf(ctx).requestID, Tool: tool, Outcome: audit.OutcomePending}
		if req.Extra != nil {
			if id, err := tenant.FromTokenInfo(req.Extra.TokenInfo); err == nil {
				rec.Tenant, rec.Subject = string(id.Tenant), id.Subject
			}
		}
		if cr.Source != "" {
			rec.Paths = append(rec.Paths, cr.Source)
		}
		rec.Paths = append(rec.Paths, cr.Path)
		for _, c := range cr.Sizes {
			if !slices.Contains(rec.Paths, c.Path) {
				rec.Paths = append(rec.Paths, c.Path)
			}
		}
		if err := a.Log.Append(rec); err != nil {
			a.Health.note(ctx, err)
			cr.Cancel(auditBroken)
		}
		return nil
	}
}

// callEnd is how the tool's own call ended (tools.WithCallEnd): the
// error it returned, whose kind tells a refusal from a failure, a
// cancellation or a deadline, which an MCP result's isError does not.
type callEnd struct {
	mu  sync.Mutex
	ran bool
	err error
}

func (e *callEnd) note(_ context.Context, _ string, err error) {
	e.mu.Lock()
	e.ran, e.err = true, err
	e.mu.Unlock()
}

// outcome returns the audit outcome, refusal kind and reason of a call
// that returned res and err, the tool having ended as end says: a refusal
// is refused; a failure of the storage, a cancellation and a deadline are
// errors (the reason says which); a change every listener let through but
// the user declined is refused; a result the server's own links refused
// (a quota, a scope, the require-read guard) is refused, with the kind
// of its error (res.GetError()), which wins over the tool's: a quota
// that cancelled a change the tool reported as not made.
func outcome(err error, res *mcp.CallToolResult, end *callEnd, notes *callNotes) (outcome string, kind tools.Kind, reason string) {
	text := ""
	if res != nil && len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	if err != nil {
		return audit.OutcomeError, tools.KindUnknown, err.Error()
	}
	var resErr error
	if res != nil && res.IsError {
		resErr = res.GetError()
	}
	end.mu.Lock()
	ran, toolErr := end.ran, end.err
	end.mu.Unlock()
	if ran && toolErr != nil && (resErr == nil || tools.KindOf(resErr) == tools.KindOf(toolErr)) {
		return auditOutcome(tools.OutcomeOf(toolErr)), tools.KindOf(toolErr), text
	}
	if resErr != nil {
		return auditOutcome(tools.OutcomeOf(resErr)), tools.KindOf(resErr), text
	}
	if res != nil && res.IsError {
		return audit.OutcomeRefused, tools.KindUnknown, text
	}
	if reason, ok := notes.cancelled(); ok {
		return audit.OutcomeRefused, tools.KindUnknown, reason
	}
	return audit.OutcomeOK, tools.KindUnknown, ""
}

// auditOutcome is the audit log's word for o.
func auditOutcome(o tools.Outcome) string {
	switch o {
	case tools.OutcomeOK:
		return audit.OutcomeOK
	case tools.OutcomeRefused:
		return audit.OutcomeRefused
	case tools.OutcomeCancelled:
		return audit.OutcomeCancelled
	case tools.OutcomeTimedOut:
		return audit.OutcomeTimedOut
	}
	return audit.OutcomeError
}

// AuditHeadEvery is how often the audit log's head is logged when it
// moved: the anchor `audit verify --head` compares with, kept in the
// server's log, where the audit file's writer cannot rewrite it.
const AuditHeadEvery = time.Minute

// LogAuditHeads logs l's head every period in which it moved from last
// (the head when the caller started it), until ctx ends.
func LogAuditHeads(ctx context.Context, l *audit.Logger, logger *slog.Logger, period time.Duration, last string) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if h := l.Head(); h != last {
				logger.Info("audit head", "head", h)
				last = h
			}
		}
	}
}

// Middleware returns the MCP middleware that, with Reads, writes an audit
// line per resources/read: the host reads a file for the model's context
// as read_file would. The line's path is the resource's URI.
func (a Audit) Middleware() mcp.Middleware {
	log := a.Log
	if log == nil || !a.Reads {
		return func(next mcp.MethodHandler) mcp.MethodHandler { return next }
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "resources/read" {
				return next(ctx, method, req)
			}
			start := time.Now()
			res, err := next(ctx, method, req)
			rec := audit.Record{Time: start, RequestID: callInfoOf(ctx).requestID, Tool: method, Outcome: audit.OutcomeOK, Duration: time.Since(start)}
			if extra := req.GetExtra(); extra != nil {
				if id, idErr := tenant.FromTokenInfo(extra.TokenInfo); idErr == nil {
					rec.Tenant, rec.Subject = string(id.Tenant), id.Subject
				}
			}
			if p, ok := req.GetParams().(*mcp.ReadResourceParams); ok {
				rec.Paths = []string{p.URI}
			}
			if rr, ok := res.(*mcp.ReadResourceResult); ok && err == nil {
				for _, c := range rr.Contents {
					rec.Bytes += int64(len(c.Text) + len(c.Blob))
				}
			}
			if err != nil {
				rec.Outcome, rec.Reason = audit.OutcomeRefused, err.Error()
			}
			if lerr := log.Log(rec); lerr != nil {
				a.Health.note(ctx, lerr)
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the audit log could not be written"}
			}
			return res, err
		}
	}
}
