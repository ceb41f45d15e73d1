package azureadapter_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"

	"github.com/fencefs/fencefs/azureadapter"
	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance/containers"
)

// azurite is the emulator the tests of this package share; TestMain
// terminates it.
var azurite containers.SharedAzurite

func TestMain(m *testing.M) {
	code := m.Run()
	if err := azurite.Terminate(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "terminating Azurite:", err)
	}
	os.Exit(code)
}

// testBlockSize is the block size of the test backends: small, so that
// modest files take the staged-block path.
const testBlockSize = 256 << 10

// largeFile spans three blocks and a part of a fourth.
const largeFile = 3*testBlockSize + 12_345

// containerSeq numbers the containers the tests create.
var containerSeq atomic.Int64

// config returns the adapter's configuration of container and prefix on
// srv, with shared-key credentials and small blocks.
func config(srv *containers.AzuriteServer, cont, prefix string) azureadapter.Config {
	return azureadapter.Config{
		Container:  cont,
		Prefix:     prefix,
		Account:    srv.Account,
		AccountKey: srv.Key,
		Endpoint:   srv.Endpoint,
		ClientOptions: &service.ClientOptions{ClientOptions: policy.ClientOptions{
			// A test's server answers at once or is meant not to.
			Retry: policy.RetryOptions{MaxRetries: 2, RetryDelay: 50 * time.Millisecond, MaxRetryDelay: 200 * time.Millisecond},
		}},
		Options: azureadapter.Options{BlockSize: testBlockSize},
	}
}

// serviceClient returns an account client for arranging and inspecting
// storage behind a backend's back, over transport when it is not nil.
func serviceClient(t testing.TB, srv *containers.AzuriteServer, transport policy.Transporter) *service.Client {
	t.Helper()
	cfg := config(srv, "", "")
	if transport != nil {
		cfg.ClientOptions.Transport = transport
	}
	c, err := azureadapter.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newContainer creates a container with a fresh name and returns the
// name.
func newContainer(t testing.TB, srv *containers.AzuriteServer) string {
	t.Helper()
	name := fmt.Sprintf("fencefs-%d-%d", time.Now().UnixNano()%1e9, containerSeq.Add(1))
	if _, err := serviceClient(t, srv, nil).CreateContainer(t.Context(), name, nil); err != nil {
		t.Fatalf("creating container %s: %v", name, err)
	}
	return name
}

// open opens a backend with cfg, failing t on error.
func open(t testing.TB, cfg azureadapter.Config) *azureadapter.FS {
	t.Helper()
	f, err := azureadapter.Open(t.Context(), cfg)
	if err != nil {
		t.Fatalf("azureadapter.Open(%s/%s): %v", cfg.Container, cfg.Prefix, err)
	}
	return f
}

// harness is a conformance.Harness over one container of Azurite: each
// backend gets a fresh prefix, which also exercises tenant isolation. It
// implements conformance.RawLister (every committed blob, markers
// excepted), conformance.Seeder (through a writable backend over the same
// prefix) and conformance.Reopener.
type harness struct {
	srv       *containers.AzuriteServer
	container string
	// configure, when set, adjusts each backend's configuration.
	configure func(*azureadapter.Config)
	n         atomic.Int64
}

func newHarness(t testing.TB, srv *containers.AzuriteServer) *harness {
	return &harness{srv: srv, container: newContainer(t, srv)}
}

func (h *harness) MakeBackend(ctx context.Context, t *testing.T) backend.Backend {
	t.Helper()
	cfg := config(h.srv, h.container, fmt.Sprintf("t%05d", h.n.Add(1)))
	if h.configure != nil {
		h.configure(&cfg)
	}
	return open(t, cfg)
}

func (h *harness) prefix(t *testing.T, b backend.Backend) string {
	t.Helper()
	p, err := b.(*azureadapter.FS).Key(".")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (h *harness) writable(t *testing.T, b backend.Backend) *azureadapter.FS {
	t.Helper()
	return open(t, config(h.srv, h.container, h.prefix(t, b)))
}

func (h *harness) Seed(ctx context.Context, t *testing.T, b backend.Backend, name string, data []byte) {
	t.Helper()
	if err := backend.WriteFile(ctx, h.writable(t, b), name, data, backend.WriteOptions{}); err != nil {
		t.Fatalf("Seed(%q): %v", name, err)
	}
}

func (h *harness) SeedDir(ctx context.Context, t *testing.T, b backend.Backend, dir string) {
	t.Helper()
	if err := h.writable(t, b).MkdirAll(ctx, dir); err != nil {
		t.Fatalf("SeedDir(%q): %v", dir, err)
	}
}

func (h *harness) Reopen(ctx context.Context, t *testing.T, b backend.Backend) backend.Backend {
	t.Helper()
	cfg := config(h.srv, h.container, h.prefix(t, b))
	if h.configure != nil {
		h.configure(&cfg)
	}
	return open(t, cfg)
}

// ListRaw returns every committed blob below b's prefix except directory
// markers. Uncommitted blocks are not blobs: no listing or read shows
// them, and the service discards them (TestAbandonedBlocks checks that an
// abandoned write leaves none that a reader could see).
func (h *harness) ListRaw(ctx context.Context, t *testing.T, b backend.Backend) []string {
	t.Helper()
	prefix := h.prefix(t, b)
	raw, err := rawBlobs(ctx, serviceClient(t, h.srv, nil).NewContainerClient(h.container), prefix, false)
	if err != nil {
		t.Fatalf("ListRaw: %v", err)
	}
	return raw
}

// rawBlobs lists the blobs below prefix, markers excepted, with prefix
// removed; uncommitted adds the blobs that have only uncommitted blocks.
func rawBlobs(ctx context.Context, c *container.Client, prefix string, uncommitted bool) ([]string, error) {
	var out []string
	p := c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{
		Prefix:  to.Ptr(prefix),
		Include: container.ListBlobsInclude{UncommittedBlobs: uncommitted},
	})
	for p.More() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, b := range page.Segment.BlobItems {
			name := *b.Name
			if strings.HasSuffix(name, "/") {
				continue
			}
			out = append(out, strings.TrimPrefix(name, prefix))
		}
	}
	return out, nil
}

