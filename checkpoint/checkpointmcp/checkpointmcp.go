// Package checkpointmcp brings a checkpoint journal to an MCP server: Wrap
// journals every tool call of an mcpserver server, and Add offers the
// opt-in tools list_checkpoints and restore_checkpoint. Restoring is
// usually a person's or the application's act, so a server offers them
// only when its operator asks (fencefs offers neither by default).
package checkpointmcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/checkpoint"
	"github.com/fencefs/fencefs/mcpserver"
	"github.com/fencefs/fencefs/tools"
)

// Tool names.
const (
	ListTool    = "list_checkpoints"
	RestoreTool = "restore_checkpoint"
)

// Wrap returns an mcpserver.Options.Wrap that journals every call of a
// changing tool in j (it binds the call's context, see
// checkpoint.Journal.Bind). next, when not nil, is an existing Wrap, run
// inside.
func Wrap(j *checkpoint.Journal, next func(*tools.Tool, mcp.ToolHandler) mcp.ToolHandler) func(*tools.Tool, mcp.ToolHandler) mcp.ToolHandler {
	return func(t *tools.Tool, h mcp.ToolHandler) mcp.ToolHandler {
		if next != nil {
			h = next(t, h)
		}
		if t.Annotations.ReadOnly {
			return h
		}
		return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return h(j.Bind(ctx), req)
		}
	}
}

// Options adjust Add.
type Options struct {
	// Restore offers restore_checkpoint beside list_checkpoints.
	Restore bool
	// OnRestore, when set, is told of every restore the model asks for,
	// made or refused (for an event or an audit line).
	OnRestore func(ctx context.Context, to uint64, res *checkpoint.Result, err error)
	// BeforeRestore, when set, is the restore's
	// checkpoint.RestoreOptions.BeforeApply: called with the paths a
	// restore the model asked for is about to change, before any is (a
	// write-ahead audit record); an error refuses it, nothing changed.
	BeforeRestore func(ctx context.Context, items []checkpoint.Item) error
	// Rooted shows paths rooted ("/w/x"), as the tools of a mounted
	// namespace show them.
	Rooted bool
	// Tools, when not nil, offers only the tools it names of those Add
	// would offer (a caller's grants).
	Tools []string
	// Wrap, when set, wraps each tool's handler, given the tool's name and
	// annotations as a tools.Tool: a server's own checks and records
	// (scopes, quotas, audit), as mcpserver.Options.Wrap wraps the file
	// tools.
	Wrap func(t *tools.Tool, next mcp.ToolHandler) mcp.ToolHandler
}

// add offers one tool on server, wrapped and filtered as opts say.
func (opts Options) add(server *mcp.Server, mt *mcp.Tool, readOnly bool, h mcp.ToolHandler) {
	if opts.Tools != nil && !slices.Contains(opts.Tools, mt.Name) {
		return
	}
	if opts.Wrap != nil {
		h = opts.Wrap(&tools.Tool{Name: mt.Name, Description: mt.Description, InputSchema: mt.InputSchema.(json.RawMessage),
			Annotations: tools.Annotations{Title: mt.Annotations.Title, ReadOnly: readOnly, Destructive: !readOnly}}, h)
	}
	server.AddTool(mt, h)
}

