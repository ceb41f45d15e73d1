package checkpoint_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/checkpoint"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/tools"
)

// On a local store, Options.Segments keeps the records in a segment file
// of the journal's own: one write and one data sync per record.
func ExampleOptions_segments() {
	ctx := context.Background()
	nsDir, _ := os.MkdirTemp("", "ns")
	storeDir, _ := os.MkdirTemp("", "store")
	defer os.RemoveAll(nsDir)
	defer os.RemoveAll(storeDir)
	ns, _ := local.New(nsDir)
	defer ns.Close()
	store, _ := local.New(storeDir)
	defer store.Close() // closes the journal's segment too

	_ = backend.WriteFile(ctx, ns, "a.txt", []byte("one\n"), backend.WriteOptions{})
	set, _ := tools.New(ns, tools.Options{})
	j, err := checkpoint.Open(ctx, ns, store, checkpoint.Options{Segments: true})
	if err != nil {
		log.Fatal(err)
	}
	_, _ = set.Call(j.Bind(ctx), "edit_file", json.RawMessage(`{"path": "a.txt", "old_text": "one", "new_text": "two"}`))
	_, _ = set.Call(j.Bind(ctx), "write_file", json.RawMessage(`{"path": "b.txt", "content": "new\n"}`))

	entries, _ := os.ReadDir(filepath.Join(storeDir, "journal"))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".log") {
			fmt.Println("a segment")
		} else {
			fmt.Println(e.Name())
		}
	}
	fmt.Println(len(j.Checkpoints()), "checkpoints")
	if _, err := j.Restore(ctx, 0, checkpoint.RestoreOptions{}); err != nil {
		log.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(nsDir, "a.txt"))
	_, err = os.Stat(filepath.Join(nsDir, "b.txt"))
	fmt.Printf("a.txt: %q, b.txt gone: %v\n", data, os.IsNotExist(err))
	// Output:
	// a segment
	// seq.lock
	// 2 checkpoints
	// a.txt: "one\n", b.txt gone: true
}
