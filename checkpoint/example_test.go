package checkpoint_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/checkpoint"
	"github.com/fencefs/fencefs/memfs"
	"github.com/fencefs/fencefs/tools"
)

// An agent's changes are journaled through the context of each tool
// call, then undone by a restore to the checkpoint before its turn.
func Example() {
	ctx := context.Background()
	ns, store := memfs.New(), memfs.New() // the agent's files; the journal's store
	_ = backend.WriteFile(ctx, ns, "notes.md", []byte("draft\n"), backend.WriteOptions{})

	set, err := tools.New(ns, tools.Options{})
	if err != nil {
		log.Fatal(err)
	}
	j, err := checkpoint.Open(ctx, ns, store, checkpoint.Options{})
	if err != nil {
		log.Fatal(err)
	}
	_ = j.Mark(ctx, "turn-1")
	call := func(name, args string) {
		out, err := set.Call(j.Bind(ctx), name, json.RawMessage(args))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(out)
	}
	call("edit_file", `{"path": "notes.md", "old_text": "draft", "new_text": "final"}`)
	call("write_file", `{"path": "todo.md", "content": "ship it\n"}`)

	start, _ := j.LabelStart("turn-1")
	res, err := j.Restore(ctx, start, checkpoint.RestoreOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("restored:", res.Restored)
	data, _ := backend.ReadFile(ctx, ns, "notes.md")
	_, err = backend.Stat(ctx, ns, "todo.md")
	fmt.Printf("notes.md: %q; todo.md exists: %v\n", data, err == nil)
	// Output:
	// Edited notes.md (line 1). [hash:9149a1639fd7]
	// Wrote 8 chars (1 line) to todo.md. [hash:54c150f30b97]
	// restored: [notes.md todo.md]
	// notes.md: "draft\n"; todo.md exists: false
}

// A restore over a path another writer changed is refused, listing it;
// SkipConflicts restores the rest and leaves that path as it is.
func ExampleJournal_Restore_conflict() {
	ctx := context.Background()
	ns, store := memfs.New(), memfs.New()
	set, _ := tools.New(ns, tools.Options{})
	j, _ := checkpoint.Open(ctx, ns, store, checkpoint.Options{})
	for _, name := range []string{"a.txt", "b.txt"} {
		_, _ = set.Call(j.Bind(ctx), "write_file", json.RawMessage(`{"path": "`+name+`", "content": "agent\n"}`))
	}
	// Someone else edits b.txt behind the agent's back.
	_ = backend.WriteFile(ctx, ns, "b.txt", []byte("theirs\n"), backend.WriteOptions{})

	_, err := j.Restore(ctx, 0, checkpoint.RestoreOptions{})
	fmt.Println(err)
	res, _ := j.Restore(ctx, 0, checkpoint.RestoreOptions{SkipConflicts: true})
	fmt.Println("restored:", res.Restored, "skipped:", res.Skipped[0].Path)
	// Output:
	// checkpoint: restore to 0 refused: 1 path(s) in conflict (restore with Force to overwrite them):
	//   b.txt: changed by another writer: it is file ed9c86a6 (7 bytes), the journal expected file d20bc21b (6 bytes)
	// restored: [a.txt] skipped: b.txt
}

// Diff shows what a restore would change before it is made.
func ExampleJournal_Diff() {
	ctx := context.Background()
	ns, store := memfs.New(), memfs.New()
	_ = backend.WriteFile(ctx, ns, "a.txt", []byte("one\ntwo\n"), backend.WriteOptions{})
	set, _ := tools.New(ns, tools.Options{})
	j, _ := checkpoint.Open(ctx, ns, store, checkpoint.Options{})
	_, _ = set.Call(j.Bind(ctx), "edit_file", json.RawMessage(`{"path": "a.txt", "old_text": "two", "new_text": "2"}`))
	_, _ = set.Call(j.Bind(ctx), "write_file", json.RawMessage(`{"path": "b.txt", "content": "new\n"}`))

	diff, err := j.Diff(ctx, 0, checkpoint.RestoreOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(diff)
	// Output:
	// --- a/a.txt
	// +++ b/a.txt
	// @@ -1,2 +1,2 @@
	//  one
	// -2
	// +two
	// --- a/b.txt
	// +++ /dev/null
	// @@ -1,1 +1,0 @@
	// -new
}
