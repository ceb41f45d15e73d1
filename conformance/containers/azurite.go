package containers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Azurite, Microsoft's Azure Storage emulator, runs as a plain Node
// process rather than in a container: scripts/test.sh installs the pinned
// npm package into a cache directory and names its azurite-blob program
// in FENCEFS_AZURITE_BIN.
const (
	// EnvAzuriteBin names the azurite-blob program. Unset, the harness
	// looks for azurite-blob on PATH.
	EnvAzuriteBin = "FENCEFS_AZURITE_BIN"
	// AzuriteVersion is the npm version scripts/test.sh installs: the last
	// whose engines accept Node 20 (3.36 and later need Node 21 or 22).
	AzuriteVersion = "3.35.0"
	// AzuriteAccount and AzuriteKey are the emulator's well-known
	// development account and key, published in Azurite's README.
	AzuriteAccount = "devstoreaccount1"
	AzuriteKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// azuriteHint tells a reader how to get Azurite.
const azuriteHint = "install it with `npm install --prefix DIR azurite@" + AzuriteVersion +
	"` and set " + EnvAzuriteBin + "=DIR/node_modules/.bin/azurite-blob (scripts/test.sh does both)"

// AzuriteBin returns the azurite-blob program to run: $FENCEFS_AZURITE_BIN,
// or azurite-blob found on PATH.
func AzuriteBin() (string, error) {
	if p := os.Getenv(EnvAzuriteBin); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvAzuriteBin, p, err)
		}
		return p, nil
	}
	return exec.LookPath("azurite-blob")
}

// RequireAzurite skips t with a loud message when the azurite-blob program
// cannot be found, or fails it when FENCEFS_REQUIRE_CONTAINERS=1.
func RequireAzurite(t testing.TB) {
	t.Helper()
	if _, err := AzuriteBin(); err != nil {
		msg := fmt.Sprintf("Azurite is not installed: %v", err)
		if Required() {
			t.Fatalf("CONTAINERS REQUIRED (%s=1) BUT UNAVAILABLE: %s; %s", EnvRequire, msg, azuriteHint)
		}
		t.Skipf("SKIPPED, NO AZURITE: %s; %s; set %s=1 to make this a failure", msg, azuriteHint, EnvRequire)
	}
}

// AzuriteServer is a running Azurite blob service on 127.0.0.1, a child
// process of the test binary, storing its data in a directory of its own.
// Pause, Resume, Kill and Start inject faults; Terminate ends it.
type AzuriteServer struct {
	// Endpoint is the account's blob endpoint
	// ("http://127.0.0.1:PORT/devstoreaccount1").
	Endpoint string
	// Account and Key are the shared-key credentials.
	Account, Key string
	// Port is the listening port, kept across Kill and Start.
	Port int

	bin, dir string
	mu       sync.Mutex
	cmd      *exec.Cmd
	exited   chan struct{}
	log      *os.File
}

// ConnectionString returns the connection string of the account, as
// AZURE_STORAGE_CONNECTION_STRING would hold it.
func (s *AzuriteServer) ConnectionString() string {
	return fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;BlobEndpoint=%s;", s.Account, s.Key, s.Endpoint)
}

// StartAzuriteServer starts Azurite on a free port with a fresh data
// directory below dir ("" for the system's temporary directory) and waits
// until it accepts connections. It does not check that Azurite is
// installed; tests use StartAzurite or SharedAzurite, which do.
func StartAzuriteServer(ctx context.Context, dir string) (*AzuriteServer, error) {
	bin, err := AzuriteBin()
	if err != nil {
		return nil, err
	}
	data, err := os.MkdirTemp(dir, "fencefs-azurite-")
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		os.RemoveAll(data)
		return nil, err
	}
	s := &AzuriteServer{
		Endpoint: fmt.Sprintf("http://127.0.0.1:%d/%s", port, AzuriteAccount),
		Account:  AzuriteAccount, Key: AzuriteKey, Port: port, bin: bin, dir: data,
	}
	if err := s.Start(ctx); err != nil {
		os.RemoveAll(data)
		return nil, err
	}
	return s, nil
}

