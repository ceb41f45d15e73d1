package gcsadapter_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/gcsadapter"
)

// gcssrv is the emulator the tests of this package share; TestMain kills
// it.
var gcssrv containers.SharedGCS

func TestMain(m *testing.M) {
	code := m.Run()
	if err := gcssrv.Terminate(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "terminating the Cloud Storage emulator:", err)
	}
	os.Exit(code)
}

// config returns the configuration of bucket and prefix on srv, with the
// smallest chunks, so that tests reach the resumable path with modest
// files.
func config(srv *containers.GCSServer, bucket, prefix string) gcsadapter.Config {
	return gcsadapter.Config{
		Bucket:   bucket,
		Prefix:   prefix,
		Endpoint: srv.Endpoint,
		Options:  gcsadapter.Options{ChunkSize: gcsadapter.MinChunkSize},
	}
}

// open opens a backend with cfg, failing t on error.
func open(t testing.TB, cfg gcsadapter.Config) *gcsadapter.FS {
	t.Helper()
	f, err := gcsadapter.Open(t.Context(), cfg)
	if err != nil {
		t.Fatalf("gcsadapter.Open(%s/%s): %v", cfg.Bucket, cfg.Prefix, err)
	}
	return f
}

// rawClient returns a client of srv for arranging and inspecting storage
// behind a backend's back.
func rawClient(t testing.TB, srv *containers.GCSServer) *storage.Client {
	t.Helper()
	c, err := gcsadapter.NewClient(t.Context(), gcsadapter.Config{Endpoint: srv.Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// harness is a conformance harness over one bucket of the emulator: each
// backend gets a fresh prefix, which also exercises tenant isolation. It
// is a RawLister (every object below the prefix, markers excepted; an
// unfinalized resumable upload is never an object), a Seeder and a
// Reopener.
type harness struct {
	srv       *containers.GCSServer
	bucket    string
	client    *storage.Client
	configure func(*gcsadapter.Config)
	n         atomic.Int64
}

func newHarness(t testing.TB, srv *containers.GCSServer) *harness {
	t.Helper()
	return &harness{srv: srv, bucket: srv.NewBucket(t.Context(), t), client: rawClient(t, srv)}
}

func (h *harness) MakeBackend(ctx context.Context, t *testing.T) backend.Backend {
	t.Helper()
	return emulated{h.openPrefix(t, fmt.Sprintf("t%05d", h.n.Add(1)), true)}
}

// emulated is a backend over the emulator, whose capabilities are those
// of the backend less what fake-gcs-server does not honour: it ignores
// generation preconditions on deletions and rewrites (and downloads),
// evaluating only those of uploads, so no deletion is atomic with its
// check (AtomicRemove) and a copy or rename under a target precondition
// is not one compare-and-swap (AtomicPreconditions). Cloud Storage
// honours them (https://cloud.google.com/storage/docs/request-preconditions),
// and the backend claims them there; TestPreconditionsOnTheWire checks
// that every such request carries its condition, and TestCompareAndSwap
// races the writes, whose conditions the emulator does honour.
type emulated struct{ *gcsadapter.FS }

func (e emulated) Capabilities() backend.Capabilities {
	c := e.FS.Capabilities()
	c.AtomicRemove, c.AtomicPreconditions = false, false
	return c
}

// unwrap returns the adapter of a backend the harness made.
func unwrap(b backend.Backend) *gcsadapter.FS {
	if e, ok := b.(emulated); ok {
		return e.FS
	}
	return b.(*gcsadapter.FS)
}

// openPrefix opens a backend over prefix, configured by h.configure when
// configured is set.
func (h *harness) openPrefix(t *testing.T, prefix string, configured bool) *gcsadapter.FS {
	t.Helper()
	cfg := config(h.srv, h.bucket, prefix)
	cfg.Client = h.client
	if configured && h.configure != nil {
		h.configure(&cfg)
	}
	return open(t, cfg)
}

func prefixOf(t *testing.T, b backend.Backend) string {
	t.Helper()
	p, err := unwrap(b).Key(".")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (h *harness) Seed(ctx context.Context, t *testing.T, b backend.Backend, name string, data []byte) {
	t.Helper()
	if err := backend.WriteFile(ctx, h.openPrefix(t, prefixOf(t, b), false), name, data, backend.WriteOptions{}); err != nil {
		t.Fatalf("Seed(%q): %v", name, err)
	}
}

func (h *harness) SeedDir(ctx context.Context, t *testing.T, b backend.Backend, dir string) {
	t.Helper()
	if err := h.openPrefix(t, prefixOf(t, b), false).MkdirAll(ctx, dir); err != nil {
		t.Fatalf("SeedDir(%q): %v", dir, err)
	}
}

func (h *harness) Reopen(ctx context.Context, t *testing.T, b backend.Backend) backend.Backend {
	t.Helper()
	return emulated{h.openPrefix(t, prefixOf(t, b), true)}
}

func (h *harness) ListRaw(ctx context.Context, t *testing.T, b backend.Backend) []string {
	t.Helper()
	raw, err := rawNames(ctx, h.client, h.bucket, prefixOf(t, b))
	if err != nil {
		t.Fatalf("ListRaw: %v", err)
	}
	return raw
}

// rawNames lists every object below prefix in bucket, directory markers
// (names ending in "/") excepted, with prefix removed.
func rawNames(ctx context.Context, c *storage.Client, bucket, prefix string) ([]string, error) {
	var out []string
	it := c.Bucket(bucket).Objects(ctx, &storage.Query{Prefix: prefix})
	for {
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if !strings.HasSuffix(a.Name, "/") {
			out = append(out, strings.TrimPrefix(a.Name, prefix))
		}
	}
}

// contextWithCancel is context.WithCancel.
func contextWithCancel(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithCancel(ctx)
}
