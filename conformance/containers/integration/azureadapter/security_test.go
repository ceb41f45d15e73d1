package azureadapter_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/tools"
)

// The security suite's S3 cases (security/s3_test.go), on Azure.

// hostileKeys are blob names another tool wrote below the backend's
// prefix "ws" that are not canonical storage paths: "." and ".."
// segments, empty segments, a leading "/" below the prefix, an
// over-long segment, the prefix itself as a blob, and blobs that are
// also prefixes ("ws/dir" next to "ws/dir/inner.txt"). Unlike versitygw,
// the Blob service (and Azurite) stores each as written: the SDK
// escapes every "/" of a name, so no path is normalized on the way.
var hostileKeys = []string{
	"ws/./dot.txt", "ws/../up.txt", "ws//empty.txt", "ws//lead/x.txt", "ws/sub//x.txt", "ws/sub/./y.txt",
	"ws/sub/../z.txt", "ws/" + strings.Repeat("l", 300) + "/x.txt", "ws/.", "ws/..", "ws/sub/.", "ws/sub/..",
	"ws", "ws/dir", "ws/sub/deep",
}

// neighbourKeys are names that extend the prefix without a slash
// ("ws0/...", "wsx.txt": the tenant "t1" next to "t10"), and names no
// storage path can have.
var neighbourKeys = []string{"ws0/secret.txt", "ws0/a.txt", "wsx.txt", "ws./secret.txt", `ws/\..\...txt`, "ws/~home.txt"}

// attackPaths aim at the names the odd blobs would have if they were
// cleaned or cut at the prefix; every one must keep the canary hidden.
var attackPaths = []string{
	"dot.txt", "up.txt", "empty.txt", "lead/x.txt", "/lead/x.txt", "//lead/x.txt", "x.txt", "sub/x.txt",
	"y.txt", "sub/y.txt", "z.txt", "sub/z.txt", "b.txt", `\..\..\b.txt`, "~home.txt", "0/secret.txt",
	"0/a.txt", "../ws0/secret.txt", "../wsx.txt", "../ws./secret.txt", ".", "sub", "sub/.", "sub/deep",
	"/", "dir", "dir/inner.txt", "..", "../..",
}

// attackArgs are the arguments each tool gets for the path p.
func attackArgs(tool, p, canary string) map[string]any {
	switch tool {
	case "write_file":
		return map[string]any{"path": p, "content": "written by the attack\n"}
	case "edit_file":
		return map[string]any{"path": p, "old_text": canary, "new_text": "PWNED"}
	case "search_files", "grep":
		return map[string]any{"pattern": canary, "path": p}
	case "find_files":
		return map[string]any{"pattern": "**", "path": p}
	case "delete_file":
		return map[string]any{"path": p, "expected_hash": strings.Repeat("0", 64)}
	case "move_file":
		return map[string]any{"source": p, "destination": "moved-by-the-attack.txt", "expected_hash": strings.Repeat("0", 64)}
	case "copy_file":
		return map[string]any{"source": p, "destination": "copied-by-the-attack.txt"}
	case "apply_patch":
		return map[string]any{"patch": "*** Begin Patch\n*** Update File: " + p + "\n@@\n-" + canary + "\n+PWNED\n*** End Patch\n"}
	}
	return map[string]any{"path": p}
}

