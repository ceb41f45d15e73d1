package main

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"
)

// TestServeHTTPMaxSessions opens sessions up to --max-sessions: one more
// is refused with a 503 that says why, and ending a session (DELETE) or
// leaving one idle past --session-timeout frees its place.
func TestServeHTTPMaxSessions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	h := startHTTPServe(t, f, "--stateful", "--max-sessions", "2", "--session-timeout", "1s", "--log-level", "debug")
	connect := func() (*mcp.ClientSession, error) {
		return newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: h.url, MaxRetries: -1}, nil)
	}
	a, err := connect()
	if err != nil {
		t.Fatal(err)
	}
	b, err := connect()
	if err != nil {
		t.Fatalf("a second session: %v\nstderr:\n%s", err, h.stderr.String())
	}
	if c, err := connect(); err == nil || !strings.Contains(err.Error(), "Service Unavailable") {
		if c != nil {
			c.Close()
		}
		t.Fatalf("a third session: %v, want it refused with 503", err)
	}
	// What a client sees over plain HTTP.
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
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
	c, err := connect()
	if err != nil {
		t.Fatalf("a session after another ended: %v", err)
	}
	callOK(t, ctx, c, "read_file", map[string]any{"path": "a.txt"})
	// b and c go idle: the server closes both after a second.
	h.waitLog(t, "MCP session ended")
	h.waitLog(t, "MCP session ended")
	h.waitLog(t, "open_sessions=0")
	d, err := connect()
	if err != nil {
		t.Fatalf("a session after the others expired: %v", err)
	}
	defer d.Close()
	callOK(t, ctx, d, "read_file", map[string]any{"path": "a.txt"})
	if _, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "a.txt"}}); err == nil {
		t.Errorf("a call in an expired session succeeded")
	}
	b.Close()
	c.Close()
}

// slowClients is how many connections TestServeHTTPSlowClients holds
// open of each kind.
const slowClients = 150

// TestServeHTTPSlowClients holds a few hundred connections that send
// their request a byte at a time and stop (half in the headers, half in
// the body): a new client is served meanwhile, and the server drops every
// slow connection after --http-timeout.
func TestServeHTTPSlowClients(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	h := startHTTPServe(t, f, "--http-timeout", "1s")
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
	cs, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: h.url}, nil)
	if err != nil {
		t.Fatalf("a new client while %d connections stall: %v", len(conns), err)
	}
	defer cs.Close()
	callOK(t, ctx, cs, "read_file", map[string]any{"path": "a.txt"})
	t.Logf("a new client was served %v after %d stalled connections", time.Since(began).Round(time.Millisecond), len(conns))
	for i, c := range conns {
		c.SetReadDeadline(time.Now().Add(exitDeadline))
		_, err := io.Copy(io.Discard, c)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("stalled connection %d (of %d) still open %v after --http-timeout 1s", i, len(conns), exitDeadline)
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
	f := newFixture(t)
	ctx := t.Context()
	h := startHTTPServe(t, f, "--http-timeout", "1s")
	cs, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: h.url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	fd, err := unix.Open(f.root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Flock(fd, unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	// The lock is part of the scenario, not a synchronisation: the call
	// must outlive the timeout, whenever it started.
	const hold = 2500 * time.Millisecond
	time.AfterFunc(hold, func() { unix.Flock(fd, unix.LOCK_UN) })
	start := time.Now()
	text := callOK(t, ctx, cs, "write_file", map[string]any{"path": "a.txt", "content": "late\n"})
	if took := time.Since(start); took < hold/2 {
		t.Fatalf("the write took %v, less than the lock was held", took)
	}
	t.Logf("a call of %v over --http-timeout 1s: %q", time.Since(start).Round(time.Millisecond), firstLine(text))
	if got := readFile(t, filepath.Join(f.root, "a.txt")); got != "late\n" {
		t.Fatalf("a.txt holds %q", got)
	}
	callOK(t, ctx, cs, "read_file", map[string]any{"path": "a.txt"})
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
