package overlay_test

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/overlay"
	"github.com/fencefs/fencefs/s3adapter"
)

// requestCounter counts the HTTP requests an S3 client sends.
type requestCounter struct {
	inner s3.HTTPClient
	n     atomic.Int64
}

func (c *requestCounter) Do(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.inner.Do(r)
}

// countedS3 opens a backend over prefix of bucket whose requests c counts.
func countedS3(t *testing.T, srv *containers.S3Server, bucket, prefix string, c *requestCounter) *s3adapter.FS {
	cfg := srv.Config(bucket, prefix)
	cfg.ClientOptions = append(cfg.ClientOptions, func(o *s3.Options) {
		c.inner = o.HTTPClient
		if c.inner == nil {
			c.inner = awshttp.NewBuildableClient()
		}
		o.HTTPClient = c
	})
	return srv.Open(t, cfg)
}

// TestS3RequestCounts counts the S3 requests of overlay operations over
// S3 layers, the base holding 2,000 files: what an operation costs beside
// the same operation on the base alone. The counts are the storage's
// answer to a fixed sequence, so they are exact; each bound is what
// versitygw v1.8.0 takes, so a change that adds a request fails here.
func TestS3RequestCounts(t *testing.T) {
	srv := s3srv.Get(t)
	ctx := t.Context()
	bucket := srv.NewBucket(ctx, t)
	var c requestCounter
	base := countedS3(t, srv, bucket, "base", &c)
	upper := countedS3(t, srv, bucket, "upper", &c)
	writer := srv.Open(t, srv.Config(bucket, "base"))
	// The 2,000 files are written by 8 writers at once: in sequence they
	// took most of the test's time.
	names := make(chan string)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			var err error
			for name := range names {
				if err == nil {
					err = backend.WriteFile(ctx, writer, name, []byte("line\n"), backend.WriteOptions{})
				}
			}
			errs <- err
		}()
	}
	for d := range 20 {
		for i := range 100 {
			names <- fmt.Sprintf("d%02d/f%03d", d, i)
		}
	}
	close(names)
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	o, err := overlay.New(backend.ReadOnly(base), upper, overlay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	count := func(what string, fn func() error) int64 {
		t.Helper()
		c.n.Store(0)
		if err := fn(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		n := c.n.Load()
		t.Logf("%-40s %d requests", what, n)
		return n
	}
	walk := func(b backend.Backend) func() error {
		return func() error {
			return backend.Walk(ctx, b, ".", func(string, backend.DirEntry) error { return nil })
		}
	}
	read := func(b backend.Backend, name string) func() error {
		return func() error { _, err := backend.ReadFile(ctx, b, name); return err }
	}
	write := func(name string) func() error {
		return func() error { return backend.WriteFile(ctx, o, name, []byte("new\n"), backend.WriteOptions{}) }
	}
	for _, tc := range []struct {
		what string
		fn   func() error
		max  int64
	}{
		{"base alone: read", read(base, "d00/f000"), 2},
		{"base alone: walk 2,000 files", walk(base), 2},
		{"overlay: read from the base (fresh)", read(o, "d00/f000"), 4},
		{"overlay: first write over a base file", write("d00/f000"), 11},
		{"overlay: second write", write("d00/f000"), 6},
		{"overlay: read from the upper layer", read(o, "d00/f000"), 2},
		{"overlay: remove a base file", func() error { return backend.Remove(ctx, o, "d00/f001", backend.RemoveOptions{}) }, 9},
		{"overlay: read from the base (whiteouts)", read(o, "d00/f002"), 5},
		{"overlay: walk 2,000 files", walk(o), 5},
	} {
		if n := count(tc.what, tc.fn); n > tc.max {
			t.Errorf("%s sent %d requests, want at most %d", tc.what, n, tc.max)
		}
	}
}
