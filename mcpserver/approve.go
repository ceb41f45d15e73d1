package mcpserver

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tools"
)

// Approval selects which tool calls need the user's approval.
type Approval int

const (
	// ApproveNone lets every call through.
	ApproveNone Approval = iota
	// ApproveChanges shows every change (write, edit, delete, move,
	// copy, create_directory, apply_patch) to the user and makes it only
	// when the user accepts.
	ApproveChanges
)

// ParseApproval reads an Approval from its name: "none" (or "") or
// "changes", the values of a command's --approve flag.
func ParseApproval(s string) (Approval, error) {
	switch s {
	case "", "none":
		return ApproveNone, nil
	case "changes":
		return ApproveChanges, nil
	}
	return ApproveNone, fmt.Errorf("approve: %q is not one of none, changes", s)
}

// String returns the name ParseApproval reads.
func (a Approval) String() string {
	if a == ApproveChanges {
		return "changes"
	}
	return "none"
}

// Reasons the model is given for a change the user did not accept, in
// the library's cancelled-change text ("['f.txt' was not written: ...]").
const (
	reasonDeclined  = "the user declined the change"
	reasonCancelled = "the user dismissed the approval without accepting"
)

// noElicitation is the result of a change asked of a session that cannot
// ask its user.
const noElicitation = "This server makes changes only with the user's approval, and this client cannot ask the user " +
	"(it does not support MCP elicitation). Nothing was changed; ask the user to make the change, or to use a client that supports elicitation."

// noStatelessElicitation is the result of a change asked over stateless
// HTTP by a client of a protocol before 2026-07-28: it may well support
// elicitation, but the request to ask its user would go out on this
// request's stream and the answer come back as a new request, which a
// stateless server cannot join to this call.
const noStatelessElicitation = "This server makes changes only with the user's approval, and it cannot ask the user over this connection: " +
	"it runs over stateless HTTP, which carries approvals only for clients of MCP protocol 2026-07-28 or later. " +
	"Nothing was changed; ask the user to make the change, or to connect with protocol 2026-07-28 or to a stateful server."

// approvalID names the one input request of an approval.
const approvalID = "approve"

// reasonChanged is given when the change the user answered is not the
// change the call would now make (the file changed while the user
// looked).
const reasonChanged = "the file changed while the user was looking at the change, so the answer is not for this change. Re-read the file and retry"

// approval prepares the call of the changing tool t for approval. The
// approval takes two rounds of the same call (MCP's multi round-trip
// requests; the SDK runs both inside one tools/call for clients of older
// protocol versions): the first runs the tool with its change cancelled
// before storage is touched and returns an input request, the form the
// user sees, with the change's digest signed as the request state; the
// second runs it again with the user's answer, which applies only to the
// change with that digest. The library's re-check after approval and its
// precondition cover the rest of the way to storage. The call ends with
// res or err when either is set.
func (h *handlers) approval(ctx context.Context, t *tools.Tool, req *mcp.CallToolRequest, start time.Time) (_ context.Context, res *mcp.CallToolResult, err error) {
	if h.opts.Stateless && req.ProtocolVersion() < newProtocol {
		// Whatever the client declared, its answer could not reach this
		// call (see noStatelessElicitation).
		if h.opts.ApprovalFallback == nil {
			return ctx, errorResult(noStatelessElicitation), nil
		}
		return tools.WithChangeListener(ctx, h.opts.ApprovalFallback), nil, nil
	}
	if !canElicit(req) {
		if h.opts.ApprovalFallback == nil {
			return ctx, errorResult(noElicitation), nil
		}
		return tools.WithChangeListener(ctx, h.opts.ApprovalFallback), nil, nil
	}
	p := req.Params
	if answer, ok := p.InputResponses[approvalID].(*mcp.ElicitResult); ok && h.verify(t.Name, p.RequestState) != "" {
		shown := h.verify(t.Name, p.RequestState)
		return tools.WithChangeListener(ctx, func(_ context.Context, r *tools.ChangeRequest) error {
			switch {
			case changeDigest(r) != shown:
				r.Cancel(reasonChanged)
			case answer.Action == "accept":
			case answer.Action == "decline":
				r.Cancel(reasonDeclined)
			default:
				r.Cancel(reasonCancelled)
			}
			return nil
		}), nil, nil
	}
	var asked *tools.ChangeRequest
	probe := tools.WithChangeListener(ctx, func(_ context.Context, r *tools.ChangeRequest) error {
		asked = r
		r.Cancel("awaiting the user's approval")
		return nil
	})
	text, err := t.Call(probe, p.Arguments)
	if asked == nil {
		// No change to approve (a refusal, a directory that exists):
		// the call's own answer stands, and nothing was changed.
		return ctx, h.result(ctx, t, start, text, err), nil
	}
	return ctx, &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{approvalID: &mcp.ElicitParams{Mode: "form", Message: ApprovalMessage(asked), RequestedSchema: approvalSchema}},
		RequestState:  h.sign(t.Name, changeDigest(asked)),
	}, nil
}

