// Package genkittools hands fencefs's file tools to Firebase Genkit for Go,
// so an agent built with Genkit reads, edits and searches any fencefs
// backend (local disk, S3, SFTP, mounts) under the set's policy without an
// MCP server in between.
//
// A refusal the model can correct (a missing file, a stale hash, a denied
// path, a change the host cancelled) is the tool's output, in the tool
// contract's words, so the model reads it and tries again: Genkit ends a
// whole generation on a tool's error. A fatal error (the storage could not
// be reached, the call's deadline) is the tool's error, and ends the
// generation as Genkit ends it for any failing tool. Arguments that break a
// tool's input schema are refused by Genkit's own validation before the
// tool runs.
//
// This package is a Go module of its own, so fencefs's other users do not
// inherit Genkit's dependencies.
package genkittools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/fencefs/fencefs/tools"
	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

// Tools returns set's tools as Genkit tools, unregistered, to pass to a
// generation with ai.WithTools.
//
// Each tool's input schema is the full JSON Schema: Genkit validates a
// model's arguments against it with a JSON Schema validator (which takes a
// null for a missing required property, so OpenAI's strict rendering does
// not validate), and its provider plugins rewrite it for their providers.
func Tools(set *tools.Set) ([]ai.Tool, error) {
	return build(set, func(name, desc string, schema map[string]any, fn ai.ToolFunc[any, string]) ai.Tool {
		return ai.NewTool(name, desc, fn, ai.WithInputSchema(schema))
	})
}

// Define registers set's tools with g under their own names and returns
// them; a generation may then name them or pass them with ai.WithTools.
func Define(g *genkit.Genkit, set *tools.Set) ([]ai.Tool, error) {
	return build(set, func(name, desc string, schema map[string]any, fn ai.ToolFunc[any, string]) ai.Tool {
		return genkit.DefineTool(g, name, desc, fn, ai.WithInputSchema(schema))
	})
}

type newTool func(name, desc string, schema map[string]any, fn ai.ToolFunc[any, string]) ai.Tool

func build(set *tools.Set, mk newTool) ([]ai.Tool, error) {
	var out []ai.Tool
	for _, t := range set.Tools() {
		var schema map[string]any
		if err := json.Unmarshal(t.InputSchema, &schema); err != nil {
			return nil, fmt.Errorf("genkittools: %s: %w", t.Name, err)
		}
		out = append(out, mk(t.Name, t.Description, schema, call(t)))
	}
	return out, nil
}

// call runs t with the arguments Genkit decoded from the model's request.
func call(t *tools.Tool) ai.ToolFunc[any, string] {
	return func(ctx *ai.ToolContext, input any) (string, error) {
		args, err := json.Marshal(input)
		if err != nil {
			return "", fmt.Errorf("genkittools: %s: arguments: %w", t.Name, err)
		}
		return result(ctx, t, args)
	}
}

// result runs t with args and returns what Genkit's tool hands back:
// the tool's text, or a refusal's text for the model to correct, or a
// fatal error carrying the model-safe message (tools.Cause has the rest).
func result(ctx context.Context, t *tools.Tool, args json.RawMessage) (string, error) {
	text, err := t.Call(ctx, args)
	switch {
	case err == nil:
		return text, nil
	case tools.IsRetry(err):
		return tools.Message(err), nil
	default:
		return "", &FatalError{Tool: t.Name, Err: err}
	}
}

// FatalError is a tool call that failed in a way the model cannot correct.
// Its message is safe to show the model; Unwrap keeps errors.Is working.
type FatalError struct {
	Tool string
	Err  error
}

func (e *FatalError) Error() string { return e.Tool + ": " + tools.Message(e.Err) }

// Unwrap returns the tool's error.
func (e *FatalError) Unwrap() error { return e.Err }
