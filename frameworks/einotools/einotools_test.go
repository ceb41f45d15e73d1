package einotools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/cloudwego/eino/adk"
	fsmw "github.com/cloudwego/eino/adk/middlewares/filesystem"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/fencefs/fencefs/frameworks/einotools"
	"github.com/fencefs/fencefs/memfs"
	"github.com/fencefs/fencefs/tools"
)

// step is one turn of a scripted model: given the tool results so far,
// the tool it calls next and its arguments.
type step func(t *testing.T, results []string) (tool string, args map[string]any)

// scripted is a tool-calling chat model that plays steps in order, one
// per turn, reading the tool messages Eino sends it, and ends with "done".
type scripted struct {
	t       *testing.T
	steps   []step
	offered []*schema.ToolInfo
	results *[]string
	nulls   bool
}

func (m *scripted) WithTools(ts []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	c := *m
	c.offered = ts
	return &c, nil
}

func (m *scripted) Generate(_ context.Context, in []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	*m.results = (*m.results)[:0]
	for _, msg := range in {
		if msg.Role == schema.Tool {
			*m.results = append(*m.results, msg.Content)
		}
	}
	turn := len(*m.results)
	if turn >= len(m.steps) {
		return schema.AssistantMessage("done", nil), nil
	}
	name, args := m.steps[turn](m.t, *m.results)
	var offered *schema.ToolInfo
	for _, ti := range m.offered {
		if ti.Name == name {
			offered = ti
		}
	}
	if offered == nil {
		m.t.Fatalf("turn %d: the model was not offered %s", turn, name)
	}
	if m.nulls {
		// A model under OpenAI's strict schema sends every argument,
		// null where it has none.
		js, err := offered.ParamsOneOf.ToJSONSchema()
		if err != nil {
			return nil, err
		}
		for p := js.Properties.Oldest(); p != nil; p = p.Next() {
			if _, ok := args[p.Key]; !ok {
				args[p.Key] = nil
			}
		}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	return schema.AssistantMessage("", []schema.ToolCall{{
		ID: fmt.Sprint("call-", turn), Type: "function",
		Function: schema.FunctionCall{Name: name, Arguments: string(raw)},
	}}), nil
}

func (m *scripted) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

// run drives an ADK chat-model agent through steps and returns the tool
// results the model saw and the agent's last message.
func run(t *testing.T, ctx context.Context, steps []step, cfg adk.ToolsConfig, mws []adk.AgentMiddleware, nulls bool) ([]string, string) {
	t.Helper()
	var results []string
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "files", Description: "works on files", Instruction: "You edit files.",
		Model:       &scripted{t: t, steps: steps, results: &results, nulls: nulls},
		ToolsConfig: cfg, Middlewares: mws, MaxIterations: len(steps) + 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	iter := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent}).Query(ctx, "tidy the notes")
	var final string
	for {
		ev, ok := iter.Next()
		if !ok {
			break
		}
		if ev.Err != nil {
			t.Fatalf("the run failed: %v", ev.Err)
		}
		if ev.Output != nil && ev.Output.MessageOutput != nil && ev.Output.MessageOutput.Message != nil {
			final = ev.Output.MessageOutput.Message.Content
		}
	}
	if len(results) != len(steps) {
		t.Fatalf("%d tool results, want %d: %q", len(results), len(steps), results)
	}
	return results, final
}

func last(r []string) string { return r[len(r)-1] }

var hashRE = regexp.MustCompile(`hash:([0-9a-f]{12})`)

func seeded(t *testing.T) (*memfs.FS, *tools.Set) {
	t.Helper()
	fs := memfs.New()
	set, err := tools.New(fs, tools.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set.Call(context.Background(), "write_file", json.RawMessage(`{"path":"notes.txt","content":"one\ntwo\ntwo\n"}`)); err != nil {
		t.Fatal(err)
	}
	return fs, set
}

func TestToolsInAgentLoop(t *testing.T) {
	for _, d := range []tools.SchemaDialect{tools.JSONSchema, tools.OpenAIStrict} {
		t.Run(d.String(), func(t *testing.T) {
			ctx := context.Background()
			fs, set := seeded(t)
			ts, err := einotools.Tools(set, einotools.Options{Dialect: d})
			if err != nil {
				t.Fatal(err)
			}
			steps := []step{
				func(*testing.T, []string) (string, map[string]any) {
					return "read_file", map[string]any{"path": "note.txt"}
				},
				func(t *testing.T, r []string) (string, map[string]any) {
					if !strings.Contains(last(r), "not found") {
						t.Errorf("a missing file answered %q", last(r))
					}
					return "read_file", map[string]any{"path": "notes.txt"}
				},
				func(t *testing.T, r []string) (string, map[string]any) {
					return "edit_file", map[string]any{"path": "notes.txt", "old_text": "one", "new_text": "1", "expected_hash": "000000000000"}
				},
				func(t *testing.T, r []string) (string, map[string]any) {
					if !strings.HasPrefix(last(r), "Conflict:") {
						t.Errorf("a stale hash answered %q", last(r))
					}
					h := hashRE.FindStringSubmatch(r[1])
					if h == nil {
						t.Fatalf("no hash in %q", r[1])
					}
					return "edit_file", map[string]any{"path": "notes.txt", "old_text": "one", "new_text": "1", "expected_hash": h[1]}
				},
				func(t *testing.T, r []string) (string, map[string]any) {
					if !strings.HasPrefix(last(r), "Edited notes.txt") {
						t.Errorf("the edit answered %q", last(r))
					}
					return "write_file", map[string]any{"path": "secret.txt", "content": "x"}
				},
			}
			ctx = tools.WithChangeListener(ctx, func(_ context.Context, r *tools.ChangeRequest) error {
				if r.Path == "secret.txt" {
					r.Cancel("the host does not allow it")
				}
				return nil
			})
			results, final := run(t, ctx, steps, adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: ts}}, nil, d == tools.OpenAIStrict)
			if final != "done" {
				t.Errorf("final message %q", final)
			}
			if !strings.Contains(last(results), "the host does not allow it") {
				t.Errorf("the cancelled write answered %q", last(results))
			}
			if _, err := fs.Stat(ctx, "secret.txt"); err == nil {
				t.Error("the cancelled write reached storage")
			}
			data, err := set.ReadFile(ctx, "notes.txt", 1<<20)
			if err != nil || string(data) != "1\ntwo\ntwo\n" {
				t.Errorf("notes.txt = %q, %v", data, err)
			}
		})
	}
}

