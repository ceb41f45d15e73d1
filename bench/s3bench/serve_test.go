package s3bench

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/bench/internal/servebench"
	"github.com/fencefs/fencefs/conformance/containers"
)

// editClients is the number of concurrent clients of BenchmarkS3ServeEdit.
const editClients = 16

// buildFencefs builds the fencefs command into dir, or returns the one
// FENCEFS_BENCH_FENCEFS names (another build, to compare).
func buildFencefs(b *testing.B, dir string) string {
	b.Helper()
	if bin := os.Getenv("FENCEFS_BENCH_FENCEFS"); bin != "" {
		return bin
	}
	bin, err := servebench.Build(dir, "github.com/fencefs/fencefs/cmd/fencefs")
	if err != nil {
		b.Fatal(err)
	}
	return bin
}

// startS3Serve starts `fencefs serve --http` with static tokens and the
// tenant mount ws on bucket/tenants/{tenant} of srv, stopped when b ends.
func startS3Serve(b *testing.B, bin, tokenFile string, srv *containers.S3Server, bucket string) *servebench.Process {
	b.Helper()
	mount := fmt.Sprintf("ws=s3://%s/tenants/{tenant}?endpoint=%s&region=%s&path_style=1", bucket, srv.Endpoint, srv.Region)
	p, err := servebench.Start(bin, []string{"serve", "--auth", "tokens", "--token-file", tokenFile, "--tenant-mount", mount, "--http"},
		[]string{"AWS_ACCESS_KEY_ID=" + srv.AccessKey, "AWS_SECRET_ACCESS_KEY=" + srv.SecretKey, "AWS_REGION=" + srv.Region}, nil, time.Minute)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(p.Stop)
	return p
}

