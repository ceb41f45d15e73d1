// Package containers starts real S3 and SFTP servers in Docker containers
// with testcontainers-go and hands back fencefs backends over them, with
// conformance harnesses for conformance.Run.
//
// The images are built locally by scripts/build-test-images.sh (no
// registry is needed) and named by environment variables:
// FENCEFS_S3_IMAGE (default fencefs-test/versitygw:v1.8.0) and
// FENCEFS_SFTP_IMAGE (default fencefs-test/sshd:bookworm). On a machine
// with registry access they may name public images instead.
//
// When Docker cannot be reached, or an image is missing, the tests that
// need it are skipped with a loud message naming the cause and the fix;
// with FENCEFS_REQUIRE_CONTAINERS=1 (as in CI) they fail instead.
//
// testcontainers-go itself needs two settings where no registry can be
// reached: TESTCONTAINERS_RYUK_DISABLED=true (its reaper image cannot be
// pulled; the harnesses terminate their own containers) and
// TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1 (otherwise it may dial the
// default gateway to reach published ports). A test binary sets them with
// [SetTestcontainersDefaults] from TestMain, or the caller exports them:
//
//	TESTCONTAINERS_RYUK_DISABLED=true TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1 \
//	FENCEFS_REQUIRE_CONTAINERS=1 go test ./...
package containers

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// Environment variables read by this package.
const (
	// EnvRequire, set to "1", turns the skips for a missing Docker or
	// image into failures.
	EnvRequire = "FENCEFS_REQUIRE_CONTAINERS"
	// EnvS3Image names the S3 server image.
	EnvS3Image = "FENCEFS_S3_IMAGE"
	// EnvSFTPImage names the SFTP server image.
	EnvSFTPImage = "FENCEFS_SFTP_IMAGE"
)

// Default images, built by scripts/build-test-images.sh.
const (
	DefaultS3Image   = "fencefs-test/versitygw:v1.8.0"
	DefaultSFTPImage = "fencefs-test/sshd:bookworm"
)

// buildHint tells a reader how to get what is missing.
const buildHint = "start Docker and build the images with scripts/build-test-images.sh, " +
	"and run with TESTCONTAINERS_RYUK_DISABLED=true TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1"

// S3Image returns the S3 server image: $FENCEFS_S3_IMAGE or
// DefaultS3Image.
func S3Image() string { return envOr(EnvS3Image, DefaultS3Image) }

// SFTPImage returns the SFTP server image: $FENCEFS_SFTP_IMAGE or
// DefaultSFTPImage.
func SFTPImage() string { return envOr(EnvSFTPImage, DefaultSFTPImage) }

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// Required reports whether FENCEFS_REQUIRE_CONTAINERS=1, so that missing
// containers fail the tests instead of skipping them.
func Required() bool { return os.Getenv(EnvRequire) == "1" }

// SetTestcontainersDefaults sets TESTCONTAINERS_RYUK_DISABLED=true and
// TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1 where they are unset. It is meant
// for a test binary's TestMain, before any container starts; settings the
// caller exported win.
func SetTestcontainersDefaults() {
	for name, value := range map[string]string{
		"TESTCONTAINERS_RYUK_DISABLED": "true",
		"TESTCONTAINERS_HOST_OVERRIDE": "127.0.0.1",
	} {
		if _, ok := os.LookupEnv(name); !ok {
			os.Setenv(name, value)
		}
	}
}

// unavailable skips t with a loud message, or fails it when containers
// are required.
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if Required() {
		t.Fatalf("CONTAINERS REQUIRED (%s=1) BUT UNAVAILABLE: %s", EnvRequire, msg)
		return
	}
	t.Skipf("SKIPPED, NO CONTAINERS: %s (%s; set %s=1 to make this a failure)", msg, buildHint, EnvRequire)
}

// DockerError returns nil when the Docker daemon answers, and the reason
// otherwise.
func DockerError(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	_, err = cli.Ping(ctx, client.PingOptions{})
	return err
}

// RequireDocker skips t when Docker cannot be reached, with a loud
// message, or fails it when FENCEFS_REQUIRE_CONTAINERS=1.
func RequireDocker(t testing.TB) {
	t.Helper()
	if err := DockerError(t.Context()); err != nil {
		unavailable(t, "Docker is not reachable: %v", err)
	}
}

// RequireImage skips (or fails, see RequireDocker) when Docker cannot be
// reached or image is not present locally; it never pulls.
func RequireImage(t testing.TB, image string) {
	t.Helper()
	RequireDocker(t)
	if err := imageError(t.Context(), image); err != nil {
		unavailable(t, "image %s is not available: %v", image, err)
	}
}

