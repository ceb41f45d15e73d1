// Package s3bench holds the benchmarks of fencefs's suite that need an S3
// server (in a container): request counts and memory of S3 walks and
// writes. They are apart from package bench so that its child processes,
// whose memory is measured, do not carry the container and S3 libraries.
package s3bench

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/bench"
	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/s3adapter"
	"github.com/fencefs/fencefs/tools"
)

// Environment of the child process whose peak memory is measured.
const (
	envChild    = "FENCEFS_BENCH_S3_CHILD" // the S3 endpoint the child writes to
	childPrefix = "bench-write"
)

func TestMain(m *testing.M) {
	if endpoint := os.Getenv(envChild); endpoint != "" {
		err := childS3Write(endpoint)
		if err == nil {
			err = bench.ReportPeakRSS(os.Stdout)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	containers.SetTestcontainersDefaults()
	os.Exit(m.Run())
}

// rounds returns the number of rounds of a benchmark, multiplied by
// FENCEFS_BENCH_ROUNDS as in package bench.
func rounds(def int) int {
	if k, err := strconv.Atoi(os.Getenv("FENCEFS_BENCH_ROUNDS")); err == nil && k > 0 {
		return def * k
	}
	return def
}

// s3Keys is the number of objects of the S3 find benchmark.
const s3Keys = 10_000

// requestCounter counts the HTTP requests an S3 client sends.
type requestCounter struct {
	inner s3.HTTPClient
	all   atomic.Int64
	lists atomic.Int64
}

func (c *requestCounter) Do(r *http.Request) (*http.Response, error) {
	c.all.Add(1)
	if r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "2" {
		c.lists.Add(1)
	}
	return c.inner.Do(r)
}

// s3Tree returns the keys of the S3 find benchmark: 10 top directories,
// each with 10 subdirectories of 100 objects, a fifth of them Go files.
func s3Tree() (keys []string, goFiles int) {
	exts := []string{".go", ".txt", ".md", ".py", ".json"}
	for i := range s3Keys {
		ext := exts[i%len(exts)]
		if ext == ".go" {
			goFiles++
		}
		keys = append(keys, fmt.Sprintf("repo/area%d/unit%d/item%05d%s", i/1000, i/100%10, i, ext))
	}
	return keys, goFiles
}

// putKeys stores each key (its own name as content) with 16 requests in
// flight.
func putKeys(ctx context.Context, b *testing.B, client *s3.Client, bucket string, keys []string) {
	b.Helper()
	work := make(chan string)
	var wg sync.WaitGroup
	var first atomic.Value
	for range 16 {
		wg.Go(func() {
			for k := range work {
				_, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: aws.String(k), Body: strings.NewReader(k)})
				if err != nil {
					first.CompareAndSwap(nil, fmt.Errorf("put %q: %w", k, err))
				}
			}
		})
	}
	for _, k := range keys {
		work <- k
	}
	close(work)
	wg.Wait()
	if err, _ := first.Load().(error); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkS3FindFiles runs find_files over 10,000 S3 keys and reports the
// requests it sent: one list request per 1000 keys is the goal, however
// many directories the keys make. It needs Docker and the S3 image, and
// skips loudly without them.
func BenchmarkS3FindFiles(b *testing.B) {
	ctx := b.Context()
	srv := containers.StartS3(ctx, b)
	bucket := srv.NewBucket(ctx, b)
	keys, goFiles := s3Tree()
	putKeys(ctx, b, srv.Client(), bucket, keys)

	c := &requestCounter{}
	cfg := srv.Config(bucket, "repo")
	cfg.ClientOptions = append(cfg.ClientOptions, func(o *s3.Options) {
		c.inner = o.HTTPClient
		if c.inner == nil {
			c.inner = awshttp.NewBuildableClient()
		}
		o.HTTPClient = c
	})
	f := srv.Open(b, cfg)
	s, err := tools.New(f, tools.Options{MaxFindResults: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	args, _ := json.Marshal(map[string]any{"pattern": "**/*.go"})
	find := func() int {
		out, err := s.Call(ctx, "find_files", args)
		if err != nil {
			b.Fatal(err)
		}
		return bench.CountLines(out)
	}
	var lists, all []float64
	var took []float64
	for range rounds(3) {
		c.all.Store(0)
		c.lists.Store(0)
		t0 := time.Now()
		if n := find(); n != goFiles {
			b.Fatalf("find_files found %d Go files, want %d", n, goFiles)
		}
		took = append(took, float64(time.Since(t0).Nanoseconds()))
		lists, all = append(lists, float64(c.lists.Load())), append(all, float64(c.all.Load()))
	}
	b.ReportMetric(bench.Median(lists), bench.MetricLists)
	b.ReportMetric(bench.Median(all), bench.MetricRequests)
	b.ReportMetric(bench.Median(took), bench.MetricOurs)
}

// BenchmarkS3WriteRSS streams 1 GiB into S3 through the backend in a
// child process and reports the child's peak resident set. It needs
// Docker and the S3 image, and skips loudly without them.
func BenchmarkS3WriteRSS(b *testing.B) {
	srv := containers.StartS3(b.Context(), b)
	cmd := exec.CommandContext(b.Context(), os.Args[0])
	cmd.Env = append(os.Environ(), envChild+"="+srv.Endpoint)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("child: %v\n%s", err, stderr.String())
	}
	rss, ok := bench.ParsePeakRSS(string(out))
	if !ok {
		b.Fatalf("the child reported no peak RSS:\n%s", out)
	}
	b.ReportMetric(rss, bench.MetricRSS)
}

// childS3Write writes bench.BigSize generated bytes (never held in memory) to
// the S3 server at endpoint with the backend's default part size.
func childS3Write(endpoint string) error {
	ctx := context.Background()
	srv := &containers.S3Server{Endpoint: endpoint, AccessKey: "fencefs", SecretKey: "fencefs-secret", Region: "us-east-1"}
	cfg := srv.Config(containers.DefaultS3Bucket, childPrefix)
	cfg.Options = s3adapter.Options{}
	f, err := s3adapter.Open(ctx, cfg)
	if err != nil {
		return err
	}
	w, err := f.OpenWrite(ctx, "big.bin", backend.WriteOptions{})
	if err != nil {
		return err
	}
	defer w.Close()
	if _, err := io.Copy(w, io.LimitReader(&stream{}, bench.BigSize)); err != nil {
		return err
	}
	return w.Commit()
}

// stream is an endless, cheap, non-repeating byte stream.
type stream struct{ n uint64 }

func (s *stream) Read(p []byte) (int, error) {
	var word [8]byte
	for i := 0; i < len(p); i += 8 {
		s.n++
		binary.LittleEndian.PutUint64(word[:], s.n*0x9E3779B97F4A7C15)
		copy(p[i:], word[:])
	}
	return len(p), nil
}
