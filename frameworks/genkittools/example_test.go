package genkittools_test

import (
	"context"
	"fmt"
	"log"

	"github.com/fencefs/fencefs/frameworks/genkittools"
	"github.com/fencefs/fencefs/memfs"
	"github.com/fencefs/fencefs/tools"
	"github.com/firebase/genkit/go/genkit"
)

// A Genkit agent gets the read-only file tools over a workspace (here in
// memory; local.New, s3adapter.New or a mount work the same) and denies
// secrets to them; a generation passes the tools with ai.WithTools.
func Example() {
	ctx := context.Background()
	set, err := tools.New(memfs.New(), tools.Options{
		ReadOnly: true,
		Denied:   []string{"**/.env"},
	})
	if err != nil {
		log.Fatal(err)
	}
	g := genkit.Init(ctx)
	fsTools, err := genkittools.Define(g, set)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range fsTools {
		fmt.Println(t.Name())
	}
	// genkit.Generate(ctx, g, ai.WithModelName("googleai/gemini-2.5-flash"),
	//	ai.WithPrompt("Summarise README.md"), ai.WithTools(...))

	// Output:
	// read_file
	// list_directory
	// search_files
	// find_files
	// file_info
}