// Add offers list_checkpoints (and, with opts.Restore,
// restore_checkpoint) over j on server.
func Add(server *mcp.Server, j *checkpoint.Journal, opts Options) {
	f := false
	opts.add(server, &mcp.Tool{
		Name:        ListTool,
		Description: "List the checkpoints of your file changes, newest first: each changing call is one, numbered, with its time, label (turn), operation and paths. restore_checkpoint returns files to one.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"limit":{"type":"integer","minimum":1,"description":"How many to list, newest first. Default 20."},"label":{"type":"string","description":"Only the checkpoints of this label (a turn)."}},"additionalProperties":false}`),
		Annotations: &mcp.ToolAnnotations{Title: "List checkpoints", ReadOnlyHint: true, OpenWorldHint: &f},
	}, true, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a struct {
			Limit int    `json:"limit"`
			Label string `json:"label"`
		}
		if err := decode(req, &a); err != nil {
			return refused(tools.KindInvalid, err.Error(), nil), nil
		}
		return text(false, list(j, a.Limit, a.Label, opts.Rooted)), nil
	})
	if !opts.Restore {
		return
	}
	t := true
	opts.add(server, &mcp.Tool{
		Name:        RestoreTool,
		Description: "Return files to a checkpoint: every path the changes after it touched gets its content back (files created since are removed, deleted ones re-created, moved ones moved back). A path someone else changed since is a conflict: the restore is then refused and the conflicts listed, unless force is true. The restore is a checkpoint itself, so it can be undone.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"checkpoint":{"type":"integer","minimum":0,"description":"The checkpoint to return to, as list_checkpoints numbers them; 0 is before the first change."},"paths":{"type":"array","items":{"type":"string"},"description":"Only these paths (and what lies below them)."},"force":{"type":"boolean","description":"Overwrite paths someone else changed since. Default false."}},"required":["checkpoint"],"additionalProperties":false}`),
		Annotations: &mcp.ToolAnnotations{Title: "Restore a checkpoint", DestructiveHint: &t, OpenWorldHint: &f},
	}, false, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a struct {
			Checkpoint *uint64  `json:"checkpoint"`
			Paths      []string `json:"paths"`
			Force      bool     `json:"force"`
		}
		if err := decode(req, &a); err != nil {
			return refused(tools.KindInvalid, err.Error(), nil), nil
		}
		if a.Checkpoint == nil {
			return refused(tools.KindInvalid, "Missing required argument 'checkpoint'.", nil), nil
		}
		res, err := j.Restore(ctx, *a.Checkpoint, checkpoint.RestoreOptions{Paths: a.Paths, Force: a.Force, BeforeApply: opts.BeforeRestore})
		if opts.OnRestore != nil {
			opts.OnRestore(ctx, *a.Checkpoint, res, err)
		}
		return restored(*a.Checkpoint, res, err, opts.Rooted), nil
	})
}

// decode reads a call's arguments, refusing unknown ones.
func decode(req *mcp.CallToolRequest, v any) error {
	raw := req.Params.Arguments
	if len(raw) == 0 {
		raw = json.RawMessage(`{}`)
	}
	d := json.NewDecoder(strings.NewReader(string(raw)))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("Invalid arguments: %v", err)
	}
	return nil
}

