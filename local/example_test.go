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

// A log file is written in place and synced without a rename: zeros
// written and synced ahead, then records over them, each made durable by
// one data sync that changes no metadata.
func ExampleFS_OpenLog() {
	dir, err := os.MkdirTemp("", "fencefs-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	fsys, err := local.New(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer fsys.Close() // closes the log too

	l, err := fsys.OpenLog(context.Background(), "logs/a.log", true) // created, synced with its directories
	if err != nil {
		log.Fatal(err)
	}
	if _, err := l.WriteAt(make([]byte, 4096), 0); err != nil {
		log.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		log.Fatal(err)
	}
	if _, err := l.WriteAt([]byte("record 1\n"), 0); err != nil {
		log.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		log.Fatal(err)
	}
	buf := make([]byte, 9)
	_, _ = l.ReadAt(buf, 0)
	size, _ := l.Size()
	fmt.Printf("%q, %d bytes\n", buf, size)
	// Output:
	// "record 1\n", 4096 bytes
}
