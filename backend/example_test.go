package backend_test

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/aferoadapter"
	"github.com/fencefs/fencefs/backend"
)

func ExampleFS() {
	ctx := context.Background()
	b := aferoadapter.New(afero.NewMemMapFs())
	for _, name := range []string{"docs/a.md", "docs/b.txt", "docs/sub/c.md"} {
		if err := backend.WriteFile(ctx, b, name, []byte(name), backend.WriteOptions{}); err != nil {
			panic(err)
		}
	}

	// Any backend works with the io/fs ecosystem.
	fsys := backend.FS(ctx, b)
	matches, err := fs.Glob(fsys, "docs/*.md")
	if err != nil {
		panic(err)
	}
	fmt.Println(matches)
	err = fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fmt.Println(name, d.IsDir())
		return nil
	})
	if err != nil {
		panic(err)
	}
	// Output:
	// [docs/a.md]
	// . true
	// docs true
	// docs/a.md false
	// docs/b.txt false
	// docs/sub true
	// docs/sub/c.md false
}
