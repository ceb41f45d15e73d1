package azureadapter_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/fencefs/fencefs/azureadapter"
	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/tools"
)

// startCountingProxy serves a containers.RequestLog in front of target
// (a server's base URL, no path), naming each request by
// describeRequest, until the test ends.
func startCountingProxy(t *testing.T, target string) *containers.RequestLog {
	return containers.StartRequestLog(t, target, containers.RequestLogOptions{Describe: describeRequest})
}

// describeRequest names a Blob service request by its method, path, the
// query keys that choose the operation and its condition.
func describeRequest(r *http.Request) string {
	op := r.Method + " " + r.URL.Path
	q := r.URL.Query()
	switch {
	case q.Get("comp") == "list" && q.Get("delimiter") != "":
		op += " (list " + q.Get("prefix") + " by " + q.Get("delimiter") + ")"
	case q.Get("comp") == "list":
		op += " (list " + q.Get("prefix") + ")"
	case q.Get("comp") != "":
		op += " (" + q.Get("restype") + " " + q.Get("comp") + ")"
	case r.Header.Get("If-Match") != "":
		op += " (If-Match)"
	case r.Header.Get("If-None-Match") != "":
		op += " (If-None-Match)"
	}
	return op
}

// TestRequestBudgets runs each tool once, as `fencefs call` does (the
// backend opened afresh, with its start-up probe), through a counting
// proxy in front of Azurite, at the top level and one directory down, and
// holds it to its budget of requests. The start-up probe is two requests
// (Get Container Properties, and Get Account Information for the
// hierarchical-namespace check, asked once per shared client): one more
// than S3's HeadBucket. A write that is not a compare-and-swap on a
// version the caller has just seen lists once more after its commit,
// because the container takes a blob "f" next to "f/x" (see
// undoUnderDir), where versitygw refuses it.
func TestRequestBudgets(t *testing.T) {
	srv := azurite.Get(t)
	ctx := t.Context()
	base, _, _ := strings.Cut(strings.TrimPrefix(srv.Endpoint, "http://"), "/")
	proxy := startCountingProxy(t, "http://"+base)
	const objects = 50
	body := "alpha\nbeta\ngamma\n"
	type budgetCase struct {
		name      string
		tool      string
		args      map[string]any
		budget    int
		downloads int // Get Blob of a file itself, -1 when not counted
	}
	cases := func(dir string) []budgetCase {
		p := func(name string) string { return strings.TrimPrefix(dir+"/"+name, "./") }
		// One directory down, the tools settle what the directory is
		// first (a write: the parent of a missing target; a search: the
		// directory searched), one listing, and a write's no-directory
		// check lists the parent too (sent with the target's).
		down := 0
		if dir != "." {
			down = 1
		}
		return []budgetCase{
			// The probe (2), the listing that settles that no directory
			// shadows the blob, and the Get Blob with If-Match on the
			// listed ETag.
			{"read_file", "read_file", map[string]any{"path": p("f.txt")}, 4, 1},
			{"file_info", "file_info", map[string]any{"path": p("f.txt")}, 4, 1},
			// The read's listing and Get Blob, then the Put Blob with
			// If-Match on the ETag read: the tool vouches for the version
			// (backend.WithKnownFile), so neither directory check is sent.
			{"edit_file with expected_hash", "edit_file", map[string]any{"path": p("f.txt"), "old_text": "beta", "new_text": "BETA",
				"expected_hash": hashOf(body)}, 5, 1},
			// The probe, the read's listing ("missing"), OpenWrite's
			// no-directory check, the Put Blob with If-None-Match: *, and
			// the listing after the commit.
			{"write_file of a new blob", "write_file", map[string]any{"path": p("new.txt"), "content": "new\n"}, 6 + 2*down, -1},
			// One flat listing of the whole tree, then a Get Blob per blob
			// with If-Match on the listed ETag.
			{fmt.Sprintf("search_files over %d blobs", objects+1), "search_files", map[string]any{"pattern": "gamma", "path": dir}, objects + 1 + 3 + down, objects + 1},
		}
	}
	for _, dir := range []string{".", "top"} {
		for _, c := range cases(dir) {
			t.Run(dir+"/"+c.name, func(t *testing.T) {
				cont := newContainer(t, srv)
				seedBudget(ctx, t, serviceClient(t, srv, nil).NewContainerClient(cont), dir, body, objects)
				cfg := config(srv, cont, "")
				cfg.Endpoint = proxy.URL + "/" + srv.Account
				proxy.Take()
				f, err := azureadapter.Open(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				s, err := tools.New(f, tools.Options{Tools: tools.AllTools()})
				if err != nil {
					t.Fatal(err)
				}
				args, _ := json.Marshal(c.args)
				out, err := s.Call(ctx, c.tool, args)
				if err != nil {
					t.Fatalf("%s: %v", c.tool, err)
				}
				log := proxy.Take()
				t.Logf("%s: %d requests: %s", c.tool, len(log), strings.Join(log, "; "))
				if len(log) > c.budget {
					t.Errorf("%s sent %d requests, budget %d; output:\n%s", c.tool, len(log), c.budget, out)
				}
				if c.downloads >= 0 {
					if n := blobGets(log, cont); n != c.downloads {
						t.Errorf("%s downloaded %d times, want %d", c.tool, n, c.downloads)
					}
				}
			})
		}
	}
}

// seedBudget stores dir/f.txt holding body and objects small files below
// dir/many/, one in ten of them matching "gamma".
func seedBudget(ctx context.Context, t *testing.T, c *container.Client, dir, body string, objects int) {
	t.Helper()
	p := func(name string) string { return strings.TrimPrefix(dir+"/"+name, "./") }
	putBlob(ctx, t, c, p("f.txt"), body)
	for i := range objects {
		content := fmt.Sprintf("file %d\n", i)
		if i%10 == 0 {
			content += "gamma\n"
		}
		putBlob(ctx, t, c, p(fmt.Sprintf("many/f%03d.txt", i)), content)
	}
}

// putBlob stores content as the blob name.
func putBlob(ctx context.Context, t testing.TB, c *container.Client, name, content string) {
	t.Helper()
	if _, err := c.NewBlockBlobClient(name).UploadBuffer(ctx, []byte(content), nil); err != nil {
		t.Fatalf("put %q: %v", name, err)
	}
}

// blobGets counts the Get Blob requests of blobs (not listings, not the
// container or the account).
func blobGets(log []string, cont string) int {
	n := 0
	for _, r := range log {
		if strings.HasPrefix(r, "GET /") && strings.Contains(r, "/"+cont+"/") && !strings.Contains(r, "(list") {
			n++
		}
	}
	return n
}

// hashOf is the content hash the tools show for s.
func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

var _ backend.Backend = (*azureadapter.FS)(nil)
