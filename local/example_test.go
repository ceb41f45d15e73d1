//go:build linux

package local_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/local"
)

func ExampleNew() {
	dir, err := os.MkdirTemp("", "fencefs-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	fsys, err := local.New(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer fsys.Close()

	ctx := context.Background()
	if err := backend.WriteFile(ctx, fsys, "notes/hello.txt", []byte("hello, fencefs\n"), backend.WriteOptions{}); err != nil {
		log.Fatal(err)
	}
	data, err := backend.ReadFile(ctx, fsys, "notes/hello.txt")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(data))

	// Paths leaving the root are refused before anything is touched.
	_, err = fsys.OpenRead(ctx, "../etc/passwd")
	fmt.Println(err)
	// Output:
	// hello, fencefs
	// open ../etc/passwd: invalid path
}

func ExampleFS_ResolveSymlinks() {
	dir, err := os.MkdirTemp("", "fencefs-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Mkdir(dir+"/docs", 0o755)
	os.Symlink("docs", dir+"/latest")
	os.Symlink("/etc", dir+"/escape")

	fsys, err := local.New(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer fsys.Close()

	ctx := context.Background()
	fmt.Println(fsys.ResolveSymlinks(ctx, "latest/new.txt"))
	fmt.Println(fsys.ResolveSymlinks(ctx, "escape/passwd"))
	// Output:
	// docs/new.txt <nil>
	//  resolve escape/passwd: resolves outside the root
}
