package overlay_test

import (
	"context"
	"fmt"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/memfs"
	"github.com/fencefs/fencefs/overlay"
)

// An overlay takes an agent's changes in its upper layer, leaves the
// base as it was, and lands them on the base on request, each under the
// base version it was made against.
func Example() {
	ctx := context.Background()
	base := memfs.New()
	_ = backend.WriteFile(ctx, base, "README.md", []byte("# demo\n"), backend.WriteOptions{})
	_ = backend.WriteFile(ctx, base, "old.txt", []byte("obsolete\n"), backend.WriteOptions{})

	o, err := overlay.New(base, memfs.New(), overlay.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = backend.WriteFile(ctx, o, "README.md", []byte("# demo\n\nNow with docs.\n"), backend.WriteOptions{})
	_ = backend.Remove(ctx, o, "old.txt", backend.RemoveOptions{})

	changes, _ := o.Changes(ctx)
	for _, c := range changes {
		fmt.Println(c.Kind, c.Path)
	}
	diff, _ := o.Diff(ctx, "README.md")
	fmt.Print(diff)

	res, err := o.Commit(ctx)
	fmt.Println("landed:", res.Landed, "conflicts:", len(res.Conflicts), err)
	data, _ := backend.ReadFile(ctx, base, "README.md")
	fmt.Printf("base: %q\n", data)
	// Output:
	// modified README.md
	// deleted old.txt
	// --- a/README.md
	// +++ b/README.md
	// @@ -1 +1,3 @@
	//  # demo
	// +
	// +Now with docs.
	// landed: [old.txt README.md] conflicts: 0 <nil>
	// base: "# demo\n\nNow with docs.\n"
}