// Start runs the Azurite process (again, after Kill) over the same data
// directory and port, and waits until it accepts connections.
func (s *AzuriteServer) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("azurite: already running")
	}
	log, err := os.OpenFile(filepath.Join(s.dir, "azurite.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(s.bin,
		"--blobHost", "127.0.0.1", "--blobPort", strconv.Itoa(s.Port),
		"--location", s.dir, "--skipApiVersionCheck", "--disableTelemetry", "--silent")
	cmd.Stdout, cmd.Stderr = log, log
	// A process group of its own, so that Kill reaches node and nothing
	// else, and a signal to the test binary's group does not reach it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("starting %s: %w", s.bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s.cmd, s.exited, s.log = cmd, exited, log
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port))
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-exited:
			s.cmd = nil
			log.Close()
			out, _ := os.ReadFile(filepath.Join(s.dir, "azurite.log"))
			return fmt.Errorf("azurite exited at start: %s", out)
		case <-ctx.Done():
			s.killLocked()
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.killLocked()
			return fmt.Errorf("azurite did not listen on %s within a minute", addr)
		}
	}
}

// Pause stops the process with SIGSTOP: it keeps its connections open
// but never answers, like a hung host.
func (s *AzuriteServer) Pause() error { return s.signal(syscall.SIGSTOP) }

// Resume continues a paused process with SIGCONT.
func (s *AzuriteServer) Resume() error { return s.signal(syscall.SIGCONT) }

func (s *AzuriteServer) signal(sig syscall.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return errors.New("azurite: not running")
	}
	return syscall.Kill(-s.cmd.Process.Pid, sig)
}

// Kill sends SIGKILL to the process, like a crash, and returns once it
// has exited; Start brings it back over the same data.
func (s *AzuriteServer) Kill() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return errors.New("azurite: not running")
	}
	s.killLocked()
	return nil
}

func (s *AzuriteServer) killLocked() {
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.exited
	s.log.Close()
	s.cmd = nil
}

// Terminate kills the process and removes its data directory.
func (s *AzuriteServer) Terminate(context.Context) error {
	s.mu.Lock()
	if s.cmd != nil {
		s.killLocked()
	}
	s.mu.Unlock()
	return os.RemoveAll(s.dir)
}

// azuriteDBs are Azurite's metadata databases in its data directory.
var azuriteDBs = []string{"__azurite_db_blob__.json", "__azurite_db_blob_extent__.json"}

// WaitSaved returns once Azurite has saved its metadata databases from a
// point after the call, so that a Kill keeps everything written before
// the call. Azurite holds its metadata in LokiJS databases saved every
// five seconds, and a crash loses what was not saved yet: a limit of the
// emulator (the service commits a write before answering it), which
// fault tests must not mistake for the adapter's. It waits for a save
// finishing more than a second after the call, which the small databases
// of a test make one that started after it.
func (s *AzuriteServer) WaitSaved(ctx context.Context) error {
	after := time.Now().Add(time.Second)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		saved := true
		for _, db := range azuriteDBs {
			fi, err := os.Stat(filepath.Join(s.dir, db))
			if err != nil || !fi.ModTime().After(after) {
				saved = false
			}
		}
		if saved {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("azurite did not save its databases: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// StartAzurite starts Azurite for the test t and terminates it when t
// ends. It skips t (or fails it, see RequireAzurite) when Azurite is not
// installed.
func StartAzurite(ctx context.Context, t testing.TB) *AzuriteServer {
	t.Helper()
	RequireAzurite(t)
	s, err := StartAzuriteServer(ctx, "")
	if err != nil {
		t.Fatalf("starting Azurite: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Terminate(context.Background()); err != nil {
			t.Errorf("terminating Azurite: %v", err)
		}
	})
	return s
}

// SharedAzurite starts one Azurite per test binary, on first use, so that
// the tests of a package share it. Terminate it from TestMain.
type SharedAzurite struct {
	once sync.Once
	srv  *AzuriteServer
	err  error
}

// Get returns the server, starting it on the first call. It skips or
// fails t (see RequireAzurite) when Azurite is not installed, and fails t
// when it did not start.
func (s *SharedAzurite) Get(t testing.TB) *AzuriteServer {
	t.Helper()
	RequireAzurite(t)
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		s.srv, s.err = StartAzuriteServer(ctx, "")
	})
	if s.err != nil {
		t.Fatalf("starting the shared Azurite: %v", s.err)
	}
	return s.srv
}

// Terminate stops the server if it was started.
func (s *SharedAzurite) Terminate(ctx context.Context) error {
	if s.srv == nil {
		return nil
	}
	return s.srv.Terminate(ctx)
}
