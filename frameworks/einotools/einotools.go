// Package einotools hands fencefs's file tools to CloudWeGo Eino: as
// Eino tools for any agent or graph (Tools), and as Eino's own filesystem
// Backend (NewBackend), so the ADK's built-in file agent middleware works
// on any fencefs backend (local disk, S3, SFTP, mounts) under the set's
// policy.
//
// A refusal the model can correct (a missing file, a stale hash, a denied
// path, a change the host cancelled) is the tool's result, in the tool
// contract's words: Eino ends a run on a tool's error. The Backend returns
// refusals as errors (its methods have no other way), and Refusals is the
// tool-call middleware that hands them to the model as results. A fatal
// error (the storage could not be reached, the call's deadline) stays an
// error and ends the run.
//
// This package is a Go module of its own, so fencefs's other users do not
// inherit Eino's dependencies.
package einotools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/eino-contrib/jsonschema"
	"github.com/fencefs/fencefs/tools"
)

// Options configure the Eino tools.
type Options struct {
	// Dialect is the rendering of each input schema given to the model:
	// tools.JSONSchema (the zero value) or tools.OpenAIStrict, for an
	// OpenAI model called with strict function calling. Eino's model
	// components rewrite JSON Schema for their providers themselves, so
	// tools.Gemini, which is not JSON Schema, is refused.
	Dialect tools.SchemaDialect
}

// Tools returns set's tools as Eino invokable tools, for an agent's
// ToolsConfig or a graph's ToolsNode.
func Tools(set *tools.Set, opts Options) ([]tool.BaseTool, error) {
	if opts.Dialect != tools.JSONSchema && opts.Dialect != tools.OpenAIStrict {
		return nil, fmt.Errorf("einotools: dialect %s is not JSON Schema", opts.Dialect)
	}
	var out []tool.BaseTool
	for _, t := range set.Tools() {
		raw, err := t.SchemaFor(opts.Dialect)
		if err != nil {
			return nil, fmt.Errorf("einotools: %s: %w", t.Name, err)
		}
		s := new(jsonschema.Schema)
		if err := json.Unmarshal(raw, s); err != nil {
			return nil, fmt.Errorf("einotools: %s: %w", t.Name, err)
		}
		out = append(out, &invokable{t: t, info: &schema.ToolInfo{
			Name:        t.Name,
			Desc:        t.Description,
			ParamsOneOf: schema.NewParamsOneOfByJSONSchema(s),
		}})
	}
	return out, nil
}

// invokable is one fencefs tool as an Eino tool.
type invokable struct {
	t    *tools.Tool
	info *schema.ToolInfo
}

func (i *invokable) Info(context.Context) (*schema.ToolInfo, error) { return i.info, nil }

// InvokableRun runs the tool with the model's arguments.
func (i *invokable) InvokableRun(ctx context.Context, args string, _ ...tool.Option) (string, error) {
	text, err := i.t.Call(ctx, json.RawMessage(args))
	if err != nil {
		return refusalText(i.t.Name, err)
	}
	return text, nil
}

// refusalText turns a tool's error into what Eino's tool returns: the
// refusal's text as the result, or a fatal error.
func refusalText(tool string, err error) (string, error) {
	if tools.IsRetry(err) {
		return tools.Message(err), nil
	}
	return "", &FatalError{Tool: tool, Err: err}
}

// FatalError is a call that failed in a way the model cannot correct. Its
// message is safe to show the model; Unwrap keeps errors.Is working and
// tools.Cause gives the host the whole story.
type FatalError struct {
	Tool string
	Err  error
}

func (e *FatalError) Error() string { return e.Tool + ": " + tools.Message(e.Err) }

// Unwrap returns the tool's error.
func (e *FatalError) Unwrap() error { return e.Err }

// Refusals returns the tool-call middleware that hands a fencefs refusal
// returned as an error (by the Backend, under Eino's filesystem
// middleware) to the model as the call's result, so the model can correct
// it instead of the run ending. Any other error passes through. Put it in
// an agent's ToolsConfig.ToolCallMiddlewares.
func Refusals() compose.ToolMiddleware {
	return compose.ToolMiddleware{Invokable: func(next compose.InvokableToolEndpoint) compose.InvokableToolEndpoint {
		return func(ctx context.Context, in *compose.ToolInput) (*compose.ToolOutput, error) {
			out, err := next(ctx, in)
			var r *tools.RetryError
			if err != nil && tools.IsRetry(err) && errors.As(err, &r) {
				return &compose.ToolOutput{Result: tools.Message(err)}, nil
			}
			return out, err
		}
	}}
}