// BenchmarkS3ServeEdit measures edit_file through `fencefs serve` over
// stateless HTTP on versitygw: 16 clients of the official SDK, each
// editing its own object (line 40 toggles), in one tenant and spread over
// 16 tenants. It reports edits a second, p50 and p99 latency, and the
// server's CPU per edit; the log line gives the load average. b.N edits
// are shared among the clients (run with -benchtime 1600x or so). It
// needs Docker and the S3 image, and skips loudly without them.
func BenchmarkS3ServeEdit(b *testing.B) {
	ctx := b.Context()
	srv := containers.StartS3(ctx, b)
	bucket := srv.NewBucket(ctx, b)
	client := srv.Client()
	dir := b.TempDir()
	bin := buildFencefs(b, dir)
	content := servebench.EditContent()
	var tf strings.Builder
	tf.WriteString("tokens:\n")
	tokens := map[string]string{}
	for i := range editClients {
		tn := "t" + strconv.Itoa(i)
		// t0 holds an object per client, the other tenants one each.
		objects := 1
		if i == 0 {
			objects = editClients
		}
		for w := range objects {
			k := fmt.Sprintf("tenants/%s/e%d.txt", tn, w)
			if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(k), Body: strings.NewReader(content)}); err != nil {
				b.Fatal(err)
			}
		}
		tok := servebench.NewToken()
		tokens[tn] = tok
		tf.WriteString(servebench.TokenLine(tn, tok))
	}
	tokenFile := filepath.Join(dir, "tokens.yaml")
	if err := os.WriteFile(tokenFile, []byte(tf.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	serve := startS3Serve(b, bin, tokenFile, srv, bucket)

	for _, spread := range []bool{false, true} {
		name := "one tenant"
		if spread {
			name = "16 tenants"
		}
		b.Run(name, func(b *testing.B) {
			// Client w edits t0/e<w>.txt, or t<w>/e0.txt when spread.
			sessions := make([]*mcp.ClientSession, editClients)
			paths := make([]string, editClients)
			for w := range editClients {
				tn, path := "t0", fmt.Sprintf("/ws/e%d.txt", w)
				if spread {
					tn, path = "t"+strconv.Itoa(w), "/ws/e0.txt"
				}
				cs, err := servebench.Connect(ctx, "s3bench", serve.URL(), tokens[tn], http.DefaultTransport)
				if err != nil {
					b.Fatal(err)
				}
				defer cs.Close()
				sessions[w], paths[w] = cs, path
			}
			edit := func(w int, n int) error {
				from, to := "line 40 x", "line 40 y"
				if n%2 == 1 {
					from, to = to, from
				}
				res, err := sessions[w].CallTool(ctx, &mcp.CallToolParams{Name: "edit_file", Arguments: map[string]any{"path": paths[w], "old_text": from, "new_text": to}})
				if err == nil && res.IsError {
					err = fmt.Errorf("%+v", res.Content[0])
				}
				return err
			}
			// Each object is in its first state again after an even number
			// of edits: every client edits it twice before the clock starts.
			for w := range editClients {
				for n := range 2 {
					if err := edit(w, n); err != nil {
						b.Fatalf("client %d: %v", w, err)
					}
				}
			}
			per := (b.N + editClients - 1) / editClients
			per += per % 2
			lat := make([][]time.Duration, editClients)
			errs := make([]error, editClients)
			cpu0 := serve.CPU()
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for w := range editClients {
				wg.Go(func() {
					for n := range per {
						t0 := time.Now()
						if err := edit(w, n); err != nil {
							errs[w] = err
							return
						}
						lat[w] = append(lat[w], time.Since(t0))
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			cpu1 := serve.CPU()
			for w, err := range errs {
				if err != nil {
					b.Fatalf("client %d: %v", w, err)
				}
			}
			all := slices.Concat(lat...)
			slices.Sort(all)
			edits := len(all)
			b.ReportMetric(float64(edits)/elapsed.Seconds(), "edits/s")
			b.ReportMetric(float64(all[edits/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(all[edits*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(edits), "server-cpu-µs/edit")
			b.Logf("%d edits by %d clients in %v; load average %s", edits, editClients, elapsed.Round(time.Millisecond), servebench.LoadAvg())
		})
	}
}

// BenchmarkS3ReplicasCAS runs compare-and-swap rounds across three
// `fencefs serve` replicas over one versitygw bucket: in each round 20
// writers, spread over the replicas, write one object with the hash they
// all read, and exactly one of them must win, its content then read back
// through another replica. b.N is the number of rounds (run with
// -benchtime 30x); it reports rounds a second. It needs Docker and the S3
// image, and skips loudly without them.
func BenchmarkS3ReplicasCAS(b *testing.B) {
	const writers = 20
	ctx := b.Context()
	srv := containers.StartS3(ctx, b)
	bucket := srv.NewBucket(ctx, b)
	dir := b.TempDir()
	bin := buildFencefs(b, dir)
	tok := servebench.NewToken()
	tokenFile := filepath.Join(dir, "tokens.yaml")
	if err := os.WriteFile(tokenFile, []byte("tokens:\n"+servebench.TokenLine("t0", tok)), 0o600); err != nil {
		b.Fatal(err)
	}
	var urls []string
	for range 3 {
		urls = append(urls, startS3Serve(b, bin, tokenFile, srv, bucket).URL())
	}
	var sessions []*mcp.ClientSession
	for w := range writers {
		cs, err := servebench.Connect(ctx, "s3bench", urls[w%3], tok, &http.Transport{})
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		sessions = append(sessions, cs)
	}
	call := func(cs *mcp.ClientSession, tool string, args map[string]any) (string, bool, error) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			return "", false, err
		}
		text, _ := res.Content[0].(*mcp.TextContent)
		if text == nil {
			return "", false, fmt.Errorf("%s answered %T", tool, res.Content[0])
		}
		return text.Text, res.IsError, nil
	}
	hashLine := regexp.MustCompile(`hash:([0-9a-f]+)`)
	if _, isError, err := call(sessions[0], "write_file", map[string]any{"path": "/ws/cas.txt", "content": "round 0\n"}); err != nil || isError {
		b.Fatalf("write: %v %v", err, isError)
	}
	b.ResetTimer()
	start := time.Now()
	for r := 1; r <= b.N; r++ {
		text, isError, err := call(sessions[r%3], "read_file", map[string]any{"path": "/ws/cas.txt"})
		m := hashLine.FindStringSubmatch(text)
		if err != nil || isError || m == nil {
			b.Fatalf("round %d: read %q, %v", r, text, err)
		}
		hash := m[1]
		var mu sync.Mutex
		var winners []string
		var wg sync.WaitGroup
		for w, cs := range sessions {
			wg.Go(func() {
				content := fmt.Sprintf("round %d writer %d\n", r, w)
				_, isError, err := call(cs, "write_file", map[string]any{"path": "/ws/cas.txt", "content": content, "expected_hash": hash})
				if err == nil && !isError {
					mu.Lock()
					winners = append(winners, content)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(winners) != 1 {
			b.Fatalf("round %d: %d winners, want 1", r, len(winners))
		}
		if text, _, err := call(sessions[(r+1)%3], "read_file", map[string]any{"path": "/ws/cas.txt"}); err != nil || !strings.Contains(text, strings.TrimSpace(winners[0])) {
			b.Fatalf("round %d: the object reads %q through another replica, the winner wrote %q (%v)", r, text, winners[0], err)
		}
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "rounds/s")
	b.Logf("%d rounds of %d writers over 3 replicas, one winner each, in %v; load average %s", b.N, writers, elapsed.Round(time.Millisecond), servebench.LoadAvg())
}