// countingTransport counts the HTTP requests a client sends, from
// outside the SDK (below its retry and logging policies).
type countingTransport struct {
	inner *http.Client
	all   atomic.Int64
	lists atomic.Int64
	gets  atomic.Int64
}

func newCountingTransport() *countingTransport {
	return &countingTransport{inner: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}}
}

func (c *countingTransport) Do(r *http.Request) (*http.Response, error) {
	c.all.Add(1)
	if r.Method == http.MethodGet && r.URL.Query().Get("comp") == "list" {
		c.lists.Add(1)
	}
	if r.Method == http.MethodGet && r.URL.Query().Get("comp") == "" {
		c.gets.Add(1)
	}
	return c.inner.Do(r)
}

func (c *countingTransport) reset() {
	c.all.Store(0)
	c.lists.Store(0)
	c.gets.Store(0)
}

// countedBackend opens a backend over container and prefix whose
// requests are counted; configure, if any, changes its configuration.
func countedBackend(t *testing.T, srv *containers.AzuriteServer, cont, prefix string, configure ...func(*azureadapter.Config)) (*azureadapter.FS, *countingTransport) {
	t.Helper()
	c := newCountingTransport()
	cfg := config(srv, cont, prefix)
	cfg.ClientOptions.Transport = c
	for _, f := range configure {
		f(&cfg)
	}
	f := open(t, cfg)
	c.reset()
	return f, c
}

// listNames lists dir, directories with a trailing slash.
func listNames(t testing.TB, f *azureadapter.FS, dir string) []string {
	t.Helper()
	entries, err := f.List(t.Context(), dir)
	if err != nil {
		t.Fatalf("List(%q): %v", dir, err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name+"/")
		} else {
			names = append(names, e.Name)
		}
	}
	slices.Sort(names)
	return names
}

// walkNames walks dir, directories with a trailing slash, in walk order.
func walkNames(t testing.TB, f *azureadapter.FS, dir string) []string {
	t.Helper()
	var names []string
	err := f.Walk(t.Context(), dir, func(name string, e backend.DirEntry) error {
		if e.IsDir() {
			name += "/"
		}
		names = append(names, name)
		return nil
	})
	if err != nil {
		t.Fatalf("Walk(%q): %v", dir, err)
	}
	return names
}

// startProxy serves h on 127.0.0.1 until the test ends and returns its
// base URL.
func startProxy(t testing.TB, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}
