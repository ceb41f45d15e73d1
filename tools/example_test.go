package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/tools"
)

func ExampleNew() {
	dir, err := os.MkdirTemp("", "fencefs-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	b, err := local.New(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()

	set, err := tools.New(b, tools.Options{NoContentHashes: true})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	out, _ := set.Call(ctx, "write_file", json.RawMessage(`{"path": "notes.md", "content": "# Notes\nfencefs\n"}`))
	fmt.Println(out)
	out, _ = set.Call(ctx, "read_file", json.RawMessage(`{"path": "notes.md"}`))
	fmt.Print(out)
	_, err = set.Call(ctx, "read_file", json.RawMessage(`{"path": "../outside.txt"}`))
	fmt.Println(err, tools.IsRetry(err))
	// Output:
	// Wrote 16 chars (2 lines) to notes.md.
	// [notes.md | 2 lines]
	//      1	# Notes
	//      2	fencefs
	// Path '../outside.txt' resolves outside the root directory. true
}

func ExampleOptions_OnChangeRequest() {
	dir, _ := os.MkdirTemp("", "fencefs-example")
	defer os.RemoveAll(dir)
	b, _ := local.New(dir)
	defer b.Close()

	set, _ := tools.New(b, tools.Options{
		OnChangeRequest: func(ctx context.Context, req *tools.ChangeRequest) error {
			fmt.Printf("%s %s:\n%s\n", req.Operation, req.Path, req.Diff)
			if req.Operation == tools.OpEdit {
				req.Cancel("edits need a review")
			}
			return nil
		},
	})
	ctx := context.Background()
	set.Call(ctx, "write_file", json.RawMessage(`{"path": "a.txt", "content": "one\n"}`))
	out, _ := set.Call(ctx, "edit_file", json.RawMessage(`{"path": "a.txt", "old_text": "one", "new_text": "two"}`))
	fmt.Println(out)
	// Output:
	// write a.txt:
	// --- a/a.txt
	// +++ b/a.txt
	// @@ -0,0 +1 @@
	// +one
	// edit a.txt:
	// --- a/a.txt
	// +++ b/a.txt
	// @@ -1 +1 @@
	// -one
	// +two
	// ['a.txt' was not edited: edits need a review]
}

// A host tells refusals apart by kind, never by their text, and records
// how each call ended.
func ExampleKindOf() {
	dir, _ := os.MkdirTemp("", "fencefs-example")
	defer os.RemoveAll(dir)
	b, _ := local.New(dir)
	defer b.Close()
	set, _ := tools.New(b, tools.Options{})

	_, err := set.Call(context.Background(), "read_file", json.RawMessage(`{"path": "missing.md"}`))
	switch {
	case errors.Is(err, tools.KindNotFound):
		fmt.Println("not found:", tools.Message(err))
	case errors.Is(err, tools.KindConflict):
		fmt.Println("conflict")
	}
	fmt.Println(tools.KindOf(err), tools.OutcomeOf(err))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = set.Call(ctx, "read_file", json.RawMessage(`{"path": "missing.md"}`))
	fmt.Println(tools.OutcomeOf(err))
	// Output:
	// not found: File not found: missing.md
	// not_found refused
	// cancelled
}

// A listener that only counts bytes says it reads no diff, so that the
// tools do not build one for it.
func ExampleReadsNoDiff() {
	dir, _ := os.MkdirTemp("", "fencefs-example")
	defer os.RemoveAll(dir)
	b, _ := local.New(dir)
	defer b.Close()

	set, _ := tools.New(b, tools.Options{})
	ctx := tools.WithChangeListener(context.Background(), func(_ context.Context, req *tools.ChangeRequest) error {
		for _, c := range req.Sizes {
			fmt.Printf("%s %s: %d -> %d bytes, diff %q\n", req.Operation, c.Path, c.Before, c.After, req.Diff)
		}
		return nil
	}, tools.ReadsNoDiff)
	set.Call(ctx, "write_file", json.RawMessage(`{"path": "a.txt", "content": "one\n"}`))
	set.Call(ctx, "edit_file", json.RawMessage(`{"path": "a.txt", "old_text": "one", "new_text": "three"}`))
	// Output:
	// write a.txt: -1 -> 4 bytes, diff ""
	// edit a.txt: 4 -> 6 bytes, diff ""
}
