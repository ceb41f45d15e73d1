package conformance_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/local"
)

// An adapter's test file runs the tool-level suite with the same harness
// it gives conformance.Run; the scenarios compare every tool's text with
// the contract's. A rooted namespace (one whose Capabilities say Rooted,
// such as mounted) names the directory the
// scenarios work in, usually a mount, with ToolsOptions.Dir.
func ExampleRunTools() {
	h := conformance.HarnessFunc(func(ctx context.Context, t *testing.T) backend.Backend {
		b, err := local.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	})
	// In TestTools: conformance.RunTools(t, h), or for a mounted
	// namespace whose mount "ws" holds the files:
	opts := conformance.ToolsOptions{Dir: "ws"}
	_ = h
	fmt.Println(opts.Dir)
	// Output: ws
}