// changeDigest identifies a change as the user is shown it, and by the
// sizes and prior content hashes of the files it changes, which tell a
// change apart where the diff cannot (a binary file, or one too large to
// diff whole): an answer holds only for the content it was asked about.
func changeDigest(r *tools.ChangeRequest) string {
	parts := []string{r.Operation, r.Path, r.Source, r.Diff, strconv.FormatBool(r.Truncated)}
	for _, c := range r.Sizes {
		parts = append(parts, fmt.Sprintf("%s\x01%d\x01%d\x01%s", c.Path, c.Before, c.After, c.BeforeHash))
	}
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:])
}

// sign returns the request state carrying digest for tool.
func (h *handlers) sign(tool, digest string) string {
	return digest + "." + h.mac(tool, digest)
}

// verify returns the digest of a request state this server signed for
// tool, or "" when it did not.
func (h *handlers) verify(tool, state string) string {
	digest, mac, ok := strings.Cut(state, ".")
	if !ok || !hmac.Equal([]byte(mac), []byte(h.mac(tool, digest))) {
		return ""
	}
	return digest
}

func (h *handlers) mac(tool, digest string) string {
	m := hmac.New(sha256.New, h.key)
	m.Write([]byte(tool + "\x00" + digest))
	return hex.EncodeToString(m.Sum(nil))
}

// canElicit reports whether the client calling req declared form
// elicitation: in the request's own metadata on the protocol versions
// that carry it (stateless HTTP has no session to remember it), else at
// initialization.
func canElicit(req *mcp.CallToolRequest) bool {
	c := req.ClientCapabilities()
	if c == nil || c.Elicitation == nil {
		return false
	}
	e := c.Elicitation
	// A client declaring neither mode supports forms (the protocol's
	// rule for older clients).
	return e.Form != nil || e.URL == nil
}

// approvalSchema asks for nothing but the decision: the form is the
// message and the host's accept, decline and cancel.
var approvalSchema = map[string]any{"type": "object", "properties": map[string]any{}}

// ApprovalMessage is what the user is shown for req: the operation, the
// path(s) and the unified diff.
func ApprovalMessage(req *tools.ChangeRequest) string {
	var b strings.Builder
	switch req.Operation {
	case tools.OpWrite:
		fmt.Fprintf(&b, "Allow writing %s?", req.Path)
	case tools.OpEdit:
		fmt.Fprintf(&b, "Allow editing %s?", req.Path)
	case tools.OpDelete:
		fmt.Fprintf(&b, "Allow deleting %s?", req.Path)
	case tools.OpMove:
		fmt.Fprintf(&b, "Allow moving %s to %s?", req.Source, req.Path)
	case tools.OpCopy:
		fmt.Fprintf(&b, "Allow copying %s to %s?", req.Source, req.Path)
	case tools.OpCreateDirectory:
		fmt.Fprintf(&b, "Allow creating the directory %s?", req.Path)
	case tools.OpApplyPatch:
		fmt.Fprintf(&b, "Allow applying a patch starting at %s?", req.Path)
	default:
		fmt.Fprintf(&b, "Allow %s of %s?", req.Operation, req.Path)
	}
	if req.Diff != "" {
		b.WriteString("\n\n")
		b.WriteString(req.Diff)
		if !strings.HasSuffix(req.Diff, "\n") {
			b.WriteString("\n")
		}
	}
	if req.Truncated {
		b.WriteString("\n(The diff is cut short or left out: a side is too large or not text.)\n")
	}
	return b.String()
}
