package memfs_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/memfs"
)

// An FS is a complete backend in memory: writes commit atomically and
// honour their preconditions, and a second value over the same storage
// sees what the first commits.
func Example() {
	ctx := context.Background()
	fsys := memfs.New()
	if err := backend.WriteFile(ctx, fsys, "notes/todo.md", []byte("write tests\n"), backend.WriteOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	again := backend.WriteFile(ctx, fsys, "notes/todo.md", []byte("other\n"), backend.WriteOptions{
		Precondition: backend.Precondition{CreateOnly: true},
	})
	fmt.Println("create-only again:", errors.Is(again, fs.ErrExist))

	data, err := backend.ReadFile(ctx, fsys.Reopen(), "notes/todo.md")
	fmt.Printf("%q %v\n", data, err)
	// Output:
	// create-only again: true
	// "write tests\n" <nil>
}
