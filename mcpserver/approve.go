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
	"unicode"
	"unicode/utf8"

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

// reasonStateless is the reason of a change a fallback cancelled over
// stateless HTTP before 2026-07-28.
const reasonStateless = "the server makes changes only with the user's approval, and it cannot ask the user over stateless HTTP " +
	"before MCP protocol 2026-07-28"

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
			return ctx, refused(tools.KindDenied, noStatelessElicitation), nil
		}
		fallback := h.opts.ApprovalFallback
		return tools.WithChangeListener(ctx, func(ctx context.Context, r *tools.ChangeRequest) error {
			err := fallback(ctx, r)
			if _, cancelled := r.Cancelled(); cancelled {
				// The fallback's reason speaks of the client; the
				// transport is what cannot ask.
				r.Cancel(reasonStateless)
			}
			return err
		}), nil, nil
	}
	if !canElicit(req) {
		if h.opts.ApprovalFallback == nil {
			return ctx, refused(tools.KindDenied, noElicitation), nil
		}
		return tools.WithChangeListener(ctx, h.opts.ApprovalFallback), nil, nil
	}
	p := req.Params
	if answer, ok := p.InputResponses[approvalID].(*mcp.ElicitResult); ok && h.verify(t.Name, p.RequestState) != "" {
		shown, asked := h.verify(t.Name, p.RequestState), h.issued(p.RequestState)
		return tools.WithChangeListener(ctx, func(ctx context.Context, r *tools.ChangeRequest) error {
			entries, more, err := h.entries(ctx, r)
			if err != nil {
				return err
			}
			switch {
			case time.Since(asked) > h.opts.ApprovalTTL:
				r.Cancel(fmt.Sprintf(reasonExpired, h.opts.ApprovalTTL))
			case more || changeDigest(r, entries) != shown:
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
	var entries []string
	var more bool
	probe := tools.WithChangeListener(ctx, func(ctx context.Context, r *tools.ChangeRequest) error {
		asked = r
		r.Cancel("awaiting the user's approval")
		var err error
		entries, more, err = h.entries(ctx, r)
		return err
	})
	text, err := t.Call(probe, p.Arguments)
	if asked == nil || err != nil {
		// No change to approve (a refusal, a directory that exists):
		// the call's own answer stands, and nothing was changed.
		return ctx, h.result(ctx, t, start, text, err), nil
	}
	if more {
		return ctx, refused(tools.KindTooLarge, fmt.Sprintf(tooManyEntries, asked.Path, maxApprovalEntries)), nil
	}
	return ctx, &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{approvalID: &mcp.ElicitParams{Mode: "form", Message: approvalMessage(asked, entries), RequestedSchema: approvalSchema}},
		RequestState:  h.sign(t.Name, changeDigest(asked, entries)),
	}, nil
}

// maxApprovalEntries bounds the entries of a directory a change may take
// along and still be shown to the user for approval.
const maxApprovalEntries = 10000

// tooManyEntries refuses the change of a directory too large to show.
const tooManyEntries = "'%s' holds more than %d entries, too many to show the user for approval. Nothing was changed; change it in parts."

// reasonExpired is given for an answer that came after the approval
// expired.
const reasonExpired = "the approval expired (the user answered more than %v after being asked). Retry to ask again"

// DefaultApprovalTTL is how long an approval the user was asked for
// stays good by default.
const DefaultApprovalTTL = 10 * time.Minute

// entries returns what a change of a directory takes along: the
// entries the tool walked below it (tools.ChangeRequest.Entries), hidden
// ones included, as paths from the namespace root (directories end with
// '/'), sorted; nil for a change of files. more reports that there are
// over maxApprovalEntries. The tool removes no entry outside them, so
// binding the answer to them binds what the change takes.
func (h *handlers) entries(_ context.Context, r *tools.ChangeRequest) (entries []string, more bool, err error) {
	if r.EntriesOver || len(r.Entries) > maxApprovalEntries {
		return nil, true, nil
	}
	return r.Entries, false, nil
}

// changeDigest identifies a change as the user is shown it, and by the
// sizes and prior content hashes of the files it changes, which tell a
// change apart where the diff cannot (a binary file, or one too large to
// diff whole): an answer holds only for the content it was asked about.
func changeDigest(r *tools.ChangeRequest, entries []string) string {
	parts := []string{r.Operation, r.Path, r.Source, r.Diff, strconv.FormatBool(r.Truncated)}
	for _, c := range r.Sizes {
		parts = append(parts, fmt.Sprintf("%s\x01%d\x01%d\x01%s", c.Path, c.Before, c.After, c.BeforeHash))
	}
	// The entries a directory change takes along: one that appeared
	// while the user looked makes the answer void.
	parts = append(parts, fmt.Sprintf("entries\x01%d", len(entries)))
	parts = append(parts, entries...)
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:])
}

