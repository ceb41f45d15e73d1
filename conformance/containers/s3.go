package containers

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/s3adapter"
)

// The S3 server's port and credentials inside the container.
const (
	s3Port      = "7070/tcp"
	s3AccessKey = "fencefs"
	s3SecretKey = "fencefs-secret"
	s3Region    = "us-east-1"
	// DefaultS3Bucket is the bucket every S3Server creates at start.
	DefaultS3Bucket = "fencefs"
)

// S3Config adjusts StartS3Server. The zero value starts a throwaway
// server on a random port.
type S3Config struct {
	// Image overrides S3Image().
	Image string
	// HostPort, when not 0, publishes the server on 127.0.0.1:HostPort,
	// so that the endpoint survives a restart (see FreePort).
	HostPort int
	// Persist keeps the server's storage in a Docker volume of its own,
	// so that objects survive a kill and a restart; Terminate removes
	// the volume.
	Persist bool
	// DataBytes, when not 0, makes the server's storage a tmpfs of that
	// size, so that a test can fill it.
	DataBytes int64
}

// S3Server is a running S3 server (versitygw over a POSIX directory) in a
// container.
type S3Server struct {
	// Container is the running container, for fault injection (Pause,
	// Kill, Stop, Start).
	Container *testcontainers.DockerContainer
	// Endpoint is the server's base URL ("http://127.0.0.1:32768").
	Endpoint string
	// AccessKey and SecretKey are the root credentials.
	AccessKey, SecretKey string
	// Region is the signing region.
	Region string

	volume  string
	buckets atomic.Int64
}

// StartS3Server starts an S3 server and creates DefaultS3Bucket. It does
// not check for Docker; tests use StartS3 or Shared, which do.
func StartS3Server(ctx context.Context) (*S3Server, error) {
	return StartS3ServerWith(ctx, S3Config{})
}

// StartS3ServerWith starts an S3 server as cfg says and creates
// DefaultS3Bucket.
func StartS3ServerWith(ctx context.Context, cfg S3Config) (*S3Server, error) {
	image := cfg.Image
	if image == "" {
		image = S3Image()
	}
	opts := []testcontainers.ContainerCustomizer{
		testcontainers.WithEnv(map[string]string{"ROOT_ACCESS_KEY": s3AccessKey, "ROOT_SECRET_KEY": s3SecretKey}),
		testcontainers.WithCmd("--quiet", "--keep-alive", "--port", ":7070", "posix", "/data"),
		testcontainers.WithExposedPorts(s3Port),
		// Any answer means the server listens: an anonymous GET / is
		// refused with 403. The image has no shell for a port probe.
		testcontainers.WithWaitStrategy(wait.ForHTTP("/").WithPort(s3Port).
			WithStatusCodeMatcher(func(int) bool { return true }).
			WithStartupTimeout(time.Minute)),
	}
	if cfg.HostPort != 0 {
		opts = append(opts, WithFixedPort(s3Port, cfg.HostPort))
	}
	if cfg.DataBytes != 0 {
		opts = append(opts, WithTmpfs("/data", fmt.Sprintf("size=%d", cfg.DataBytes)))
	}
	s := &S3Server{AccessKey: s3AccessKey, SecretKey: s3SecretKey, Region: s3Region}
	if cfg.Persist {
		s.volume = fmt.Sprintf("fencefs-s3-data-%d", time.Now().UnixNano())
		opts = append(opts, testcontainers.WithMounts(testcontainers.VolumeMount(s.volume, "/data")))
	}
	c, err := testcontainers.Run(ctx, image, opts...)
	s.Container = c
	if err != nil {
		s.terminateQuietly(ctx)
		return nil, fmt.Errorf("starting %s: %w", image, err)
	}
	if s.Endpoint, err = c.PortEndpoint(ctx, s3Port, "http"); err != nil {
		s.terminateQuietly(ctx)
		return nil, err
	}
	if err := s.createBucket(ctx, DefaultS3Bucket); err != nil {
		s.terminateQuietly(ctx)
		return nil, err
	}
	return s, nil
}

