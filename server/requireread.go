package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/tools"
)

// hashRule names an argument of a change that, under hashGuard, must come
// with the hash of the read the change is based on.
type hashRule struct {
	path, hash string
	// always: the hash is needed even before looking (the file must exist
	// for the tool to work at all).
	always bool
	// overwrite: needed only when the call's overwrite is true.
	overwrite bool
}

// hashRules returns the rules of tool: every file a change replaces or
// removes is named with the hash of its read.
func hashRules(tool string) []hashRule {
	switch tool {
	case "write_file", "delete_file":
		return []hashRule{{path: "path", hash: "expected_hash"}}
	case "edit_file":
		return []hashRule{{path: "path", hash: "expected_hash", always: true}}
	case "move_file":
		return []hashRule{{path: "source", hash: "expected_hash"}, {path: "destination", hash: "destination_hash", overwrite: true}}
	case "copy_file":
		return []hashRule{{path: "destination", hash: "destination_hash", overwrite: true}}
	}
	return nil
}

// RequireRead is the Link of --require-read on stateless HTTP, where the
// requests of one agent may reach different replicas and no replica can
// remember what the agent read: a change that replaces or removes an
// existing file must carry the hash of the read it is based on
// (expected_hash, or destination_hash for the file a move or copy
// replaces), which the storage then checks. apply_patch, which carries no
// hashes, must not be offered with it (Servers leaves it out).
type RequireRead struct {
	// Probe is a file_info tool over the same namespace with its policy;
	// nil makes every such argument need its hash (fail closed).
	Probe *tools.Tool
}

// Wrap implements Link.
func (g RequireRead) Wrap(t *tools.Tool, next mcp.ToolHandler) mcp.ToolHandler {
	rules := hashRules(t.Name)
	if rules == nil {
		return next
	}
	probe := g.Probe
	refuse := func(text string) *mcp.CallToolResult { return refusal(tools.KindNotRead, text, nil) }
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		gc := &guardCall{}
		ctx = context.WithValue(ctx, guardCallKey{}, gc)
		var args map[string]json.RawMessage
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			return next(ctx, req) // the tool itself refuses bad arguments
		}
		var overwrite bool
		json.Unmarshal(args["overwrite"], &overwrite)
		for _, r := range rules {
			var p string
			if json.Unmarshal(args[r.path], &p) != nil || p == "" || hashGiven(args[r.hash]) || r.overwrite && !overwrite {
				continue
			}
			need := fmt.Sprintf("'%s': pass %s from your read_file of it (this server requires reading a file before changing it).", p, r.hash)
			if r.always || probe == nil {
				return refuse(need), nil
			}
			raw, _ := json.Marshal(map[string]string{"path": p})
			text, err := probe.Call(ctx, raw)
			switch {
			case err == nil && strings.Contains(text, "\ntype: file\n"):
				return refuse(fmt.Sprintf("'%s' exists: read it with read_file and pass the hash it returned as %s (this server requires reading a file before changing it).", p, r.hash)), nil
			case err == nil, errors.Is(err, tools.KindNotFound):
			default:
				kind := tools.KindOf(err)
				if kind == tools.KindUnknown {
					kind = tools.KindUnavailable // the probe failed on storage
				}
				return refusal(kind, tools.Message(err), nil), nil
			}
		}
		res, err := next(ctx, req)
		if gc.refused != "" {
			return refuse(gc.refused), nil
		}
		return res, err
	}
}

// guardCall carries, in the context of a call under RequireRead, why the
// namespace's change listener refused a change (judgeTree).
type guardCall struct{ refused string }

type guardCallKey struct{}

// judgeTree is the namespace's change listener's part of RequireRead: a
// recursive delete or a move of a directory changes every file below it,
// and none of them can carry the hash of its read, so under the guard
// such a change is refused when the directory holds any file (at any
// depth, whatever the policy shows). An empty tree is let through.
func (n *Namespace) judgeTree(ctx context.Context, req *tools.ChangeRequest) error {
	gc, _ := ctx.Value(guardCallKey{}).(*guardCall)
	if gc == nil {
		return nil
	}
	var p, verb string
	switch req.Operation {
	case tools.OpDelete:
		p, verb = req.Path, "delete"
	case tools.OpMove:
		p, verb = req.Source, "move"
	default:
		return nil
	}
	dir := backend.VirtualToStorage(p)
	info, err := backend.Stat(ctx, n.b, dir)
	if err != nil || !info.IsDir() {
		return nil // a file: its hash was judged before the call ran
	}
	held := ""
	err = backend.Walk(ctx, n.b, dir, func(name string, e backend.DirEntry) error {
		if !e.Type.IsDir() {
			held = name
			return errHeld
		}
		return nil
	})
	if err != nil && !errors.Is(err, errHeld) {
		held = dir // the tree cannot be judged: fail closed
	}
	if held == "" {
		return nil
	}
	gc.refused = fmt.Sprintf("'%s' is a directory that holds files, and this server requires reading a file before changing it: %s its files one by one, each with the expected_hash of your read_file of it.", p, verb)
	req.Cancel(gc.refused)
	return nil
}

// errHeld stops judgeTree's walk at the first file.
var errHeld = errors.New("a file was found")

// hashGiven reports whether raw is a hash the tool will check: a
// non-empty string. A JSON null is no precondition to the tools, so it
// must be none to the guard either; an empty string is the hash of no
// read.
func hashGiven(raw json.RawMessage) bool {
	var h string
	return json.Unmarshal(raw, &h) == nil && h != ""
}
