package security

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/fencefs/fencefs/internal/testserver"
)

// awsEnv gives the AWS SDK static credentials and keeps it away from the
// machine's configuration.
var awsEnv = []string{
	"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_SESSION_TOKEN=",
	"AWS_CONFIG_FILE=/nonexistent", "AWS_SHARED_CREDENTIALS_FILE=/nonexistent",
	"AWS_EC2_METADATA_DISABLED=true", "AWS_PROFILE=",
}

// stdioCmd starts `fencefs serve` over stdio with env and args and
// connects a client; the returned buffer collects the server's stderr.
func stdioCmd(t *testing.T, env []string, args ...string) (*mcp.ClientSession, *logBuffer) {
	t.Helper()
	cmd := exec.Command(serveBinary.get(t), append([]string{"serve"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stderr := &logBuffer{}
	cmd.Stderr = stderr
	c := mcp.NewClient(&mcp.Implementation{Name: "security", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * cmdDeadline}, nil)
	if err != nil {
		t.Fatalf("fencefs serve %q: %v\nstderr:\n%s", args, err, stderr.String())
	}
	t.Cleanup(func() { cs.Close() })
	return cs, stderr
}

// runCmd runs the command to its end (bounded by cmdDeadline) and returns
// its exit code and stderr.
func runCmd(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	bin := serveBinary.get(t) // built before the deadline starts
	ctx, cancel := context.WithTimeout(t.Context(), cmdDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || ctx.Err() != nil) {
		t.Fatalf("fencefs %q: %v\nstderr:\n%s", args, err, stderr.String())
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// silentServer accepts TCP connections on 127.0.0.1 and never sends a
// byte, as a hung storage server does. It returns its address.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().String()
}

// TestStartupProbeTimeout starts serve and call with a mount on a server
// that accepts connections and never answers: start-up fails within the
// mount's timeout with a message naming the mount, instead of never
// answering initialize.
func TestStartupProbeTimeout(t *testing.T) {
	t.Parallel()
	addr := silentServer(t)
	specs := map[string]string{
		"s3":   "s3://bucket?endpoint=http://" + addr + "&region=us-east-1&path_style=1&timeout=500ms",
		"sftp": "sftp://agent@" + addr + "/srv?password_env=FENCEFS_TEST_PW&insecure=1&timeout=500ms",
	}
	env := append([]string{"FENCEFS_TEST_PW=x"}, awsEnv...)
	local := "ws=local:" + cmdRoot(t)
	for kind, spec := range specs {
		for _, args := range [][]string{
			{"call", "--mount", local, "--mount", "hung=" + spec, "list_directory", `{"path":"/ws"}`},
			{"serve", "--mount", local, "--mount", "hung=" + spec},
			{"serve", "--mount", "hung=" + strings.Replace(spec, "&timeout=500ms", "", 1), "--storage-timeout", "500ms"},
		} {
			t.Run(kind+" "+args[0], func(t *testing.T) {
				t.Parallel()
				serveBinary.get(t)
				start := time.Now()
				code, stderr := runCmd(t, env, args...)
				want := `fencefs: mount "hung": the storage did not answer within 500ms`
				if code != 1 || !strings.HasPrefix(stderr, want) {
					t.Fatalf("%q: exit %d, stderr %q; want exit 1 and %q", args, code, stderr, want)
				}
				t.Logf("%s after %v", strings.TrimSpace(stderr), time.Since(start).Round(time.Millisecond))
			})
		}
	}
}

// freezable serves an in-memory S3 bucket until frozen; from then on every
// request is held unanswered, as by a server that hangs, and reported on
// arrived.
type freezable struct {
	next    http.Handler
	mu      sync.Mutex
	frozen  bool
	arrived chan struct{}
	stop    chan struct{}
}

func (f *freezable) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	frozen := f.frozen
	f.mu.Unlock()
	if !frozen {
		f.next.ServeHTTP(w, r)
		return
	}
	select {
	case f.arrived <- struct{}{}:
	default:
	}
	<-f.stop
}

func (f *freezable) freeze() {
	f.mu.Lock()
	f.frozen = true
	f.mu.Unlock()
}

// TestHungMountLater serves a local mount and an S3 mount whose server
// stops answering after start-up: a call on the hung mount ends by the
// mount's timeout with an error, and a call on the other mount, made
// while the hung one waits, answers at once.
func TestHungMountLater(t *testing.T) {
	t.Parallel()
	srv := &freezable{next: testserver.NewS3("bucket", map[string]string{"ws/a.txt": "remote\n"}),
		arrived: make(chan struct{}, 1), stop: make(chan struct{})}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { close(srv.stop); hs.Close() })
	mount := "s3=s3://bucket/ws?endpoint=" + hs.URL + "&region=us-east-1&path_style=1&ro=1&timeout=1s"
	cs, stderr := stdioCmd(t, awsEnv, "--mount", "ws=local:"+cmdRoot(t), "--mount", mount)
	if text := callCmdOK(t, cs, "read_file", map[string]any{"path": "/s3/a.txt"}); !strings.Contains(text, "remote") {
		t.Fatalf("read before the hang: %q", text)
	}
	srv.freeze()
	checkHungMount(t, cs, stderr, srv.arrived, "/s3/a.txt")
}

// errAnswered marks a call on a hung mount that succeeded.
var errAnswered = errors.New("answered")

// checkHungMount calls file_info on path, on a mount whose server hangs,
// and once the request reached the server (arrived) reads /ws/a.txt: that
// read must answer at once, and the hung call end with an error by the
// mount's timeout.
func checkHungMount(t *testing.T, cs *mcp.ClientSession, stderr *logBuffer, arrived <-chan struct{}, path string) {
	t.Helper()
	hung := make(chan error, 1)
	start := time.Now()
	go func() {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "file_info", Arguments: map[string]any{"path": path}})
		if err == nil && !res.IsError {
			err = errAnswered
		}
		hung <- err
	}()
	select {
	case <-arrived:
	case <-time.After(cmdDeadline):
		t.Fatalf("the call on the hung mount never reached its server\nstderr:\n%s", stderr.String())
	}
	if text := callCmdOK(t, cs, "read_file", map[string]any{"path": "/ws/a.txt"}); !strings.Contains(text, "hello") {
		t.Errorf("read on the other mount while one hangs: %q", text)
	}
	select {
	case err := <-hung:
		if err == errAnswered {
			t.Fatalf("the call on the hung mount succeeded")
		}
		t.Logf("the call on the hung mount ended after %v: %v", time.Since(start).Round(time.Millisecond), err)
	case <-time.After(cmdDeadline):
		t.Fatalf("the call on the hung mount did not end within %v\nstderr:\n%s", cmdDeadline, stderr.String())
	}
}

