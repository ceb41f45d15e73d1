package containers

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"io"
	"io/fs"
	"net"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/sftpadapter"
	"github.com/pkg/sftp"
	"github.com/testcontainers/testcontainers-go"
	tcexec "github.com/testcontainers/testcontainers-go/exec"
	tclog "github.com/testcontainers/testcontainers-go/log"
	"github.com/testcontainers/testcontainers-go/wait"
	"golang.org/x/crypto/ssh"
)

// The account the SFTP image serves (see scripts/build-test-images.sh).
const (
	SFTPUser     = "fencefs"
	SFTPPassword = "fencefs"
	SFTPHome     = "/home/fencefs"
	sftpPort     = "22/tcp"
)

// SFTPServer is a running OpenSSH sshd container serving SFTP
// (internal-sftp) for the user SFTPUser, who logs in with PrivateKey or
// SFTPPassword. The container's host key is read from the container at
// start and pinned in every Config, so the tests never need insecure
// host key checking.
type SFTPServer struct {
	// Container is the running container, for fault tests.
	Container *testcontainers.DockerContainer
	// Addr is the published "127.0.0.1:port" of the server.
	Addr string
	// HostKey is the server's ed25519 host key.
	HostKey ssh.PublicKey
	// PrivateKey is the PEM-encoded key authorized for SFTPUser.
	PrivateKey []byte

	signer ssh.Signer
	roots  atomic.Int64

	mu    sync.Mutex // guards admin
	admin *adminConn
}

// adminConn is the harness's own SFTP connection, used to arrange and
// inspect storage behind the backend's back.
type adminConn struct {
	client *sftp.Client
	conn   *ssh.Client
	dead   chan struct{}
}

// StartSFTP starts an SFTP server container for t and terminates it when
// t ends. It skips t (or fails it, with FENCEFS_REQUIRE_CONTAINERS=1)
// when Docker or the image is missing. opts customize the container
// request, for example WithFixedPort("22/tcp", port) for a server that is
// restarted.
func StartSFTP(ctx context.Context, t testing.TB, opts ...testcontainers.ContainerCustomizer) *SFTPServer {
	t.Helper()
	RequireImage(t, SFTPImage())
	opts = append([]testcontainers.ContainerCustomizer{withLogger(tclog.TestLogger(t))}, opts...)
	s, err := StartSFTPServer(ctx, opts...)
	t.Cleanup(func() {
		if s != nil {
			_ = s.Terminate(context.WithoutCancel(ctx))
		}
	})
	if err != nil {
		t.Fatalf("starting the SFTP server: %v", err)
	}
	return s
}

// withLogger sets the container request's logger.
func withLogger(l tclog.Logger) testcontainers.CustomizeRequestOption {
	return func(req *testcontainers.GenericContainerRequest) error {
		req.Logger = l
		return nil
	}
}

// StartSFTPServer starts an SFTP server container from SFTPImage() and
// waits until it accepts SSH connections. The caller terminates it. On
// error the returned server, when not nil, still needs terminating.
func StartSFTPServer(ctx context.Context, opts ...testcontainers.ContainerCustomizer) (*SFTPServer, error) {
	SetTestcontainersDefaults()
	s := &SFTPServer{}
	pub, err := s.makeClientKey()
	if err != nil {
		return nil, err
	}
	req := testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image:        SFTPImage(),
			ExposedPorts: []string{sftpPort},
			Env:          map[string]string{"SFTP_AUTHORIZED_KEY": pub, "SFTP_PASSWORD": SFTPPassword},
			WaitingFor:   wait.ForListeningPort(sftpPort).WithStartupTimeout(time.Minute),
		},
		Started: true,
		Logger:  tclog.NewNoopLogger(),
	}
	for _, o := range opts {
		if err := o.Customize(&req); err != nil {
			return nil, err
		}
	}
	c, err := testcontainers.GenericContainer(ctx, req)
	if c != nil {
		s.Container, _ = c.(*testcontainers.DockerContainer)
	}
	if err != nil {
		return s, fmt.Errorf("sftp container: %w", err)
	}
	if s.Container == nil {
		return s, fmt.Errorf("sftp container: unexpected container type %T", c)
	}
	if err := s.learn(ctx); err != nil {
		return s, err
	}
	return s, nil
}

