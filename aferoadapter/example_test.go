package aferoadapter_test

import (
	"context"
	"fmt"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/aferoadapter"
	"github.com/fencefs/fencefs/backend"
)

func ExampleNew() {
	ctx := context.Background()
	b := aferoadapter.New(afero.NewMemMapFs())

	// Writes are atomic; missing parents are created.
	if err := backend.WriteFile(ctx, b, "notes/todo.md", []byte("- test\n"), backend.WriteOptions{}); err != nil {
		panic(err)
	}
	entries, err := b.List(ctx, "notes")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		fmt.Println(e.Name, e.Size)
	}
	data, err := backend.ReadFile(ctx, b, "notes/todo.md")
	if err != nil {
		panic(err)
	}
	fmt.Printf("%q\n", data)
	// Output:
	// todo.md 7
	// "- test\n"
}

func ExampleToAfero() {
	ctx := context.Background()
	fsys := aferoadapter.ToAfero(ctx, aferoadapter.New(afero.NewMemMapFs()))

	// Code written for afero works on any fencefs backend.
	if err := afero.WriteFile(fsys, "/reports/q1.txt", []byte("ok"), 0o644); err != nil {
		panic(err)
	}
	data, err := afero.ReadFile(fsys, "reports/q1.txt")
	if err != nil {
		panic(err)
	}
	fmt.Println(string(data))
	_, err = afero.ReadFile(fsys, "../etc/passwd")
	fmt.Println(err)
	// Output:
	// ok
	// open ../etc/passwd: invalid path: path climbs above the root
}