// freezeProxy forwards TCP connections on 127.0.0.1 to target until
// frozen; from then on it forwards nothing more, in either direction,
// and holds new connections unanswered, as a server that hangs does.
// arrived is signalled when bytes arrive while frozen.
type freezeProxy struct {
	mu      sync.Mutex
	frozen  bool
	arrived chan struct{}
	stop    chan struct{}
}

func startFreezeProxy(t *testing.T, target string) (*freezeProxy, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &freezeProxy{arrived: make(chan struct{}, 1), stop: make(chan struct{})}
	var conns []net.Conn
	var connsMu sync.Mutex
	keep := func(c net.Conn) {
		connsMu.Lock()
		conns = append(conns, c)
		connsMu.Unlock()
	}
	t.Cleanup(func() {
		close(p.stop)
		ln.Close()
		connsMu.Lock()
		for _, c := range conns {
			c.Close()
		}
		connsMu.Unlock()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			keep(c)
			if p.isFrozen() {
				continue // held, never answered
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			keep(up)
			go p.pipe(up, c)
			go p.pipe(c, up)
		}
	}()
	return p, ln.Addr().String()
}

func (p *freezeProxy) isFrozen() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.frozen
}

func (p *freezeProxy) freeze() {
	p.mu.Lock()
	p.frozen = true
	p.mu.Unlock()
}

