package overlayspec_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/mountspec"
	"github.com/fencefs/fencefs/overlay/overlayspec"
)

// Example opens an overlay mount spec: a read-only checkout under a
// scratch directory, as a tenant template would give each tenant.
func Example() {
	ctx := context.Background()
	root, _ := os.MkdirTemp("", "overlayspec")
	defer os.RemoveAll(root)
	repo, scratch := filepath.Join(root, "repo"), filepath.Join(root, "scratch")
	os.MkdirAll(repo, 0o755)
	os.MkdirAll(scratch, 0o755)
	os.WriteFile(filepath.Join(repo, "main.go"), []byte("package main\n"), 0o644)

	sc := overlayspec.New(mountspec.Options{})
	defer sc.Close()
	schemes := mountspec.Schemes{overlayspec.Prefix: sc}
	spec, err := schemes.Parse("overlay:local:" + repo + ":ro+local:" + scratch)
	if err != nil {
		fmt.Println(err)
		return
	}
	opener := mountspec.New(mountspec.Options{Schemes: schemes})
	defer opener.Close()
	ws, closer, err := opener.Open(ctx, "ws", spec, 5*time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer closer.Close()
	backend.WriteFile(ctx, ws, "main.go", []byte("package main // changed\n"), backend.WriteOptions{})
	changed, _ := backend.ReadFile(ctx, ws, "main.go")
	original, _ := os.ReadFile(filepath.Join(repo, "main.go"))
	fmt.Printf("overlay: %soverlay's base: %s", changed, original)
	// Output:
	// overlay: package main // changed
	// overlay's base: package main
}