// makeClientKey makes the key pair the container authorizes and returns
// its public half in authorized_keys form.
func (s *SFTPServer) makeClientKey() (string, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", err
	}
	block, err := ssh.MarshalPrivateKey(priv, "fencefs test key")
	if err != nil {
		return "", err
	}
	s.PrivateKey = pem.EncodeToMemory(block)
	if s.signer, err = ssh.NewSignerFromKey(priv); err != nil {
		return "", err
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sshPub))), nil
}

// learn reads the published address and the host key of the container.
func (s *SFTPServer) learn(ctx context.Context) error {
	host, err := s.Container.Host(ctx)
	if err != nil {
		return err
	}
	port, err := s.Container.MappedPort(ctx, sftpPort)
	if err != nil {
		return err
	}
	s.Addr = net.JoinHostPort(host, port.Port())
	out, err := s.Exec(ctx, "cat /etc/ssh/ssh_host_ed25519_key.pub")
	if err != nil {
		return fmt.Errorf("reading the host key: %w", err)
	}
	if s.HostKey, _, _, _, err = ssh.ParseAuthorizedKey([]byte(out)); err != nil {
		return fmt.Errorf("parsing the host key %q: %w", out, err)
	}
	return nil
}

// Terminate closes the harness's connection and removes the container.
func (s *SFTPServer) Terminate(ctx context.Context) error {
	s.mu.Lock()
	if s.admin != nil {
		s.admin.close()
		s.admin = nil
	}
	s.mu.Unlock()
	if s.Container == nil {
		return nil
	}
	return s.Container.Terminate(ctx)
}

// Exec runs the shell script as root inside the container and returns its
// combined output; a non-zero exit status is an error carrying the output.
func (s *SFTPServer) Exec(ctx context.Context, script string) (string, error) {
	code, r, err := s.Container.Exec(ctx, []string{"/bin/sh", "-c", script}, tcexec.Multiplexed())
	if err != nil {
		return "", err
	}
	out, err := io.ReadAll(r)
	if err != nil {
		return "", err
	}
	if code != 0 {
		return string(out), fmt.Errorf("exit status %d: %s", code, out)
	}
	return string(out), nil
}

// Connections counts the server's established SSH connections, as the
// container's kernel sees them, so that a test can tell how many
// connections its clients made.
func (s *SFTPServer) Connections(ctx context.Context) (int, error) {
	// Local port 22 (hex 0016) in state ESTABLISHED (01).
	out, err := s.Exec(ctx, `cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '$2 ~ /:0016$/ && $4 == "01"' | wc -l`)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		return 0, fmt.Errorf("counting connections: %q: %w", out, err)
	}
	return n, nil
}

// Config returns the adapter configuration for the server directory root
// (absolute, or relative to SFTPHome), logging in with PrivateKey and
// pinning HostKey.
func (s *SFTPServer) Config(root string) sftpadapter.Config {
	return sftpadapter.Config{
		Addr:        s.Addr,
		User:        SFTPUser,
		PrivateKey:  s.PrivateKey,
		Root:        root,
		HostKey:     s.HostKey,
		DialTimeout: 20 * time.Second,
	}
}

// Dial opens a backend on the server directory root.
func (s *SFTPServer) Dial(ctx context.Context, root string) (*sftpadapter.FS, error) {
	return sftpadapter.Dial(ctx, s.Config(root))
}