// StartS3 starts an S3 server for the test t and terminates it when t
// ends. It skips t (or fails it, see RequireDocker) when Docker or the
// image is missing.
func StartS3(ctx context.Context, t testing.TB) *S3Server {
	t.Helper()
	return StartS3With(ctx, t, S3Config{})
}

// StartS3With is StartS3 with a configuration.
func StartS3With(ctx context.Context, t testing.TB, cfg S3Config) *S3Server {
	t.Helper()
	image := cfg.Image
	if image == "" {
		image = S3Image()
	}
	RequireImage(t, image)
	s, err := StartS3ServerWith(ctx, cfg)
	if err != nil {
		t.Fatalf("starting the S3 server: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Terminate(context.Background()); err != nil {
			t.Errorf("terminating the S3 server: %v", err)
		}
	})
	return s
}

// Terminate stops and removes the container and its volume. The server
// keeps nothing worth a graceful stop, so it is killed at once.
func (s *S3Server) Terminate(ctx context.Context) error {
	opts := []testcontainers.TerminateOption{testcontainers.StopTimeout(0)}
	if s.volume != "" {
		opts = append(opts, testcontainers.RemoveVolumes(s.volume))
	}
	return s.Container.Terminate(ctx, opts...)
}

// terminateQuietly cleans up after a failed start.
func (s *S3Server) terminateQuietly(ctx context.Context) {
	if s.Container != nil {
		_ = s.Terminate(context.WithoutCancel(ctx))
	}
}

// Config returns the s3adapter configuration of bucket and prefix on
// this server, with small parts (s3adapter.MinPartSize) so that tests
// reach the multipart path with modest files.
func (s *S3Server) Config(bucket, prefix string) s3adapter.Config {
	return s3adapter.Config{
		Bucket:          bucket,
		Prefix:          prefix,
		Endpoint:        s.Endpoint,
		Region:          s.Region,
		PathStyle:       true,
		AccessKeyID:     s.AccessKey,
		SecretAccessKey: s.SecretKey,
		Options: s3adapter.Options{
			PartSize:     s3adapter.MinPartSize,
			AbortTimeout: 20 * time.Second,
		},
	}
}

// Client returns an S3 client for the server, for arranging and
// inspecting storage behind a backend's back. opts adjust it.
func (s *S3Server) Client(opts ...func(*s3.Options)) *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint: aws.String(s.Endpoint),
		Region:       s.Region,
		UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: s.AccessKey, SecretAccessKey: s.SecretKey, Source: "containers.S3Server"}, nil
		}),
	}, opts...)
}

// NewBucket creates a bucket with a fresh name and returns the name.
func (s *S3Server) NewBucket(ctx context.Context, t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("fencefs-%d-%d", time.Now().UnixNano()%1e9, s.buckets.Add(1))
	if err := s.createBucket(ctx, name); err != nil {
		t.Fatalf("creating bucket %s: %v", name, err)
	}
	return name
}

func (s *S3Server) createBucket(ctx context.Context, name string) error {
	_, err := s.Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)})
	return err
}

// NewBackend returns a backend over prefix in DefaultS3Bucket, opened
// with Config.
func (s *S3Server) NewBackend(t testing.TB, prefix string) *s3adapter.FS {
	t.Helper()
	return s.Open(t, s.Config(DefaultS3Bucket, prefix))
}

// Open opens a backend with cfg, failing t on error.
func (s *S3Server) Open(t testing.TB, cfg s3adapter.Config) *s3adapter.FS {
	t.Helper()
	f, err := s3adapter.Open(t.Context(), cfg)
	if err != nil {
		t.Fatalf("s3adapter.Open(%s/%s): %v", cfg.Bucket, cfg.Prefix, err)
	}
	return f
}

// S3Harness is a conformance.Harness over one bucket of an S3Server:
// each backend gets a fresh key prefix, which also exercises tenant
// isolation. It implements conformance.RawLister, reporting unfinished
// multipart uploads as "<path>#upload", and conformance.Seeder, writing
// through a writable backend over the same prefix, so that read-only
// backends can be tested too.
type S3Harness struct {
	server *S3Server
	bucket string
	// Configure, when set, adjusts each backend's configuration (set
	// Options.ReadOnly to test read-only backends).
	Configure func(*s3adapter.Config)
	n         atomic.Int64
}

