package skills

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addSkillPrompts registers every skill of cat as an MCP prompt whose
// retrieval activates the skill. It is the wiring `fencefs serve` uses;
// this test keeps it honest.
func addSkillPrompts(server *mcp.Server, loader *Loader, cat *Catalog, logger *slog.Logger) {
	for _, s := range cat.Skills {
		server.AddPrompt(&mcp.Prompt{Name: s.Name, Description: s.Description},
			func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				a, err := loader.Activate(ctx, req.Params.Name)
				if err != nil {
					logger.WarnContext(ctx, "skill activation failed", "skill", req.Params.Name, "error", err)
					return nil, err
				}
				return &mcp.GetPromptResult{
					Description: a.Skill.Description,
					Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: PromptText(a)}}},
				}, nil
			})
	}
}

func TestMCPPrompts(t *testing.T) {
	ctx := context.Background()
	m, tenant, workspace, _ := newMounted(t)
	put(t, tenant, map[string]string{
		"skills/pdf-forms/SKILL.md":  manifest("pdf-forms", "Fill in PDF forms.", "Read fields.md.\n"),
		"skills/pdf-forms/fields.md": "# Fields\n",
	})
	put(t, workspace, map[string]string{
		"skills/pdf-forms/SKILL.md":  manifest("pdf-forms", "Shadowed copy.", ""),
		"skills/commit-msg/SKILL.md": manifest("commit-msg", "Write commit messages.", "Imperative mood.\n"),
	})
	loader := newLoader(t, m, []string{"/tenant/skills", "/workspace/skills"}, Options{})
	cat := discover(t, loader)

	var logs strings.Builder
	server := mcp.NewServer(&mcp.Implementation{Name: "fencefs", Version: "test"}, nil)
	addSkillPrompts(server, loader, cat, slog.New(slog.NewTextHandler(&logs, nil)))
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	list, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range list.Prompts {
		got = append(got, p.Name+": "+p.Description)
	}
	wantLines(t, got, []string{"commit-msg: Write commit messages.", "pdf-forms: Fill in PDF forms."})

	res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "pdf-forms"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != 1 || res.Messages[0].Role != "user" {
		t.Fatalf("messages: %+v", res.Messages)
	}
	text, ok := res.Messages[0].Content.(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T", res.Messages[0].Content)
	}
	want := "Read fields.md.\n\nThe files of the skill \"pdf-forms\" are in the directory /tenant/skills/pdf-forms. " +
		"Paths in these instructions are relative to it: read them with the file tools as /tenant/skills/pdf-forms/<path>.\n"
	if text.Text != want || res.Description != "Fill in PDF forms." {
		t.Errorf("prompt = %q, %q\nwant %q", res.Description, text.Text, want)
	}
	if out := readWithTools(t, m, "/workspace", "/tenant/skills/pdf-forms/fields.md"); !strings.Contains(out, "# Fields") {
		t.Errorf("read_file of the resource: %s", out)
	}

	// A skill broken after discovery fails its prompt with a clear error.
	put(t, workspace, map[string]string{"skills/commit-msg/SKILL.md": "broken\n"})
	_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "commit-msg"})
	const wantErr = `skills: skill not found: "commit-msg" (passed over /workspace/skills/commit-msg/SKILL.md: no YAML front matter`
	if err == nil || !strings.Contains(err.Error(), wantErr) {
		t.Errorf("GetPrompt of a broken skill: %v\nwant an error containing %s", err, wantErr)
	}
	if !strings.Contains(logs.String(), "skill activation failed") {
		t.Errorf("the failure was not logged: %s", logs.String())
	}
}
