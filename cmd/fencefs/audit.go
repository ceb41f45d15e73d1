package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
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

// auditHeadEvery is how often the audit log's head is logged when it
// moved: the anchor `audit verify --head` compares with, kept in the
// server's log, where the audit file's writer cannot rewrite it.
const auditHeadEvery = time.Minute

// logAuditHeads logs l's head every period in which it moved from last
// (the head when the caller started it), until ctx ends.
func logAuditHeads(ctx context.Context, l *audit.Logger, logger *slog.Logger, period time.Duration, last string) {
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

// auditCommand runs `fencefs audit verify [--prev H] [--head H] FILE`:
// exit 0 when the chain holds, 1 with the first bad line otherwise. --prev
// is the head of the file this one continues (a rotated log's); --head is
// an anchor kept where the log's writer cannot reach (the server logs its
// head as it goes and when it stops), which catches lines cut off the end.
func auditCommand(args []string, stdout, stderr io.Writer) int {
	usage := "usage: fencefs audit verify [--prev HASH] [--head HASH] FILE"
	if len(args) == 0 || args[0] != "verify" {
		fmt.Fprintln(stderr, usage)
		return exitFatal
	}
	fl := flag.NewFlagSet("audit verify", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	prev := fl.String("prev", audit.Genesis, "")
	head := fl.String("head", "", "")
	if err := fl.Parse(args[1:]); err != nil || fl.NArg() != 1 {
		fmt.Fprintln(stderr, usage)
		return exitFatal
	}
	file := fl.Arg(0)
	f, err := os.Open(file)
	if err != nil {
		fmt.Fprintf(stderr, "fencefs: audit verify: %v\n", err)
		return exitFatal
	}
	defer f.Close()
	res, err := audit.VerifyFrom(f, *prev)
	if err != nil {
		var le *audit.LineError
		if errors.As(err, &le) {
			fmt.Fprintf(stderr, "fencefs: audit verify %s: line %d: %v\n", file, le.Line, le.Err)
		} else {
			fmt.Fprintf(stderr, "fencefs: audit verify %s: %v\n", file, err)
		}
		return exitFatal
	}
	if *head != "" && res.Head != *head {
		fmt.Fprintf(stderr, "fencefs: audit verify %s: the chain holds but ends at head %s, not %s: lines were cut off its end or rewritten from some line on\n", file, res.Head, *head)
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