// Harness returns a conformance harness over a fresh bucket.
func (s *S3Server) Harness(ctx context.Context, t testing.TB) *S3Harness {
	t.Helper()
	return &S3Harness{server: s, bucket: s.NewBucket(ctx, t)}
}

// MakeBackend returns a backend over a fresh, empty prefix.
func (h *S3Harness) MakeBackend(ctx context.Context, t *testing.T) backend.Backend {
	t.Helper()
	cfg := h.server.Config(h.bucket, fmt.Sprintf("t%05d", h.n.Add(1)))
	if h.Configure != nil {
		h.Configure(&cfg)
	}
	return h.server.Open(t, cfg)
}

// Seed stores data as name in b's storage, behind b's back.
func (h *S3Harness) Seed(ctx context.Context, t *testing.T, b backend.Backend, name string, data []byte) {
	t.Helper()
	if err := backend.WriteFile(ctx, h.writable(t, b), name, data, backend.WriteOptions{}); err != nil {
		t.Fatalf("Seed(%q): %v", name, err)
	}
}

// SeedDir creates the directory dir in b's storage, behind b's back.
func (h *S3Harness) SeedDir(ctx context.Context, t *testing.T, b backend.Backend, dir string) {
	t.Helper()
	if err := h.writable(t, b).MkdirAll(ctx, dir); err != nil {
		t.Fatalf("SeedDir(%q): %v", dir, err)
	}
}

// Reopen returns a second backend over b's bucket and prefix, configured
// as b was, as a second server sharing the bucket would be.
func (h *S3Harness) Reopen(ctx context.Context, t *testing.T, b backend.Backend) backend.Backend {
	t.Helper()
	prefix, err := b.(*s3adapter.FS).Key(".")
	if err != nil {
		t.Fatal(err)
	}
	cfg := h.server.Config(h.bucket, prefix)
	if h.Configure != nil {
		h.Configure(&cfg)
	}
	return h.server.Open(t, cfg)
}

// writable returns a writable backend over b's bucket and prefix.
func (h *S3Harness) writable(t *testing.T, b backend.Backend) *s3adapter.FS {
	t.Helper()
	prefix, err := b.(*s3adapter.FS).Key(".")
	if err != nil {
		t.Fatal(err)
	}
	return h.server.Open(t, h.server.Config(h.bucket, prefix))
}

// ListRaw returns every object below b's prefix (markers excepted) and
// every unfinished multipart upload, as storage paths.
func (h *S3Harness) ListRaw(ctx context.Context, t *testing.T, b backend.Backend) []string {
	t.Helper()
	prefix, err := b.(*s3adapter.FS).Key(".")
	if err != nil {
		t.Fatalf("ListRaw: %v", err)
	}
	raw, err := RawS3Keys(ctx, h.server.Client(), h.bucket, prefix)
	if err != nil {
		t.Fatalf("ListRaw: %v", err)
	}
	return raw
}

// RawS3Keys lists every object key below prefix in bucket, except
// directory markers (keys ending in "/"), and every unfinished multipart
// upload as its key plus "#upload", all with prefix removed.
func RawS3Keys(ctx context.Context, c *s3.Client, bucket, prefix string) ([]string, error) {
	var out []string
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, o := range page.Contents {
			if k := aws.ToString(o.Key); !strings.HasSuffix(k, "/") {
				out = append(out, strings.TrimPrefix(k, prefix))
			}
		}
	}
	in := &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket), Prefix: aws.String(prefix)}
	for {
		page, err := c.ListMultipartUploads(ctx, in)
		if err != nil {
			return nil, err
		}
		for _, u := range page.Uploads {
			out = append(out, strings.TrimPrefix(aws.ToString(u.Key), prefix)+"#upload")
		}
		if !aws.ToBool(page.IsTruncated) {
			return out, nil
		}
		in.KeyMarker, in.UploadIdMarker = page.NextKeyMarker, page.NextUploadIdMarker
	}
}
