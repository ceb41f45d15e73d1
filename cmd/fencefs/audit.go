package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
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

// audited wraps a tool's handler to write one audit line per call (per
// changing call unless reads is set).
func audited(log *audit.Logger, t *tools.Tool, reads bool, next mcp.ToolHandler) mcp.ToolHandler {
	if log == nil || t.Annotations.ReadOnly && !reads {
		return next
	}
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		start := time.Now()
		notes := &callNotes{}
		res, err := next(context.WithValue(ctx, callNotesKey{}, notes), req)
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
		rec.Bytes = int64(len(args.Content))
		switch {
		case err != nil:
			rec.Outcome, rec.Reason = audit.OutcomeError, err.Error()
		case res != nil && res.IsError:
			rec.Outcome = audit.OutcomeRefused
			if len(res.Content) > 0 {
				if tc, ok := res.Content[0].(*mcp.TextContent); ok {
					rec.Reason = tc.Text
				}
			}
		default:
			if reason, ok := notes.cancelled(); ok {
				rec.Outcome, rec.Reason = audit.OutcomeRefused, reason
			}
		}
		if lerr := log.Log(rec); lerr != nil {
			// The change is made; what cannot be recorded must not look
			// like success to the operator.
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the audit log could not be written; the server refuses further changes"}}}, nil
		}
		return res, err
	}
}

// openAudit opens the audit log --audit names: a file, or stdout for "-".
func openAudit(path string, stdout io.Writer) (*audit.Logger, error) {
	switch path {
	case "":
		return nil, nil
	case "-":
		return audit.New(stdout, audit.Genesis), nil
	}
	l, err := audit.OpenFile(path, nil)
	if err != nil {
		return nil, fmt.Errorf("--audit: %w", err)
	}
	return l, nil
}

// auditCommand runs `fencefs audit verify FILE`: exit 0 when the chain
// holds, 1 with the first bad line otherwise.
func auditCommand(args []string, stdout, stderr io.Writer) int {
	if len(args) != 2 || args[0] != "verify" {
		fmt.Fprintln(stderr, "usage: fencefs audit verify FILE")
		return exitFatal
	}
	f, err := os.Open(args[1])
	if err != nil {
		fmt.Fprintf(stderr, "fencefs: audit verify: %v\n", err)
		return exitFatal
	}
	defer f.Close()
	res, err := audit.Verify(f)
	if err != nil {
		var le *audit.LineError
		if errors.As(err, &le) {
			fmt.Fprintf(stderr, "fencefs: audit verify %s: line %d: %v\n", args[1], le.Line, le.Err)
		} else {
			fmt.Fprintf(stderr, "fencefs: audit verify %s: %v\n", args[1], err)
		}
		return exitFatal
	}
	fmt.Fprintf(stdout, "ok: %d lines, head %s\n", res.Lines, res.Head)
	return exitOK
}

// auditedResourceReads writes an audit line per resources/read (with
// --audit-reads): the host reads a file for the model's context as
// read_file would. The line's path is the resource's URI.
func auditedResourceReads(log *audit.Logger) mcp.Middleware {
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
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the audit log could not be written"}
			}
			return res, err
		}
	}
}
