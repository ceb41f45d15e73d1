package security

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"
)

// The tests of this file and of deadline_cmd_test.go attack the built
// command (serveBinary) as hostile HTTP clients and unresponsive storage
// servers would. cmdDeadline bounds every wait for the process: a
// deadline against hangs, not a measure of speed.
const cmdDeadline = 10 * time.Second

// cmdRoot makes a root directory holding a.txt ("hello\nworld\n").
func cmdRoot(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello\nworld\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// dirState records every path below dir with its content ("/" for a
// directory), to show that nothing changed.
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			out[p] = "/"
			return nil
		}
		data, err := os.ReadFile(p)
		out[p] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// wantDirState fails unless dir is as before.
func wantDirState(t *testing.T, dir string, before map[string]string) {
	t.Helper()
	after := dirState(t, dir)
	for p, v := range before {
		if after[p] != v {
			t.Errorf("%s changed: %q", p, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s appeared", p)
		}
	}
}

// logBuffer collects a process's stderr for the test and its reader
// goroutine alike.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startHTTPCmd starts `fencefs serve --http 127.0.0.1:0 --root root` with
// args and debug logging, and waits for its endpoint; the process is
// killed when the test ends.
func startHTTPCmd(t *testing.T, root string, args ...string) *tenantServe {
	t.Helper()
	return startTenantServe(t, append([]string{"serve", "--http", "127.0.0.1:0", "--root", root, "--log-level", "debug"}, args...)...)
}

// connect opens an MCP session to the server (closed when the test ends).
func (h *tenantServe) connect(t *testing.T) (*mcp.ClientSession, error) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "security", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: h.url, MaxRetries: -1}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// callCmdOK calls tool and fails the test unless it succeeds.
func callCmdOK(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	text, isError := callTenantTool(t, cs, tool, args)
	if isError {
		t.Fatalf("%s %v failed: %s", tool, args, text)
	}
	return text
}

// TestServeHTTPMaxSessions opens sessions up to --max-sessions: one more
// is refused with a 503 that says why, and ending a session (DELETE) or
// leaving one idle past --session-timeout frees its place, so abandoned
// sessions cannot pile up.
func TestServeHTTPMaxSessions(t *testing.T) {
	t.Parallel()
	h := startHTTPCmd(t, cmdRoot(t), "--stateful", "--max-sessions", "2", "--session-timeout", "1s")
	a, err := h.connect(t)
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.connect(t)
	if err != nil {
		t.Fatalf("a second session: %v\nstderr:\n%s", err, h.log())
	}
	if _, err := h.connect(t); err == nil || !strings.Contains(err.Error(), "Service Unavailable") {
		t.Fatalf("a third session: %v, want it refused with 503", err)
	}
	// What a client sees over plain HTTP.
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, h.url, strings.NewReader(initializeBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "too many open MCP sessions (--max-sessions 2)") || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a third session over HTTP: %s %q", resp.Status, body)
	}
	// Ending a session frees its place at once.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := h.connect(t)
	if err != nil {
		t.Fatalf("a session after another ended: %v", err)
	}
	callCmdOK(t, c, "read_file", map[string]any{"path": "a.txt"})
	// b and c go idle: the server closes both after a second.
	h.waitLogWithin(t, "MCP session ended", cmdDeadline)
	h.waitLogWithin(t, "MCP session ended", cmdDeadline)
	h.waitLogWithin(t, "open_sessions=0", cmdDeadline)
	d, err := h.connect(t)
	if err != nil {
		t.Fatalf("a session after the others expired: %v", err)
	}
	callCmdOK(t, d, "read_file", map[string]any{"path": "a.txt"})
	if _, err := b.CallTool(t.Context(), &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "a.txt"}}); err == nil {
		t.Errorf("a call in an expired session succeeded")
	}
}

// slowClients is how many connections TestServeHTTPSlowClients holds
// open of each kind.
const slowClients = 150

// TestServeHTTPSlowClients holds a few hundred connections that send
// part of their request and stop (half in the headers, half in the body):
// a new client is served meanwhile, and the server drops every slow
// connection after --http-timeout.
func TestServeHTTPSlowClients(t *testing.T) {
	t.Parallel()
	h := startHTTPCmd(t, cmdRoot(t), "--http-timeout", "1s")
	u, err := url.Parse(h.url)
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for i := range 2 * slowClients {
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		start := "POST /mcp HTTP/1.1\r\nHost: " + u.Host + "\r\nContent-Type: application/json\r\n"
		if i%2 == 1 {
			// Complete headers, then a body that stops after a few bytes.
			start += "Accept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{\"jsonrpc\""
		}
		if _, err := io.WriteString(c, start); err != nil {
			t.Fatal(err)
		}
	}
	began := time.Now()
	cs, err := h.connect(t)
	if err != nil {
		t.Fatalf("a new client while %d connections stall: %v", len(conns), err)
	}
	callCmdOK(t, cs, "read_file", map[string]any{"path": "a.txt"})
	t.Logf("a new client was served %v after %d stalled connections", time.Since(began).Round(time.Millisecond), len(conns))
	for i, c := range conns {
		c.SetReadDeadline(time.Now().Add(cmdDeadline))
		_, err := io.Copy(io.Discard, c)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("stalled connection %d (of %d) still open %v after --http-timeout 1s", i, len(conns), cmdDeadline)
		}
	}
	t.Logf("all %d stalled connections were dropped within %v", len(conns), time.Since(began).Round(time.Millisecond))
}

// TestServeHTTPLongCall makes a call last longer than --http-timeout (a
// write waits for a lock the test releases later) and leaves the
// session's event stream idle as long: both live, since the timeout bounds
// a request's arrival and each write, not a request's life.
func TestServeHTTPLongCall(t *testing.T) {
	t.Parallel()
	root := cmdRoot(t)
	h := startHTTPCmd(t, root, "--http-timeout", "1s")
	cs, err := h.connect(t)
	if err != nil {
		t.Fatal(err)
	}
	fd := lockDir(t, root)
	defer unix.Close(fd)
	// The lock is part of the scenario, not a synchronisation: the call
	// must outlive the timeout, whenever it started.
	const hold = 2500 * time.Millisecond
	time.AfterFunc(hold, func() { unix.Flock(fd, unix.LOCK_UN) })
	start := time.Now()
	text := callCmdOK(t, cs, "write_file", map[string]any{"path": "a.txt", "content": "late\n"})
	if took := time.Since(start); took < hold/2 {
		t.Fatalf("the write took %v, less than the lock was held", took)
	}
	t.Logf("a call of %v over --http-timeout 1s: %q", time.Since(start).Round(time.Millisecond), firstLine(text))
	if data, err := os.ReadFile(filepath.Join(root, "a.txt")); err != nil || string(data) != "late\n" {
		t.Fatalf("a.txt holds %q, %v", data, err)
	}
	callCmdOK(t, cs, "read_file", map[string]any{"path": "a.txt"})
}