// NewRoot creates a fresh, empty directory in SFTPHome and returns its
// absolute server path.
func (s *SFTPServer) NewRoot(ctx context.Context) (string, error) {
	dir := fmt.Sprintf("%s/root-%d", SFTPHome, s.roots.Add(1))
	err := s.withAdmin(ctx, func(c *sftp.Client) error { return c.Mkdir(dir) })
	if err != nil {
		return "", fmt.Errorf("creating %s: %w", dir, err)
	}
	return dir, nil
}

// Client returns the harness's own SFTP client (dialled again when the
// server was restarted), for arranging storage in tests. The client
// follows the server's rules, not the backend's.
func (s *SFTPServer) Client(ctx context.Context) (*sftp.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.admin != nil && s.admin.alive() {
		return s.admin.client, nil
	}
	if s.admin != nil {
		s.admin.close()
		s.admin = nil
	}
	a, err := s.dialAdmin(ctx)
	if err != nil {
		return nil, err
	}
	s.admin = a
	return a.client, nil
}

// withAdmin runs fn with the harness's client.
func (s *SFTPServer) withAdmin(ctx context.Context, fn func(c *sftp.Client) error) error {
	c, err := s.Client(ctx)
	if err != nil {
		return err
	}
	return fn(c)
}

// dialAdmin opens the harness's SFTP connection.
func (s *SFTPServer) dialAdmin(ctx context.Context) (*adminConn, error) {
	conf := &ssh.ClientConfig{
		User:              SFTPUser,
		Auth:              []ssh.AuthMethod{ssh.PublicKeys(s.signer)},
		HostKeyCallback:   ssh.FixedHostKey(s.HostKey),
		HostKeyAlgorithms: []string{s.HostKey.Type()},
		Timeout:           20 * time.Second,
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", s.Addr)
	if err != nil {
		return nil, err
	}
	cc, chans, reqs, err := ssh.NewClientConn(nc, s.Addr, conf)
	if err != nil {
		nc.Close()
		return nil, err
	}
	conn := ssh.NewClient(cc, chans, reqs)
	client, err := sftp.NewClient(conn)
	if err != nil {
		conn.Close()
		return nil, err
	}
	a := &adminConn{client: client, conn: conn, dead: make(chan struct{})}
	go func() {
		_ = client.Wait()
		close(a.dead)
	}()
	return a, nil
}

func (a *adminConn) alive() bool {
	select {
	case <-a.dead:
		return false
	default:
		return true
	}
}

func (a *adminConn) close() {
	a.client.Close()
	a.conn.Close()
}

// SFTPHarness is the conformance harness for the SFTP backend: every
// backend it makes is rooted at a fresh directory of one server. Besides
// conformance.Harness it implements conformance.Symlinker,
// conformance.SpecialFileMaker, conformance.RawLister and
// conformance.Chmoder.
type SFTPHarness struct {
	// Server is the server the backends talk to.
	Server *SFTPServer

	mu    sync.Mutex
	roots map[backend.Backend]string
}

var (
	_ conformance.Harness          = (*SFTPHarness)(nil)
	_ conformance.Symlinker        = (*SFTPHarness)(nil)
	_ conformance.SpecialFileMaker = (*SFTPHarness)(nil)
	_ conformance.RawLister        = (*SFTPHarness)(nil)
	_ conformance.Chmoder          = (*SFTPHarness)(nil)
	_ conformance.Reopener         = (*SFTPHarness)(nil)
)

// NewSFTPHarness returns a harness over srv.
func NewSFTPHarness(srv *SFTPServer) *SFTPHarness {
	return &SFTPHarness{Server: srv, roots: map[backend.Backend]string{}}
}

// MakeBackend dials a backend rooted at a fresh directory and closes it
// when t ends.
func (h *SFTPHarness) MakeBackend(ctx context.Context, t *testing.T) backend.Backend {
	t.Helper()
	root, err := h.Server.NewRoot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return h.dial(ctx, t, root)
}

// Reopen dials a second connection rooted where b is, as a second server
// over the same directory would be.
func (h *SFTPHarness) Reopen(ctx context.Context, t *testing.T, b backend.Backend) backend.Backend {
	t.Helper()
	return h.dial(ctx, t, h.Root(t, b))
}

// dial connects a backend rooted at root and closes it when t ends.
func (h *SFTPHarness) dial(ctx context.Context, t *testing.T, root string) backend.Backend {
	t.Helper()
	b, err := h.Server.Dial(ctx, root)
	if err != nil {
		t.Fatalf("sftpadapter.Dial: %v", err)
	}
	h.mu.Lock()
	h.roots[b] = root
	h.mu.Unlock()
	t.Cleanup(func() {
		b.Close()
		h.mu.Lock()
		delete(h.roots, b)
		h.mu.Unlock()
	})
	return b
}

// Root returns the server path of the root of a backend the harness made.
func (h *SFTPHarness) Root(t testing.TB, b backend.Backend) string {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	root, ok := h.roots[b]
	if !ok {
		t.Fatalf("backend %T was not made by this harness", b)
	}
	return root
}

// serverPath returns the server path of the storage path name of b.
func (h *SFTPHarness) serverPath(t testing.TB, b backend.Backend, name string) string {
	t.Helper()
	if !backend.ValidPath(name) {
		t.Fatalf("harness: %q is not a canonical storage path", name)
	}
	return path.Join(h.Root(t, b), name)
}

// MakeSymlink creates the symlink name pointing at target, on the server.
func (h *SFTPHarness) MakeSymlink(ctx context.Context, t *testing.T, b backend.Backend, target, name string) {
	t.Helper()
	p := h.serverPath(t, b, name)
	if err := h.Server.withAdmin(ctx, func(c *sftp.Client) error { return c.Symlink(target, p) }); err != nil {
		t.Fatalf("symlink %s -> %s: %v", name, target, err)
	}
}

// MakeFIFO creates a named pipe at name, with mkfifo in the container.
func (h *SFTPHarness) MakeFIFO(ctx context.Context, t *testing.T, b backend.Backend, name string) {
	t.Helper()
	p := h.serverPath(t, b, name)
	if _, err := h.Server.Exec(ctx, "mkfifo -m 0644 "+ShellQuote(p)+" && chown "+SFTPUser+": "+ShellQuote(p)); err != nil {
		t.Fatalf("mkfifo %s: %v", name, err)
	}
}

// Chmod sets the permission bits of name.
func (h *SFTPHarness) Chmod(ctx context.Context, t *testing.T, b backend.Backend, name string, perm fs.FileMode) {
	t.Helper()
	p := h.serverPath(t, b, name)
	if err := h.Server.withAdmin(ctx, func(c *sftp.Client) error { return c.Chmod(p, perm) }); err != nil {
		t.Fatalf("chmod %s: %v", name, err)
	}
}

// ListRaw returns every non-directory below b's root, temporary files
// included, as storage paths (names that are not valid storage paths are
// reported as they are).
func (h *SFTPHarness) ListRaw(ctx context.Context, t *testing.T, b backend.Backend) []string {
	t.Helper()
	root := h.Root(t, b)
	var out []string
	err := h.Server.withAdmin(ctx, func(c *sftp.Client) error {
		w := c.Walk(root)
		for w.Step() {
			if err := w.Err(); err != nil {
				return err
			}
			if w.Path() == root || w.Stat().IsDir() {
				continue
			}
			out = append(out, strings.TrimPrefix(w.Path(), root+"/"))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("listing %s: %v", root, err)
	}
	return out
}

// ShellQuote quotes s for a POSIX shell.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ReadServerFile returns the content of the server file p, read with the
// harness's client.
func (s *SFTPServer) ReadServerFile(ctx context.Context, p string) ([]byte, error) {
	var buf bytes.Buffer
	err := s.withAdmin(ctx, func(c *sftp.Client) error {
		f, err := c.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.WriteTo(&buf)
		return err
	})
	return buf.Bytes(), err
}
