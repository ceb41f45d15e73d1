package containers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// EnvGCSServer names the fake-gcs-server binary; by default it is looked
// up on PATH. scripts/test.sh installs it with
// `go install github.com/fsouza/fake-gcs-server@` + FakeGCSServerVersion.
const EnvGCSServer = "FENCEFS_FAKE_GCS_SERVER"

// FakeGCSServerVersion is the fake-gcs-server release the tests are run
// against.
const FakeGCSServerVersion = "v1.56.1"

// gcsHint tells a reader how to get the emulator.
const gcsHint = "install it with `GOBIN=DIR go install github.com/fsouza/fake-gcs-server@" + FakeGCSServerVersion +
	"` and put DIR on PATH, or name the binary in " + EnvGCSServer

// gcsStartTimeout bounds the wait for a started emulator to answer.
const gcsStartTimeout = 30 * time.Second

// GCSServerBinary returns the path of the fake-gcs-server binary:
// $FENCEFS_FAKE_GCS_SERVER, or the one found on PATH.
func GCSServerBinary() (string, error) {
	if p := os.Getenv(EnvGCSServer); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvGCSServer, p, err)
		}
		return p, nil
	}
	return exec.LookPath("fake-gcs-server")
}

// RequireGCSServer skips t with a loud message when the fake-gcs-server
// binary is missing, or fails it when FENCEFS_REQUIRE_CONTAINERS=1.
func RequireGCSServer(t testing.TB) {
	t.Helper()
	if _, err := GCSServerBinary(); err != nil {
		msg := fmt.Sprintf("the Cloud Storage emulator fake-gcs-server is missing: %v", err)
		if Required() {
			t.Fatalf("EMULATOR REQUIRED (%s=1) BUT UNAVAILABLE: %s (%s)", EnvRequire, msg, gcsHint)
			return
		}
		t.Skipf("SKIPPED, NO EMULATOR: %s (%s; set %s=1 to make this a failure)", msg, gcsHint, EnvRequire)
	}
}

// GCSConfig adjusts StartGCSServer. The zero value starts a throwaway
// server, keeping objects in memory, on a free port.
type GCSConfig struct {
	// Port, when not 0, is the port on 127.0.0.1 to listen on.
	Port int
	// Dir, when set, makes the server keep its objects in that
	// directory (its filesystem backend), so that they survive a kill and
	// a restart.
	Dir string
}

// GCSServer is a running fake-gcs-server process on 127.0.0.1, speaking
// the Cloud Storage JSON API over plain HTTP.
type GCSServer struct {
	// Endpoint is the server's base URL ("http://127.0.0.1:43211").
	Endpoint string

	cfg     GCSConfig
	bin     string
	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{}
	log     *bytes.Buffer
	buckets atomic.Int64
}

// DefaultGCSBucket is the bucket every GCSServer creates at start.
const DefaultGCSBucket = "fencefs"

// StartGCSServer starts fake-gcs-server as cfg says, waits until it
// answers and creates DefaultGCSBucket. It does not check for the
// binary's presence in the test's terms; tests use StartGCS or SharedGCS,
// which do.
func StartGCSServer(ctx context.Context, cfg GCSConfig) (*GCSServer, error) {
	bin, err := GCSServerBinary()
	if err != nil {
		return nil, err
	}
	if cfg.Port == 0 {
		if cfg.Port, err = FreePort(); err != nil {
			return nil, err
		}
	}
	s := &GCSServer{Endpoint: "http://127.0.0.1:" + strconv.Itoa(cfg.Port), cfg: cfg, bin: bin}
	if err := s.start(ctx); err != nil {
		return nil, err
	}
	if err := s.CreateBucket(ctx, DefaultGCSBucket); err != nil {
		_ = s.Terminate(context.WithoutCancel(ctx))
		return nil, err
	}
	return s, nil
}

// start runs the process and waits until it answers.
func (s *GCSServer) start(ctx context.Context) error {
	args := []string{"-scheme", "http", "-host", "127.0.0.1", "-port", strconv.Itoa(s.cfg.Port),
		"-public-host", "127.0.0.1:" + strconv.Itoa(s.cfg.Port), "-external-url", s.Endpoint, "-log-level", "error"}
	if s.cfg.Dir != "" {
		args = append(args, "-backend", "filesystem", "-filesystem-root", s.cfg.Dir)
	} else {
		args = append(args, "-backend", "memory")
	}
	cmd := exec.Command(s.bin, args...)
	log := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = &lockedWriter{w: log}, &lockedWriter{w: log}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting fake-gcs-server: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.cmd, s.done, s.log = cmd, done, log
	s.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, gcsStartTimeout)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(wctx, http.MethodGet, s.Endpoint+"/storage/v1/b", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-done:
			return fmt.Errorf("fake-gcs-server exited at start: %s", s.logText())
		case <-wctx.Done():
			_ = s.Kill()
			return fmt.Errorf("fake-gcs-server did not answer within %v: %v; log: %s", gcsStartTimeout, err, s.logText())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// lockedWriter serializes the writes of the process's two streams.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (s *GCSServer) logText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log == nil {
		return ""
	}
	return s.log.String()
}