// Eino's own file agent middleware runs on the Backend, under the set's
// policy, with refusals handed to the model by Refusals.
func TestBackendUnderFilesystemMiddleware(t *testing.T) {
	ctx := context.Background()
	fs, set := seeded(t)
	if err := fs.MkdirAll(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	if _, err := set.Call(ctx, "write_file", json.RawMessage(`{"path":"src/a.go","content":"package a\n// TODO one\n"}`)); err != nil {
		t.Fatal(err)
	}
	if err := fs.MkdirAll(ctx, "private"); err != nil {
		t.Fatal(err)
	}
	set, err := tools.New(fs, tools.Options{Denied: []string{"private"}})
	if err != nil {
		t.Fatal(err)
	}
	be, err := einotools.NewBackend(set)
	if err != nil {
		t.Fatal(err)
	}
	mw, err := fsmw.NewMiddleware(ctx, &fsmw.Config{Backend: be, WithoutLargeToolResultOffloading: true})
	if err != nil {
		t.Fatal(err)
	}
	expect := func(want string) func(*testing.T, []string) {
		return func(t *testing.T, r []string) {
			t.Helper()
			if !strings.Contains(last(r), want) {
				t.Errorf("result %q, want it to hold %q", last(r), want)
			}
		}
	}
	type turn struct {
		tool  string
		args  map[string]any
		check func(*testing.T, []string)
	}
	turns := []turn{
		{"ls", map[string]any{"path": "/"}, expect("/notes.txt")},
		{"read_file", map[string]any{"file_path": "/nope.txt"}, expect("not found")},
		{"read_file", map[string]any{"file_path": "/notes.txt", "offset": 1, "limit": 1}, expect("two")},
		{"glob", map[string]any{"pattern": "**/*.go", "path": "/"}, expect("/src/a.go")},
		{"grep", map[string]any{"pattern": "TODO", "glob": "*.go", "output_mode": "content"}, expect("/src/a.go:2:// TODO one")},
		{"write_file", map[string]any{"file_path": "/notes.txt", "content": "gone"}, expect("already exists")},
		{"write_file", map[string]any{"file_path": "/private/x.txt", "content": "x"}, expect("denied")},
		{"edit_file", map[string]any{"file_path": "/notes.txt", "old_string": "two", "new_string": "2"}, expect("2 times")},
		{"edit_file", map[string]any{"file_path": "/notes.txt", "old_string": "two", "new_string": "2", "replace_all": true}, expect("Successfully")},
		{"write_file", map[string]any{"file_path": "/new.txt", "content": "fresh\n"}, expect("Updated")},
	}
	var steps []step
	for i, tn := range turns {
		steps = append(steps, func(t *testing.T, r []string) (string, map[string]any) {
			if i > 0 {
				turns[i-1].check(t, r)
			}
			return tn.tool, tn.args
		})
	}
	cfg := adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{ToolCallMiddlewares: []compose.ToolMiddleware{einotools.Refusals()}}}
	results, _ := run(t, ctx, steps, cfg, []adk.AgentMiddleware{mw}, false)
	turns[len(turns)-1].check(t, results)
	data, err := set.ReadFile(ctx, "notes.txt", 1<<20)
	if err != nil || string(data) != "one\n2\n2\n" {
		t.Errorf("notes.txt = %q, %v", data, err)
	}
	if data, err := set.ReadFile(ctx, "new.txt", 1<<20); err != nil || string(data) != "fresh\n" {
		t.Errorf("new.txt = %q, %v", data, err)
	}
	if _, err := fs.Stat(ctx, "private/x.txt"); err == nil {
		t.Error("a denied write reached storage")
	}
}

func TestGeminiDialectRefused(t *testing.T) {
	_, set := seeded(t)
	if _, err := einotools.Tools(set, einotools.Options{Dialect: tools.Gemini}); err == nil {
		t.Error("the Gemini dialect was accepted")
	}
}