func text(isErr bool, s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: isErr, Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// refused is a refusal of kind with msg for the model: its Go error (for
// the links around the tool, such as an audit line's outcome and kind)
// is a refusal of that kind joined to cause, and its _meta names the
// outcome and kind as mcpserver's results do.
func refused(kind tools.Kind, msg string, cause error) *mcp.CallToolResult {
	return failed(msg, errors.Join(tools.Refusal(kind, msg), cause))
}

// failed is a result with msg for the model that ended with err: a
// refusal, or a storage error or the call's end, which the outcome in its
// _meta tells apart.
func failed(msg string, err error) *mcp.CallToolResult {
	res := text(true, msg)
	res.SetError(err)
	res.Meta = mcp.Meta{mcpserver.MetaOutcome: string(tools.OutcomeOf(err))}
	if k := tools.KindOf(err); k != tools.KindUnknown {
		res.Meta[mcpserver.MetaKind] = string(k)
	}
	return res
}

// show renders a storage path as the tools do.
func show(p string, rooted bool) string {
	if rooted {
		return backend.StorageToVirtual(p)
	}
	return p
}

// list renders the checkpoints, newest first.
func list(j *checkpoint.Journal, limit int, label string, rooted bool) string {
	if limit <= 0 {
		limit = 20
	}
	cps := j.Checkpoints()
	var b strings.Builder
	n := 0
	for i := len(cps) - 1; i >= 0 && n < limit; i-- {
		c := cps[i]
		if label != "" && c.Label != label {
			continue
		}
		n++
		fmt.Fprintf(&b, "%d  %s", c.Seq, c.Time.UTC().Format(time.RFC3339))
		if c.Label != "" {
			fmt.Fprintf(&b, "  [%s]", c.Label)
		}
		switch {
		case c.Op == "restore" && !c.Complete:
			fmt.Fprintf(&b, "  restore to %d (incomplete: restore to %d again to complete it)", c.RestoredTo, c.RestoredTo)
		case c.Op == "restore":
			fmt.Fprintf(&b, "  restore to %d", c.RestoredTo)
		default:
			fmt.Fprintf(&b, "  %s %s", c.Op, show(c.Path, rooted))
			if c.Source != "" {
				fmt.Fprintf(&b, " (from %s)", show(c.Source, rooted))
			}
		}
		fmt.Fprintf(&b, "  (%d %s)\n", len(c.Changes), plural(len(c.Changes), "path", "paths"))
	}
	if n == 0 {
		b.WriteString("No checkpoints.\n")
	}
	fmt.Fprintf(&b, "The oldest checkpoint kept is %d.", j.Oldest())
	return b.String()
}

// restored renders a restore's result.
func restored(to uint64, res *checkpoint.Result, err error, rooted bool) *mcp.CallToolResult {
	var ce *checkpoint.ConflictError
	var admit *checkpoint.AdmitError
	switch {
	case errors.As(err, &ce):
		var b strings.Builder
		fmt.Fprintf(&b, "Restore to checkpoint %d refused: %d %s changed by someone else since (pass force: true to overwrite):", to, len(ce.Conflicts), plural(len(ce.Conflicts), "path was", "paths were"))
		for _, c := range ce.Conflicts {
			fmt.Fprintf(&b, "\n%s: %s", show(c.Path, rooted), c.Conflict)
		}
		return refused(tools.KindConflict, b.String(), err)
	case errors.As(err, &admit):
		return refused(tools.KindQuota, fmt.Sprintf("The restore to checkpoint %d was refused: %v. Nothing was changed.", to, admit), err)
	case errors.Is(err, checkpoint.ErrPruned):
		return refused(tools.KindNotFound, fmt.Sprintf("Checkpoint %d is no longer kept; list_checkpoints shows the oldest kept.", to), err)
	case err != nil && res != nil && res.Seq != 0:
		return failed(fmt.Sprintf("The restore to checkpoint %d stopped part way; restore to %d again to complete it.", to, to), err)
	case err != nil:
		return failed(fmt.Sprintf("The restore to checkpoint %d failed; nothing was changed. Details are in the server's log.", to), err)
	case res.Seq == 0:
		return text(false, fmt.Sprintf("Nothing to restore: every path is as it was at checkpoint %d.", to))
	}
	var b strings.Builder
	shown := showAll(res.Restored, rooted)
	if len(shown) > maxShown {
		shown = append(shown[:maxShown], fmt.Sprintf("and %d more", len(res.Restored)-maxShown))
	}
	fmt.Fprintf(&b, "Restored %d %s to checkpoint %d: %s.", len(res.Restored), plural(len(res.Restored), "path", "paths"), to, strings.Join(shown, ", "))
	if len(res.Forced) > 0 {
		fmt.Fprintf(&b, " Overwrote changes by someone else to: %s.", strings.Join(showItems(res.Forced, rooted), ", "))
	}
	if len(res.Skipped) > 0 {
		fmt.Fprintf(&b, " Left as they are: %s.", strings.Join(showItems(res.Skipped, rooted), ", "))
	}
	fmt.Fprintf(&b, " This restore is checkpoint %d; restore to %d to undo it.", res.Seq, res.Seq-1)
	return text(false, b.String())
}

// maxShown bounds the paths a restore's result names.
const maxShown = 20

func showAll(paths []string, rooted bool) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = show(p, rooted)
	}
	return out
}

func showItems(items []checkpoint.Item, rooted bool) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = show(it.Path, rooted)
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
