package einotools_test

import (
	"context"
	"fmt"
	"log"

	"github.com/cloudwego/eino/adk"
	fsmw "github.com/cloudwego/eino/adk/middlewares/filesystem"
	"github.com/cloudwego/eino/compose"
	"github.com/fencefs/fencefs/frameworks/einotools"
	"github.com/fencefs/fencefs/memfs"
	"github.com/fencefs/fencefs/tools"
)

// An Eino agent gets fencefs's tools over a workspace (here in memory;
// local.New, s3adapter.New or a mount work the same), with the strict
// schemas an OpenAI model takes.
func ExampleTools() {
	set, err := tools.New(memfs.New(), tools.Options{Denied: []string{"**/.env"}})
	if err != nil {
		log.Fatal(err)
	}
	ts, err := einotools.Tools(set, einotools.Options{Dialect: tools.OpenAIStrict})
	if err != nil {
		log.Fatal(err)
	}
	cfg := adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: ts}}
	fmt.Println(len(cfg.Tools), "tools")
	// agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{Model: m, ToolsConfig: cfg, ...})
	// Output: 8 tools
}

// Eino's own file agent middleware runs on a fencefs tool set through
// the Backend; Refusals hands the model what the set refused.
func ExampleNewBackend() {
	ctx := context.Background()
	set, err := tools.New(memfs.New(), tools.Options{Denied: []string{"**/.env"}})
	if err != nil {
		log.Fatal(err)
	}
	be, err := einotools.NewBackend(set)
	if err != nil {
		log.Fatal(err)
	}
	mw, err := fsmw.NewMiddleware(ctx, &fsmw.Config{Backend: be})
	if err != nil {
		log.Fatal(err)
	}
	cfg := adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{
		ToolCallMiddlewares: []compose.ToolMiddleware{einotools.Refusals()},
	}}
	fmt.Println(len(mw.AdditionalTools), "file tools;", len(cfg.ToolCallMiddlewares), "middleware")
	// agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{Model: m, ToolsConfig: cfg,
	//	Middlewares: []adk.AgentMiddleware{mw}, ...})
	// Output: 6 file tools; 1 middleware
}
