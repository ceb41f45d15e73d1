package gcsadapter_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"cloud.google.com/go/storage"

	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/gcsadapter"
	"github.com/fencefs/fencefs/tools"
)

// startCountingProxy serves a containers.RequestLog in front of target,
// naming each request by describeRequest, until the test ends.
func startCountingProxy(t *testing.T, target string) *containers.RequestLog {
	return containers.StartRequestLog(t, target, containers.RequestLogOptions{Describe: describeRequest})
}

// describeRequest names a JSON API request by its method, path and the
// query keys that choose the operation and its conditions.
func describeRequest(r *http.Request) string {
	op := r.Method + " " + r.URL.Path
	q := r.URL.Query()
	var notes []string
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/o") {
		notes = append(notes, "list "+q.Get("prefix"))
		if d := q.Get("delimiter"); d != "" {
			notes[0] += " by " + d
		}
	}
	for _, k := range []string{"alt", "uploadType", "ifGenerationMatch", "ifSourceGenerationMatch"} {
		if v := q.Get(k); v != "" {
			notes = append(notes, k+"="+v)
		}
	}
	if len(notes) > 0 {
		op += " (" + strings.Join(notes, ", ") + ")"
	}
	return op
}

// downloads counts the downloads of objects (alt=media) in log.
func downloads(log []string) int {
	n := 0
	for _, r := range log {
		if strings.Contains(r, "alt=media") {
			n++
		}
	}
	return n
}

// TestRequestBudgets runs each tool once, as `fencefs call` does (the
// backend opened afresh, its start-up probe included), through a counting
// proxy in front of the emulator, at the bucket's top level and one
// directory down, and holds it to its budget of requests: a read is a
// listing and one download (the download alone for a file a walk has just
// listed), a compare-and-swap edit downloads once, and a search sends no
// listing per object. A request over any budget fails it.
func TestRequestBudgets(t *testing.T) {
	srv := gcssrv.Get(t)
	ctx := t.Context()
	proxy := startCountingProxy(t, srv.Endpoint)
	client := rawClient(t, srv)
	const objects = 50
	body := "alpha\nbeta\ngamma\n"
	type budget struct {
		tool      string
		args      func(dir string) map[string]any
		top, down int // the budgets at the top level and one directory down
		downloads int // downloads of objects, -1 when not counted
	}
	at := func(dir, name string) string {
		if dir == "" {
			return name
		}
		return dir + "/" + name
	}
	cases := []budget{
		// The probe, the listing of the names that start with the file's
		// (the object, and whether a name below it makes it a
		// directory), the download conditional on the listed generation.
		{"read_file", func(d string) map[string]any { return map[string]any{"path": at(d, "f.txt")} }, 3, 3, 1},
		{"file_info", func(d string) map[string]any { return map[string]any{"path": at(d, "f.txt")} }, 3, 3, 1},
		// The read's listing and download, then the upload conditional
		// on the generation read: the tool tells the backend it has just
		// seen that version (backend.WithKnownFile), so the write skips
		// its directory checks.
		{"edit_file with expected_hash", func(d string) map[string]any {
			return map[string]any{"path": at(d, "f.txt"), "old_text": "beta", "new_text": "BETA", "expected_hash": hashOf(body)}
		}, 4, 4, 1},
		// The tool's listing answers "missing" without a download; then
		// OpenWrite's listing below the parent (none at the top level),
		// Commit's listing below the name (no directory may be there) and
		// the upload with ifGenerationMatch=0. One directory down, the
		// tool first looks at the parent (a listing), as on every backend.
		{"write_file of a new object", func(d string) map[string]any { return map[string]any{"path": at(d, "new.txt"), "content": "new\n"} }, 4, 6, -1},
		// One recursive listing, then a download per object conditional
		// on the generation listed, the walk having settled that no
		// directory shadows it. One directory down, the tool first looks
		// at the directory searched (a listing).
		{fmt.Sprintf("search_files over %d objects", objects+1), func(d string) map[string]any {
			m := map[string]any{"pattern": "gamma"}
			if d != "" {
				m["path"] = d
			}
			return m
		}, objects + 1 + 2, objects + 1 + 3, objects + 1},
	}
	for _, level := range []struct{ name, dir string }{{"Top", ""}, {"OneDown", "sub"}} {
		for _, c := range cases {
			t.Run(level.name+"/"+c.tool, func(t *testing.T) {
				bucket := srv.NewBucket(ctx, t)
				seed(ctx, t, client, bucket, level.dir, body, objects)
				cfg := gcsadapter.Config{Bucket: bucket, Endpoint: proxy.URL}
				proxy.Take()
				f, err := gcsadapter.Open(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				s, err := tools.New(f, tools.Options{Tools: tools.AllTools()})
				if err != nil {
					t.Fatal(err)
				}
				name := strings.Fields(c.tool)[0]
				args, _ := json.Marshal(c.args(level.dir))
				out, err := s.Call(ctx, name, args)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				log := proxy.Take()
				want := c.top
				if level.dir != "" {
					want = c.down
				}
				shown := log[:min(len(log), 6)]
				t.Logf("%s: %d requests: %s", name, len(log), strings.Join(shown, "; "))
				if len(log) > want {
					t.Errorf("%s sent %d requests, budget %d; output:\n%s", name, len(log), want, out)
				}
				if c.downloads >= 0 {
					if n := downloads(log); n != c.downloads {
						t.Errorf("%s downloaded %d times, want %d", name, n, c.downloads)
					}
				}
			})
		}
	}
}

// seed stores dir/f.txt holding body and objects small files below
// dir/many/, one in ten of them matching "gamma".
func seed(ctx context.Context, t *testing.T, client *storage.Client, bucket, dir, body string, objects int) {
	t.Helper()
	p := ""
	if dir != "" {
		p = dir + "/"
	}
	put(ctx, t, client, bucket, p+"f.txt", body)
	for i := range objects {
		content := fmt.Sprintf("file %d\n", i)
		if i%10 == 0 {
			content += "gamma\n"
		}
		put(ctx, t, client, bucket, fmt.Sprintf("%smany/f%03d.txt", p, i), content)
	}
}

// put stores content as the object name.
func put(ctx context.Context, t testing.TB, client *storage.Client, bucket, name, content string) {
	t.Helper()
	w := client.Bucket(bucket).Object(name).NewWriter(ctx)
	w.ChunkSize = 0 // one request, without the 16 MiB buffer
	if _, err := w.Write([]byte(content)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("put %q: %v", name, err)
	}
}

// hashOf is the content hash the tools show for s.
func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