// signal sends sig to the running process.
func (s *GCSServer) signal(sig syscall.Signal) error {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return errors.New("fake-gcs-server is not running")
	}
	return cmd.Process.Signal(sig)
}

// Pause freezes the server (SIGSTOP): it keeps its connections open but
// never answers, like a hung host. It returns once the process is
// stopped, since a signal is delivered asynchronously.
func (s *GCSServer) Pause() error {
	if err := s.signal(syscall.SIGSTOP); err != nil {
		return err
	}
	s.mu.Lock()
	pid := s.cmd.Process.Pid
	s.mu.Unlock()
	stat := fmt.Sprintf("/proc/%d/stat", pid)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		b, err := os.ReadFile(stat)
		if err != nil {
			return err
		}
		// The state follows the command name in parentheses: "T" is
		// stopped.
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && b[i+2] == 'T' {
			return nil
		}
	}
	return errors.New("fake-gcs-server did not stop within 5s of SIGSTOP")
}

// Resume thaws a paused server (SIGCONT).
func (s *GCSServer) Resume() error { return s.signal(syscall.SIGCONT) }

// Kill sends SIGKILL, like a crash or a power cut, and returns once the
// process is gone. Restart brings it back on the same port (and, with
// GCSConfig.Dir, with the objects it had stored).
func (s *GCSServer) Kill() error {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	_ = cmd.Process.Signal(syscall.SIGCONT)
	if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	<-done
	s.mu.Lock()
	s.cmd = nil
	s.mu.Unlock()
	return nil
}

// Restart starts the killed server again on the same port and directory.
func (s *GCSServer) Restart(ctx context.Context) error {
	if err := s.Kill(); err != nil {
		return err
	}
	return s.start(ctx)
}

// Terminate kills the server.
func (s *GCSServer) Terminate(context.Context) error { return s.Kill() }

// CreateBucket creates the bucket name through the JSON API.
func (s *GCSServer) CreateBucket(ctx context.Context, name string) error {
	body, _ := json.Marshal(map[string]string{"name": name})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Endpoint+"/storage/v1/b?project=fencefs", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("creating bucket %s: %w", name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return fmt.Errorf("creating bucket %s: %s: %s", name, resp.Status, msg)
	}
	return nil
}

// NewBucket creates a bucket with a fresh name and returns the name.
func (s *GCSServer) NewBucket(ctx context.Context, t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("fencefs-%d-%d", time.Now().UnixNano()%1e9, s.buckets.Add(1))
	if err := s.CreateBucket(ctx, name); err != nil {
		t.Fatal(err)
	}
	return name
}

// StartGCS starts a throwaway emulator for the test t and kills it when t
// ends. It skips t (or fails it, see RequireGCSServer) when the binary is
// missing.
func StartGCS(ctx context.Context, t testing.TB) *GCSServer {
	t.Helper()
	return StartGCSWith(ctx, t, GCSConfig{})
}

// StartGCSWith is StartGCS with a configuration.
func StartGCSWith(ctx context.Context, t testing.TB, cfg GCSConfig) *GCSServer {
	t.Helper()
	RequireGCSServer(t)
	s, err := StartGCSServer(ctx, cfg)
	if err != nil {
		t.Fatalf("starting the Cloud Storage emulator: %v", err)
	}
	t.Cleanup(func() { _ = s.Terminate(context.Background()) })
	return s
}

// SharedGCS starts one emulator per test binary, on first use, so that
// the tests of a package share it; TestMain terminates it.
type SharedGCS struct {
	once sync.Once
	srv  *GCSServer
	err  error
}

// Get returns the server, starting it on the first call. It skips or
// fails t (see RequireGCSServer) when the binary is missing, and fails t
// when the server did not start.
func (s *SharedGCS) Get(t testing.TB) *GCSServer {
	t.Helper()
	RequireGCSServer(t)
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		s.srv, s.err = StartGCSServer(ctx, GCSConfig{})
	})
	if s.err != nil {
		t.Fatalf("starting the shared Cloud Storage emulator: %v", s.err)
	}
	return s.srv
}

// Terminate stops the server if it was started.
func (s *SharedGCS) Terminate(ctx context.Context) error {
	if s.srv == nil {
		return nil
	}
	return s.srv.Terminate(ctx)
}