// pipe copies src to dst until frozen; bytes read afterwards are dropped
// and reported on arrived.
func (p *freezeProxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && p.isFrozen() {
			select {
			case p.arrived <- struct{}{}:
			default:
			}
			<-p.stop
			return
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// TestHungSFTPMountLater is TestHungMountLater over SFTP: the server stops
// answering after start-up, a call on it ends by the mount's timeout, and
// the local mount answers meanwhile.
func TestHungSFTPMountLater(t *testing.T) {
	t.Parallel()
	login := testserver.SFTPConfig{User: "agent", Password: "s3cret"}
	addr, hostKey := testserver.StartSFTP(t, login)
	proxy, proxyAddr := startFreezeProxy(t, addr)
	remote := t.TempDir()
	if err := os.WriteFile(filepath.Join(remote, "r.txt"), []byte("remote\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pin := base64.StdEncoding.EncodeToString(hostKey.Marshal())
	mount := "box=sftp://agent@" + proxyAddr + remote + "?password_env=FENCEFS_TEST_SFTP_PASSWORD&host_key=" + pin + "&timeout=1s"
	cs, stderr := stdioCmd(t, []string{"FENCEFS_TEST_SFTP_PASSWORD=s3cret"}, "--mount", "ws=local:"+cmdRoot(t), "--mount", mount)
	if text := callCmdOK(t, cs, "read_file", map[string]any{"path": "/box/r.txt"}); !strings.Contains(text, "remote") {
		t.Fatalf("read before the hang: %q", text)
	}
	proxy.freeze()
	checkHungMount(t, cs, stderr, proxy.arrived, "/box/r.txt")
}

// pendingWrite watches dir for the temporary file a write fills before it
// commits, and returns a channel closed when the first bytes are written
// to it: the commit, and its wait for the directory lock, come next.
func pendingWrite(t *testing.T, dir string) <-chan struct{} {
	t.Helper()
	seen := make(chan struct{})
	watchNames(t, dir, unix.IN_MODIFY, func(name string) bool {
		if strings.HasPrefix(name, ".fencefs-") {
			close(seen)
			return true
		}
		return false
	})
	return seen
}

// holdLock takes the lock a fencefs writer (in any process) takes on dir
// while it commits, until the test ends.
func holdLock(t *testing.T, dir string) {
	t.Helper()
	fd := lockDir(t, dir)
	t.Cleanup(func() { unix.Close(fd) })
}

// TestCallEndsOnSignal runs `fencefs call` with a write that waits for a
// directory lock held elsewhere and signals the process: it exits saying
// so, and the file is unchanged.
func TestCallEndsOnSignal(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			root := cmdRoot(t)
			holdLock(t, root)
			pending := pendingWrite(t, root)
			before := dirState(t, root)
			cmd := exec.Command(serveBinary.get(t), "call", "--root", root, "write_file", `{"path":"a.txt","content":"changed\n"}`)
			var stderr logBuffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case <-pending:
			case err := <-exited:
				t.Fatalf("the write ended (%v) while the lock was held\nstderr:\n%s", err, stderr.String())
			case <-time.After(cmdDeadline):
				cmd.Process.Kill()
				<-exited
				t.Fatalf("the write never started")
			}
			cmd.Process.Signal(sig)
			select {
			case <-exited:
			case <-time.After(cmdDeadline):
				cmd.Process.Kill()
				<-exited
				t.Fatalf("fencefs call did not exit within %v of %v", cmdDeadline, sig)
			}
			if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(stderr.String(), "stopped by a signal") {
				t.Errorf("exit %v, stderr %q; want exit 1 saying it was stopped", cmd.ProcessState, stderr.String())
			}
			wantDirState(t, root, before)
		})
	}
}

// TestServeCancelledCall calls write_file over MCP on a directory whose
// lock is held elsewhere and cancels the call from the client: the SDK
// client sends notifications/cancelled, the server's handler sees its
// context end, the write gives up, and the file is as before. A second
// server bounds every call with --call-timeout, and the model is told.
func TestServeCancelledCall(t *testing.T) {
	t.Parallel()
	root := cmdRoot(t)
	holdLock(t, root)
	before := dirState(t, root)
	cmd := exec.Command(serveBinary.get(t), "serve", "--root", root, "--log-level", "debug")
	stderrPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cancelled := make(chan string, 1)
	var stderr logBuffer
	go func() {
		sc := bufio.NewScanner(stderrPipe)
		for sc.Scan() {
			stderr.Write([]byte(sc.Text() + "\n"))
			if strings.Contains(sc.Text(), "tool call failed") && strings.Contains(sc.Text(), "context canceled") {
				select {
				case cancelled <- sc.Text():
				default:
				}
			}
		}
	}()
	ctx := t.Context()
	c := mcp.NewClient(&mcp.Implementation{Name: "security", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	pending := pendingWrite(t, root)
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "a.txt", "content": "changed\n"}})
		done <- err
	}()
	select {
	case <-pending:
	case err := <-done:
		t.Fatalf("the write ended (%v) while the lock was held", err)
	case <-time.After(cmdDeadline):
		t.Fatalf("the write never started\nstderr:\n%s", stderr.String())
	}
	cancel()
	<-done
	select {
	case line := <-cancelled:
		t.Logf("server: %s", line)
	case <-time.After(cmdDeadline):
		t.Fatalf("the server's handler did not end within %v of notifications/cancelled\nstderr:\n%s", cmdDeadline, stderr.String())
	}
	wantDirState(t, root, before)
	// The session goes on serving.
	callCmdOK(t, cs, "read_file", map[string]any{"path": "a.txt"})

	// --call-timeout ends the same write by itself, with a result the
	// model can act on.
	cs2, _ := stdioCmd(t, nil, "--root", root, "--call-timeout", "300ms")
	text, isError := callTenantTool(t, cs2, "write_file", map[string]any{"path": "a.txt", "content": "changed\n"})
	if !isError || !strings.Contains(text, "did not finish within 300ms") {
		t.Errorf("timed-out write: %q (isError %v)", text, isError)
	}
	wantDirState(t, root, before)
}