// imageError returns nil when image is present in the local Docker.
func imageError(ctx context.Context, image string) error {
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	_, err = cli.ImageInspect(ctx, image)
	return err
}

// Server is a started container that can be terminated.
type Server interface {
	Terminate(ctx context.Context) error
}

// Shared starts one server per test binary, on first use, so that the
// tests of a package share it. Declare it in a _test.go file and
// terminate it from TestMain:
//
//	var s3srv = containers.Shared[*containers.S3Server]{Start: containers.StartS3Server}
//
//	func TestMain(m *testing.M) {
//		containers.SetTestcontainersDefaults()
//		code := m.Run()
//		s3srv.Terminate(context.Background())
//		os.Exit(code)
//	}
type Shared[S Server] struct {
	// Start starts the server. It is called at most once.
	Start func(ctx context.Context) (S, error)
	// Image, when set, is checked with RequireImage before Start.
	Image string

	once    sync.Once
	srv     S
	err     error
	started bool
}

// Get returns the server, starting it on the first call. It skips or
// fails t (see RequireDocker) when Docker or the image is missing, and
// fails t when the server did not start.
func (s *Shared[S]) Get(t testing.TB) S {
	t.Helper()
	if s.Image != "" {
		RequireImage(t, s.Image)
	} else {
		RequireDocker(t)
	}
	s.once.Do(func() {
		// The server outlives the test that starts it.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		s.srv, s.err = s.Start(ctx)
		s.started = s.err == nil
	})
	if s.err != nil {
		t.Fatalf("starting the shared server: %v", s.err)
	}
	return s.srv
}

// Terminate stops the server if it was started.
func (s *Shared[S]) Terminate(ctx context.Context) error {
	if !s.started {
		return nil
	}
	return s.srv.Terminate(ctx)
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago,
// for a container whose published port must survive a restart.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// WithFixedPort publishes the container port (such as "7070/tcp") on
// 127.0.0.1:hostPort, so that the endpoint stays the same when the
// container is stopped and started again (Docker picks a new random port
// otherwise).
func WithFixedPort(containerPort string, hostPort int) testcontainers.CustomizeRequestOption {
	return testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
		if hc.PortBindings == nil {
			hc.PortBindings = network.PortMap{}
		}
		p := network.MustParsePort(containerPort)
		hc.PortBindings[p] = []network.PortBinding{{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: strconv.Itoa(hostPort)}}
	})
}

// Pause freezes every process of the container (docker pause): the
// server keeps its connections open but never answers, like a hung host.
func Pause(ctx context.Context, c *testcontainers.DockerContainer) error {
	return withDocker(ctx, func(cli *testcontainers.DockerClient) error {
		_, err := cli.ContainerPause(ctx, c.GetContainerID(), client.ContainerPauseOptions{})
		return err
	})
}

// Unpause resumes a paused container.
func Unpause(ctx context.Context, c *testcontainers.DockerContainer) error {
	return withDocker(ctx, func(cli *testcontainers.DockerClient) error {
		_, err := cli.ContainerUnpause(ctx, c.GetContainerID(), client.ContainerUnpauseOptions{})
		return err
	})
}

// Kill sends SIGKILL to the container's main process, like a crash or a
// power cut, and returns once Docker reports it stopped; Start brings it
// back with its volumes and bind mounts.
func Kill(ctx context.Context, c *testcontainers.DockerContainer) error {
	return withDocker(ctx, func(cli *testcontainers.DockerClient) error {
		id := c.GetContainerID()
		if _, err := cli.ContainerKill(ctx, id, client.ContainerKillOptions{Signal: "KILL"}); err != nil {
			return err
		}
		w := cli.ContainerWait(ctx, id, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
		select {
		case <-w.Result:
			return nil
		case err := <-w.Error:
			return err
		}
	})
}

func withDocker(ctx context.Context, fn func(*testcontainers.DockerClient) error) error {
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	return fn(cli)
}

// WithTmpfs mounts a tmpfs at dir inside the container, writable by every
// user, with the further mount options given ("size=1m", "nr_inodes=8"),
// so that a test can fill a small file system and see how the server
// reports a full disk.
func WithTmpfs(dir string, options ...string) testcontainers.CustomizeRequestOption {
	return testcontainers.WithTmpfs(map[string]string{dir: strings.Join(append([]string{"rw", "mode=1777"}, options...), ",")})
}

// WithReadOnlyTmpfs mounts an empty read-only tmpfs at dir inside the
// container, for a test of how the server reports a read-only file system.
func WithReadOnlyTmpfs(dir string) testcontainers.CustomizeRequestOption {
	return testcontainers.WithTmpfs(map[string]string{dir: "ro,size=64k,mode=1777"})
}