// sign returns the request state carrying digest for tool and the time
// the user is asked.
func (h *handlers) sign(tool, digest string) string {
	signed := digest + "." + strconv.FormatInt(time.Now().UnixMilli(), 10)
	return signed + "." + h.mac(tool, signed)
}

// verify returns the digest of a request state this server signed for
// tool, or "" when it did not.
func (h *handlers) verify(tool, state string) string {
	i := strings.LastIndexByte(state, '.')
	if i < 0 || !hmac.Equal([]byte(state[i+1:]), []byte(h.mac(tool, state[:i]))) {
		return ""
	}
	digest, _, ok := strings.Cut(state[:i], ".")
	if !ok {
		return ""
	}
	return digest
}

// issued returns when the user was asked, by a state verify accepted.
func (h *handlers) issued(state string) time.Time {
	parts := strings.Split(state, ".")
	if len(parts) != 3 {
		return time.Time{}
	}
	ms, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(ms)
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
// path(s) and the unified diff, with every character that would not show
// as itself escaped (see approvalMessage).
func ApprovalMessage(req *tools.ChangeRequest) string { return approvalMessage(req, nil) }

// maxShownEntries is how many of a directory change's entries the
// message lists; the count is always given.
const maxShownEntries = 50

// approvalMessage is ApprovalMessage naming the entries a directory
// change takes along: their count, and the first maxShownEntries of
// them. Names and diff lines are shown with control, format (bidi,
// zero-width) and line-separator characters escaped as \u{XXXX} and
// invalid UTF-8 as \x{XX}, so the name shown is the name written; a name
// that needed it is quoted and the message says so.
func approvalMessage(req *tools.ChangeRequest, entries []string) string {
	var b strings.Builder
	escaped := false
	name := func(p string) string {
		e, changed := escapeShown(p, false)
		if changed {
			escaped = true
			return `"` + e + `"`
		}
		return e
	}
	path, source := name(req.Path), name(req.Source)
	switch req.Operation {
	case tools.OpWrite:
		fmt.Fprintf(&b, "Allow writing %s?", path)
	case tools.OpEdit:
		fmt.Fprintf(&b, "Allow editing %s?", path)
	case tools.OpDelete:
		if entries != nil {
			fmt.Fprintf(&b, "Allow deleting the directory %s and the %d entries in it?", path, len(entries))
		} else {
			fmt.Fprintf(&b, "Allow deleting %s?", path)
		}
	case tools.OpMove:
		fmt.Fprintf(&b, "Allow moving %s to %s?", source, path)
	case tools.OpCopy:
		fmt.Fprintf(&b, "Allow copying %s to %s?", source, path)
	case tools.OpCreateDirectory:
		fmt.Fprintf(&b, "Allow creating the directory %s?", path)
	case tools.OpApplyPatch:
		fmt.Fprintf(&b, "Allow applying a patch starting at %s?", path)
	default:
		fmt.Fprintf(&b, "Allow %s of %s?", req.Operation, path)
	}
	if entries != nil && req.Operation != tools.OpDelete {
		fmt.Fprintf(&b, " It takes along the %d entries in %s.", len(entries), source)
	}
	if len(entries) > 0 {
		b.WriteString("\n\n")
		for i, e := range entries {
			if i == maxShownEntries {
				fmt.Fprintf(&b, "... and %d more\n", len(entries)-maxShownEntries)
				break
			}
			b.WriteString(name(e))
			b.WriteString("\n")
		}
	}
	if req.Diff != "" {
		diff, changed := escapeShown(req.Diff, true)
		escaped = escaped || changed
		b.WriteString("\n\n")
		b.WriteString(diff)
		if !strings.HasSuffix(diff, "\n") {
			b.WriteString("\n")
		}
	}
	if req.Truncated {
		b.WriteString("\n(The diff is cut short or left out: a side is too large or not text.)\n")
	}
	if escaped {
		b.WriteString("\n(Characters that would not show as themselves, such as control, bidirectional or zero-width ones, are shown escaped as \\u{XXXX}.)\n")
	}
	return b.String()
}

// escapeShown escapes in s what would not show as itself: control
// characters (but line feeds and tabs when multiline), format characters
// (bidirectional controls, zero-width ones), line and paragraph
// separators, invalid UTF-8, and a backslash when anything else was
// escaped, so an escape cannot be forged by the name itself. changed
// reports whether anything was.
func escapeShown(s string, multiline bool) (string, bool) {
	needs := func(r rune) bool {
		if multiline && (r == '\n' || r == '\t') {
			return false
		}
		return r == utf8.RuneError || unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp)
	}
	if utf8.ValidString(s) && strings.IndexFunc(s, needs) < 0 {
		return s, false
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, "\\x{%02X}", s[i])
		case r == '\\':
			b.WriteString("\\\\")
		case needs(r):
			fmt.Fprintf(&b, "\\u{%04X}", r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String(), true
}
