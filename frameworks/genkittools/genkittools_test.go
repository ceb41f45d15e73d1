package genkittools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/frameworks/genkittools"
	"github.com/fencefs/fencefs/memfs"
	"github.com/fencefs/fencefs/tools"
	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

// step is one turn of a scripted model: given the tool outputs so far, the
// tool it asks for next (or "" to end with text).
type step func(t *testing.T, outputs []string) (tool string, args map[string]any)

var hashRE = regexp.MustCompile(`hash:([0-9a-f]{12})`)

// scriptedModel defines a model that plays steps in order, one per turn,
// reading the tool responses Genkit sends it; it records every output.
func scriptedModel(t *testing.T, g *genkit.Genkit, steps []step, outputs *[]string) ai.Model {
	return genkit.DefineModel(g, "test/scripted", &ai.ModelOptions{Supports: &ai.ModelSupports{Tools: true, Multiturn: true}},
		func(ctx context.Context, req *ai.ModelRequest, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
			*outputs = (*outputs)[:0]
			for _, m := range req.Messages {
				for _, p := range m.Content {
					if p.IsToolResponse() {
						*outputs = append(*outputs, fmt.Sprint(p.ToolResponse.Output))
					}
				}
			}
			turn := len(*outputs)
			msg := &ai.Message{Role: ai.RoleModel}
			if turn >= len(steps) {
				msg.Content = []*ai.Part{ai.NewTextPart("done")}
				return &ai.ModelResponse{Request: req, Message: msg, FinishReason: ai.FinishReasonStop}, nil
			}
			name, args := steps[turn](t, *outputs)
			msg.Content = []*ai.Part{ai.NewToolRequestPart(&ai.ToolRequest{Name: name, Input: args, Ref: fmt.Sprint(turn)})}
			return &ai.ModelResponse{Request: req, Message: msg, FinishReason: ai.FinishReasonStop}, nil
		})
}

func last(outputs []string) string { return outputs[len(outputs)-1] }

func TestGenerateLoop(t *testing.T) {
	ctx := context.Background()
	fs := memfs.New()
	set, err := tools.New(fs, tools.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set.Call(ctx, "write_file", json.RawMessage(`{"path":"notes.txt","content":"one\ntwo\n"}`)); err != nil {
		t.Fatal(err)
	}
	g := genkit.Init(ctx)
	fsTools, err := genkittools.Define(g, set)
	if err != nil {
		t.Fatal(err)
	}
	steps := []step{
		// A refusal the model can correct: the file is not there.
		func(*testing.T, []string) (string, map[string]any) {
			return "read_file", map[string]any{"path": "note.txt"}
		},
		func(t *testing.T, out []string) (string, map[string]any) {
			if !strings.Contains(last(out), "not found") {
				t.Errorf("a missing file answered %q", last(out))
			}
			return "read_file", map[string]any{"path": "notes.txt"}
		},
		// A stale hash: refused, nothing written.
		func(t *testing.T, out []string) (string, map[string]any) {
			if !strings.Contains(last(out), "two") {
				t.Errorf("read_file answered %q", last(out))
			}
			return "edit_file", map[string]any{"path": "notes.txt", "old_text": "two", "new_text": "2", "expected_hash": "000000000000"}
		},
		// The hash the read reported: the edit lands.
		func(t *testing.T, out []string) (string, map[string]any) {
			if !strings.HasPrefix(last(out), "Conflict:") {
				t.Errorf("a stale hash answered %q", last(out))
			}
			h := hashRE.FindStringSubmatch(out[1])
			if h == nil {
				t.Fatalf("no hash in %q", out[1])
			}
			return "edit_file", map[string]any{"path": "notes.txt", "old_text": "two", "new_text": "2", "expected_hash": h[1]}
		},
		// The host cancels this change (see the listener below).
		func(t *testing.T, out []string) (string, map[string]any) {
			if !strings.Contains(last(out), "notes.txt") || strings.Contains(last(out), "Conflict") {
				t.Errorf("the edit answered %q", last(out))
			}
			return "write_file", map[string]any{"path": "secret.txt", "content": "x"}
		},
	}
	var outputs []string
	model := scriptedModel(t, g, steps, &outputs)
	ctx = tools.WithChangeListener(ctx, func(_ context.Context, r *tools.ChangeRequest) error {
		if r.Path == "secret.txt" {
			r.Cancel("the host does not allow it")
		}
		return nil
	})
	resp, err := genkit.Generate(ctx, g, ai.WithModel(model), ai.WithPrompt("tidy the notes"), ai.WithTools(toolRefs(fsTools)...))
	if err != nil {
		t.Fatalf("the generation failed: %v", err)
	}
	if resp.Text() != "done" {
		t.Errorf("final text %q", resp.Text())
	}
	if len(outputs) != len(steps) {
		t.Fatalf("%d tool outputs, want %d: %q", len(outputs), len(steps), outputs)
	}
	if !strings.Contains(last(outputs), "the host does not allow it") {
		t.Errorf("the cancelled write answered %q", last(outputs))
	}
	got, err := set.Call(ctx, "read_file", json.RawMessage(`{"path":"notes.txt"}`))
	if err != nil || !strings.Contains(got, "one\n") || !strings.Contains(got, "2") || strings.Contains(got, "two") {
		t.Errorf("notes.txt after the run: %q, %v", got, err)
	}
	if _, err := fs.Stat(ctx, "secret.txt"); err == nil {
		t.Error("the cancelled write reached storage")
	}
}

func toolRefs(ts []ai.Tool) []ai.ToolRef {
	refs := make([]ai.ToolRef, len(ts))
	for i, t := range ts {
		refs[i] = t
	}
	return refs
}

// A fatal error ends the generation, as Genkit ends it for any failing
// tool, with the model-safe message.
func TestFatalEndsTheGeneration(t *testing.T) {
	ctx := context.Background()
	set, err := tools.New(memfs.New(), tools.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := genkit.Init(ctx)
	fsTools, err := genkittools.Tools(set)
	if err != nil {
		t.Fatal(err)
	}
	var outputs []string
	model := scriptedModel(t, g, []step{func(*testing.T, []string) (string, map[string]any) {
		return "write_file", map[string]any{"path": "a.txt", "content": "x"}
	}}, &outputs)
	broken := errors.New("quota service down")
	ctx = tools.WithChangeListener(ctx, func(context.Context, *tools.ChangeRequest) error { return broken })
	_, err = genkit.Generate(ctx, g, ai.WithModel(model), ai.WithPrompt("write"), ai.WithTools(toolRefs(fsTools)...))
	if err == nil || !strings.Contains(err.Error(), "the host's change listener failed") {
		t.Fatalf("Generate = %v, want the tool's fatal message", err)
	}
	if strings.Contains(err.Error(), "quota service down") {
		t.Errorf("the error shown carries the host's cause: %v", err)
	}
}