// TestHostileKeys attacks a backend whose prefix "ws" holds blobs other
// tools wrote that are not canonical paths, whose neighbours extend its
// prefix without a slash, and where a blob is also a prefix: every tool
// on every name keeps the canary hidden and changes no blob outside the
// backend's canonical names; the blob that is also a prefix is a
// directory that no write replaces.
func TestHostileKeys(t *testing.T) {
	srv := azurite.Get(t)
	ctx := t.Context()
	cont := newContainer(t, srv)
	cc := serviceClient(t, srv, nil).NewContainerClient(cont)
	var tok [12]byte
	_, _ = rand.Read(tok[:])
	canary := "CANARY" + hex.EncodeToString(tok[:])
	for _, k := range append(slices.Clone(hostileKeys), neighbourKeys...) {
		putBlob(ctx, t, cc, k, canary+"\n")
	}
	// The security suite's base layout: files inside, and the canary
	// in the container's other names.
	inside := map[string]string{
		"ws/a.txt": "hello inside\n", "ws/sub/b.txt": "inside b\n", "ws/sub/deep/c.txt": "inside c\n",
		"ws/.env": "INSIDE_ENV=1\n", "ws/private/p.txt": "private inside\n", "ws/dir/inner.txt": "inside\n",
	}
	for k, v := range inside {
		putBlob(ctx, t, cc, k, v)
	}
	for _, d := range []string{"", "ws-evil/", "ws2/", "outside/"} {
		putBlob(ctx, t, cc, d+"secret.txt", canary+"\n")
		putBlob(ctx, t, cc, d+"a.txt", canary+"\n")
	}
	before := snapshot(t, cc)
	for _, k := range append(slices.Clone(hostileKeys), neighbourKeys...) {
		// Azurite stores a backslash as a slash: `ws/\..\...txt` is the
		// blob "ws//../...txt", one more hostile name.
		k = strings.ReplaceAll(k, `\`, "/")
		if before[k] != canary+"\n" {
			t.Fatalf("the emulator did not keep the blob %q as written: %q", k, slices.Sorted(maps.Keys(before)))
		}
	}

	f := open(t, config(srv, cont, "ws"))
	s, err := tools.New(f, tools.Options{Tools: tools.AllTools()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.AllTools() {
		for _, p := range attackPaths {
			args, _ := json.Marshal(attackArgs(tool, p, canary))
			out, err := s.Call(ctx, tool, args)
			for _, text := range []string{out, errText(err), tools.Message(err)} {
				if strings.Contains(text, canary) {
					t.Errorf("%s %q shows the canary: %q", tool, p, text)
				}
			}
		}
	}

	// What the attacks may have changed: only canonical names below
	// ws/ (a write to "x.txt" lands as ws/x.txt). Every odd blob and
	// every neighbour is as it was.
	after := snapshot(t, cc)
	for k, v := range before {
		if _, ok := inside[k]; ok {
			continue
		}
		if after[k] != v {
			t.Errorf("blob %q changed: %q, was %q", k, after[k], v)
		}
	}
	for k := range after {
		if _, ok := before[k]; ok {
			continue
		}
		rel, ok := strings.CutPrefix(k, "ws/")
		if !ok || !backend.ValidPath(strings.TrimSuffix(rel, "/")) { // a file, or a directory's marker
			t.Errorf("the attacks created the blob %q", k)
		}
	}

	// The blob "ws/dir" is also a prefix: a directory, which no write
	// replaces and no read serves.
	for _, c := range []struct {
		tool   string
		refuse bool
	}{{"read_file", true}, {"write_file", true}, {"edit_file", true}, {"list_directory", false}, {"file_info", false}} {
		args, _ := json.Marshal(attackArgs(c.tool, "dir", canary))
		out, err := s.Call(ctx, c.tool, args)
		switch {
		case c.refuse && err == nil:
			t.Errorf("%s dir succeeded: %q", c.tool, out)
		case !c.refuse && (err != nil || !strings.Contains(out, "inner.txt") && !strings.Contains(out, "directory")):
			t.Errorf("%s dir: %q, %v; want the directory", c.tool, out, err)
		}
	}
	if got := snapshot(t, cc)["ws/dir"]; got != canary+"\n" {
		t.Errorf("the blob ws/dir now holds %q", got)
	}
}

// errText is err's message, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// snapshot returns every blob of the container with its content.
func snapshot(t *testing.T, cc *container.Client) map[string]string {
	t.Helper()
	out := map[string]string{}
	p := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{MaxResults: to.Ptr(int32(5000))})
	for p.More() {
		page, err := p.NextPage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range page.Segment.BlobItems {
			resp, err := cc.NewBlobClient(*b.Name).DownloadStream(t.Context(), nil)
			if err != nil {
				t.Fatalf("reading %q: %v", *b.Name, err)
			}
			data, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			out[*b.Name] = string(data)
		}
	}
	return out
}
