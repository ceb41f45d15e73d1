package checkpointcli_test

import (
	"context"
	"encoding/json"
	"log"
	"os"
	"time"

	"github.com/fencefs/fencefs/checkpoint"
	"github.com/fencefs/fencefs/checkpoint/checkpointcli"
	"github.com/fencefs/fencefs/memfs"
	"github.com/fencefs/fencefs/tools"
)

// A program opens the namespace and the store from its own flags and
// runs the subcommand the person asked for.
func ExampleRun() {
	ctx := context.Background()
	ns := memfs.New()
	set, _ := tools.New(ns, tools.Options{})
	clock := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	j, err := checkpoint.Open(ctx, ns, memfs.New(), checkpoint.Options{Now: clock})
	if err != nil {
		log.Fatal(err)
	}
	_, _ = set.Call(j.Bind(ctx), "write_file", json.RawMessage(`{"path": "a.txt", "content": "hi\n"}`))

	checkpointcli.Run(ctx, j, []string{"list"}, os.Stdout, os.Stderr)
	checkpointcli.Run(ctx, j, []string{"restore", "0"}, os.Stdout, os.Stderr)
	// Output:
	// 1	2026-01-02T03:04:05Z		write a.txt, 1 path
	// oldest checkpoint kept: 0
	// restored a.txt
	// restore 3: 1 path to checkpoint 0; `checkpoints restore 2` undoes it
}
