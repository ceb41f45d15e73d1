package checkpoint_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/checkpoint"
	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/tools"
)

// benchFile is the file the edit benchmarks edit: 4 KiB of source text.
var benchFile = []byte("package bench\n\n// value: v0\n" + strings.Repeat("// filler line of a source file, 40 bytes\n", 100))

// benchEdits edits f alternately from v0 to v1 and back, b.N times,
// through set, binding each call's context to j when it is not nil.
func benchEdits(b *testing.B, set *tools.Set, j *checkpoint.Journal, path string) {
	b.Helper()
	ctx := context.Background()
	args := [2]json.RawMessage{
		json.RawMessage(`{"path":"` + path + `","old_text":"value: v0","new_text":"value: v1"}`),
		json.RawMessage(`{"path":"` + path + `","old_text":"value: v1","new_text":"value: v0"}`),
	}
	b.ResetTimer()
	for i := range b.N {
		c := ctx
		if j != nil {
			c = j.Bind(ctx)
		}
		if _, err := set.Call(c, "edit_file", args[i%2]); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
}

// BenchmarkEditLocal: edit_file on local disk, plain and journaled (the
// store another directory of the same disk). The journaled edit reads
// the pre-image once more and writes a record, plus the pre-image
// itself the first time that content is seen (the two contents
// alternate here, as an edit and its undo do, so most edits store only
// the record).
//
// "listener" is the plain edit with a change and an event listener that
// do nothing: any listener makes the tools build the diff and re-check
// the path after it, so plain-to-listener is the cost of listening and
// listener-to-journaled the journal's own.
func BenchmarkEditLocal(b *testing.B) {
	for _, name := range []string{"plain", "listener", "journaled"} {
		journaled := name == "journaled"
		b.Run(name, func(b *testing.B) {
			set, j := localEditSetup(b, journaled)
			if name == "listener" {
				benchListened(b, set, "f.go")
				return
			}
			benchEdits(b, set, j, "f.go")
		})
	}
}

// localEditSetup opens a local namespace holding f.go (benchFile) and its
// tool set, and with journaled a journal of it in another directory of
// the same disk, its records in segment files; all are closed when b
// ends.
func localEditSetup(b *testing.B, journaled bool) (*tools.Set, *checkpoint.Journal) {
	b.Helper()
	ns, err := local.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ns.Close() })
	ctx := context.Background()
	if err := backend.WriteFile(ctx, ns, "f.go", benchFile, backend.WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	set, err := tools.New(ns, tools.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if !journaled {
		return set, nil
	}
	store, err := local.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	j, err := checkpoint.Open(ctx, ns, store, checkpoint.Options{Segments: true})
	if err != nil {
		b.Fatal(err)
	}
	return set, j
}

// benchListened is benchEdits under listeners that do nothing.
func benchListened(b *testing.B, set *tools.Set, path string) {
	ctx := tools.WithChangeListener(context.Background(), func(context.Context, *tools.ChangeRequest) error { return nil })
	ctx = tools.WithEventListener(ctx, func(context.Context, tools.Event) {})
	args := [2]json.RawMessage{
		json.RawMessage(`{"path":"` + path + `","old_text":"value: v0","new_text":"value: v1"}`),
		json.RawMessage(`{"path":"` + path + `","old_text":"value: v1","new_text":"value: v0"}`),
	}
	b.ResetTimer()
	for i := range b.N {
		if _, err := set.Call(ctx, "edit_file", args[i%2]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEditLocalPaired: edit_file on local disk, a plain edit and a
// journaled one in turn in every iteration (two files in two
// directories of one disk, the store a third), each timed apart and
// reported as ms/plain and ms/journaled with their ratio as
// overhead-% (the records in segment files, checkpoint.Options.Segments):
// both see the same load on the disk, which on a shared
// machine moves the single runs of BenchmarkEditLocal by a factor of
// two. The medians of the pairs are reported, so a stall of the disk
// in one call does not move them.
//
//	go test ./integration/checkpoint -run XXX -bench EditLocalPaired -benchtime 400x -count 3
func BenchmarkEditLocalPaired(b *testing.B) {
	ctx := context.Background()
	open := func() (*local.FS, *tools.Set) {
		ns, err := local.New(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { ns.Close() })
		if err := backend.WriteFile(ctx, ns, "f.go", benchFile, backend.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
		set, err := tools.New(ns, tools.Options{})
		if err != nil {
			b.Fatal(err)
		}
		return ns, set
	}
	_, plain := open()
	ns, journaled := open()
	store, err := local.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	j, err := checkpoint.Open(ctx, ns, store, checkpoint.Options{Segments: true})
	if err != nil {
		b.Fatal(err)
	}
	args := [2]json.RawMessage{
		json.RawMessage(`{"path":"f.go","old_text":"value: v0","new_text":"value: v1"}`),
		json.RawMessage(`{"path":"f.go","old_text":"value: v1","new_text":"value: v0"}`),
	}
	var tp, tj []time.Duration
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		if _, err := plain.Call(ctx, "edit_file", args[i%2]); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if _, err := journaled.Call(j.Bind(ctx), "edit_file", args[i%2]); err != nil {
			b.Fatal(err)
		}
		tp, tj = append(tp, mid.Sub(start)), append(tj, time.Since(mid))
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2]) / float64(time.Millisecond)
	}
	mp, mj := median(tp), median(tj)
	b.ReportMetric(mp, "ms/plain")
	b.ReportMetric(mj, "ms/journaled")
	b.ReportMetric(100*(mj-mp)/mp, "overhead-%")
}

// BenchmarkEditLocalNewContent: as BenchmarkEditLocal, but every edit
// leaves content never seen before, so every journaled edit stores a new
// pre-image too (the worst case).
func BenchmarkEditLocalNewContent(b *testing.B) {
	for _, journaled := range []bool{false, true} {
		name := "plain"
		if journaled {
			name = "journaled"
		}
		b.Run(name, func(b *testing.B) {
			set, j := localEditSetup(b, journaled)
			ctx := context.Background()
			b.ResetTimer()
			for i := range b.N {
				c := ctx
				if j != nil {
					c = j.Bind(ctx)
				}
				a := json.RawMessage(fmt.Sprintf(`{"path":"f.go","old_text":"value: v%d","new_text":"value: v%d"}`, i, i+1))
				if _, err := set.Call(c, "edit_file", a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// requestCounter counts the HTTP requests of an S3 client by method.
type requestCounter struct {
	mu   sync.Mutex
	n    map[string]int
	base http.RoundTripper
}

func (c *requestCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	m := r.Method
	if m == http.MethodGet && r.URL.Query().Has("list-type") {
		m = "LIST"
	}
	c.n[m]++
	c.mu.Unlock()
	return c.base.RoundTrip(r)
}

func (c *requestCounter) reset() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return n
}

// BenchmarkEditS3: edit_file on S3 (versitygw), plain and journaled (the
// store another prefix of the bucket), reporting the requests per edit
// by method. Every edit here leaves new content, so every journaled edit
// stores its pre-image: the extra requests are one GET (the journal's
// read of the pre-image), one PUT for the pre-image and one PUT for the
// record.
func BenchmarkEditS3(b *testing.B) {
	containers.SetTestcontainersDefaults()
	srv := containers.StartS3(context.Background(), b)
	for _, journaled := range []bool{false, true} {
		name := "plain"
		if journaled {
			name = "journaled"
		}
		b.Run(name, func(b *testing.B) {
			rc := &requestCounter{n: map[string]int{}, base: http.DefaultTransport.(*http.Transport).Clone()}
			open := func(prefix string) backend.Backend {
				cfg := srv.Config(containers.DefaultS3Bucket, prefix)
				cfg.ClientOptions = append(cfg.ClientOptions, func(o *s3.Options) { o.HTTPClient = &http.Client{Transport: rc} })
				return srv.Open(b, cfg)
			}
			id := fmt.Sprintf("bench-%s-%d", name, benchRuns.Add(1))
			ns := open(id + "/ns")
			ctx := context.Background()
			if err := backend.WriteFile(ctx, ns, "f.go", benchFile, backend.WriteOptions{}); err != nil {
				b.Fatal(err)
			}
			set, err := tools.New(ns, tools.Options{})
			if err != nil {
				b.Fatal(err)
			}
			var j *checkpoint.Journal
			if journaled {
				if j, err = checkpoint.Open(ctx, ns, open(id+"/store"), checkpoint.Options{}); err != nil {
					b.Fatal(err)
				}
			}
			rc.reset()
			b.ResetTimer()
			for i := range b.N {
				c := ctx
				if j != nil {
					c = j.Bind(ctx)
				}
				a := json.RawMessage(fmt.Sprintf(`{"path":"f.go","old_text":"value: v%d","new_text":"value: v%d"}`, i, i+1))
				if _, err := set.Call(c, "edit_file", a); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			for m, n := range rc.reset() {
				b.ReportMetric(float64(n)/float64(b.N), m+"/op")
			}
		})
	}
}

// benchRuns numbers benchmark runs, for prefixes of their own.
var benchRuns atomic.Int64

// restoreFiles is how many files the restore benchmarks change and
// restore.
const restoreFiles = 1000

// seedTree writes restoreFiles files of about 1 KiB under dir on disk.
func seedTree(b *testing.B, dir string) {
	b.Helper()
	for i := range restoreFiles {
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%50), fmt.Sprintf("f%04d.txt", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Repeat(fmt.Sprintf("line %d\n", i), 128)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRestore1000: restoring 1,000 files an agent changed (each
// rewritten once, through the tools) to the checkpoint before, against
// the same in a git repository, `git stash` style: the files were
// committed, changed in the work tree, and `git stash` puts the commit
// back. It skips, saying so, without git.
func BenchmarkRestore1000(b *testing.B) {
	b.Run("checkpoint", func(b *testing.B) {
		ctx := context.Background()
		for range b.N {
			b.StopTimer()
			root := b.TempDir()
			seedTree(b, root)
			ns, err := local.New(root)
			if err != nil {
				b.Fatal(err)
			}
			store, err := local.New(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			set, err := tools.New(ns, tools.Options{})
			if err != nil {
				b.Fatal(err)
			}
			j, err := checkpoint.Open(ctx, ns, store, checkpoint.Options{})
			if err != nil {
				b.Fatal(err)
			}
			for i := range restoreFiles {
				a := json.RawMessage(fmt.Sprintf(`{"path":"d%02d/f%04d.txt","content":"changed %d\n"}`, i%50, i, i))
				if _, err := set.Call(j.Bind(ctx), "write_file", a); err != nil {
					b.Fatal(err)
				}
			}
			b.StartTimer()
			res, err := j.Restore(ctx, 0, checkpoint.RestoreOptions{})
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if len(res.Restored) != restoreFiles {
				b.Fatalf("restored %d files, want %d", len(res.Restored), restoreFiles)
			}
			ns.Close()
			store.Close()
		}
	})
	b.Run("git-stash", func(b *testing.B) {
		gitPath, err := exec.LookPath("git")
		if err != nil {
			b.Skip("SKIPPED: git is not installed, so the git-stash comparison cannot run")
		}
		for range b.N {
			b.StopTimer()
			root := b.TempDir()
			git := func(args ...string) {
				cmd := exec.Command(gitPath, args...)
				cmd.Dir = root
				cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@example.com",
					"GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+root)
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("git %v: %v\n%s", args, err, out)
				}
			}
			git("init", "-q")
			seedTree(b, root)
			git("add", "-A")
			git("commit", "-q", "-m", "start")
			for i := range restoreFiles {
				p := filepath.Join(root, fmt.Sprintf("d%02d", i%50), fmt.Sprintf("f%04d.txt", i))
				if err := os.WriteFile(p, []byte(fmt.Sprintf("changed %d\n", i)), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			b.StartTimer()
			git("stash", "-q")
			b.StopTimer()
		}
	})
}
