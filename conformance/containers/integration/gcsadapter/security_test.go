package gcsadapter_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/tools"
)

// The security suite's S3 cases (security/s3_test.go), run on Cloud
// Storage: objects another tool wrote below the backend's prefix "ws"
// whose names are not canonical paths, neighbours whose names extend the
// prefix without a slash (the tenant "t1" next to "t10"), and an object
// that is also a prefix. Each holds the canary, which no tool may show
// under any name, and no tool may change them.

// hostileNames are names below the prefix that are not canonical paths:
// "." and ".." segments, empty segments, a leading "/" below the prefix,
// an over-long segment, a NUL, the prefix itself as an object, and
// objects that are also prefixes ("ws/dir", "ws/sub/deep").
var hostileNames = []string{
	"ws/./dot.txt", "ws/../up.txt", "ws//empty.txt", "ws//lead/x.txt", "ws/sub//x.txt", "ws/sub/./y.txt",
	"ws/sub/../z.txt", "ws/" + strings.Repeat("l", 300) + "/x.txt", "ws/.", "ws/..", "ws/sub/.", "ws/sub/..",
	"ws", "ws/dir", "ws/sub/deep", "ws/nul\x00.txt",
}

// neighbourNames extend the prefix without a slash, or name no storage
// path.
var neighbourNames = []string{"ws0/secret.txt", "ws0/a.txt", "wsx.txt", "ws./secret.txt", `ws/\..\...txt`, "ws/~home.txt"}

// hostilePaths aim at the names the odd objects would have if they were
// cleaned or cut at the prefix.
var hostilePaths = []string{
	"dot.txt", "up.txt", "empty.txt", "lead/x.txt", "/lead/x.txt", "//lead/x.txt", "x.txt", "sub/x.txt", "y.txt",
	"sub/y.txt", "z.txt", "sub/z.txt", `\..\..\b.txt`, "~home.txt", "0/secret.txt", "0/a.txt", "../ws0/secret.txt",
	"../wsx.txt", "../ws./secret.txt", ".", "sub", "sub/.", "sub/deep", "/", "dir", "dir/inner.txt", "nul.txt",
}

// hostileArgs are the arguments of tool aimed at the path p.
func hostileArgs(tool, p string) map[string]any {
	switch tool {
	case "write_file":
		return map[string]any{"path": p, "content": "written by the suite\n"}
	case "edit_file":
		return map[string]any{"path": p, "old_text": "CANARY", "new_text": "PWNED"}
	case "search_files", "grep":
		return map[string]any{"pattern": "CANARY", "path": p}
	case "find_files":
		return map[string]any{"pattern": "**", "path": p}
	case "delete_file":
		return map[string]any{"path": p, "expected_hash": strings.Repeat("0", 64)}
	case "move_file":
		return map[string]any{"source": p, "destination": "moved-by-the-suite.txt", "expected_hash": strings.Repeat("0", 64)}
	case "copy_file":
		return map[string]any{"source": "a.txt", "destination": p, "overwrite": true, "destination_hash": strings.Repeat("0", 64)}
	}
	return map[string]any{"path": p}
}

func TestHostileNames(t *testing.T) {
	srv := gcssrv.Get(t)
	ctx := t.Context()
	bucket := srv.NewBucket(ctx, t)
	client := rawClient(t, srv)
	var tok [8]byte
	rand.Read(tok[:])
	canary := "CANARY-" + hex.EncodeToString(tok[:])
	for _, n := range append(slices.Clone(hostileNames), neighbourNames...) {
		put(ctx, t, client, bucket, n, canary+"\n")
	}
	put(ctx, t, client, bucket, "ws/dir/inner.txt", "inside\n")
	put(ctx, t, client, bucket, "ws/sub/deep/c.txt", "inside c\n")
	put(ctx, t, client, bucket, "ws/a.txt", "a\n")
	before := snapshot(ctx, t, client, bucket)
	for _, n := range append(slices.Clone(hostileNames), neighbourNames...) {
		if _, ok := before[n]; !ok {
			t.Fatalf("the emulator did not store %q as written", n)
		}
	}
	f := open(t, config(srv, bucket, "ws"))
	s, err := tools.New(f, tools.Options{Tools: tools.AllTools()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"read_file", "file_info", "list_directory", "find_files", "search_files", "grep",
		"write_file", "edit_file", "delete_file", "move_file", "copy_file"} {
		for _, p := range hostilePaths {
			args, _ := json.Marshal(hostileArgs(tool, p))
			out, err := s.Call(ctx, tool, args)
			if msg := fmt.Sprint(out, err); strings.Contains(msg, canary) {
				t.Errorf("%s %q showed the canary: %q", tool, p, msg)
			}
		}
	}
	after := snapshot(ctx, t, client, bucket)
	for _, name := range append(slices.Clone(hostileNames), neighbourNames...) {
		if gen := before[name]; after[name] != gen {
			t.Errorf("%q changed: generation %d, then %d", name, gen, after[name])
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok && (!strings.HasPrefix(name, "ws/") || !backend.ValidPath(strings.TrimPrefix(name, "ws/"))) {
			t.Errorf("a tool created %q, outside the prefix or under a name no storage path has", name)
		}
	}

	// The object "ws/dir" is also a prefix: a directory that no write
	// replaces.
	call := func(tool string, args map[string]any) (string, error) {
		b, _ := json.Marshal(args)
		return s.Call(ctx, tool, b)
	}
	if out, err := call("read_file", map[string]any{"path": "dir"}); err == nil && !strings.Contains(out, "'dir' is a directory, not a file.") {
		t.Errorf("read_file dir = %q, want it refused as a directory", out)
	}
	for _, tool := range []string{"write_file", "edit_file"} {
		out, err := call(tool, hostileArgs(tool, "dir"))
		if err == nil && !strings.Contains(strings.ToLower(out), "directory") {
			t.Errorf("%s dir = %q, want it refused", tool, out)
		}
	}
	if out, err := call("list_directory", map[string]any{"path": "dir"}); err != nil || !strings.Contains(out, "inner.txt") {
		t.Errorf("list_directory dir = %q, %v; want inner.txt", out, err)
	}
	if out, err := call("file_info", map[string]any{"path": "dir"}); err != nil || !strings.Contains(out, "directory") {
		t.Errorf("file_info dir = %q, %v; want a directory", out, err)
	}
	if got := snapshot(ctx, t, client, bucket)["ws/dir"]; got != before["ws/dir"] {
		t.Errorf("the object ws/dir changed: generation %d, then %d", before["ws/dir"], got)
	}
}

// snapshot returns the generation of every object in bucket.
func snapshot(ctx context.Context, t *testing.T, c *storage.Client, bucket string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	it := c.Bucket(bucket).Objects(ctx, nil)
	for {
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out[a.Name] = a.Generation
	}
}
