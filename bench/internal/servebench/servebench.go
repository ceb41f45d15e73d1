// Package servebench holds what the benchmarks of a served fencefs share:
// starting a server process on a loopback address and stopping it,
// reading its CPU time from /proc, connecting SDK clients with a bearer
// token, the tenants' token lines and the files they read and edit.
package servebench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tenant"
)

// ReadContent is the 4 KiB file read_file reads.
var ReadContent = strings.Repeat("the quick brown fox jumps over the lazy dog, line of text\n", 80)[:4096]

// EditContent returns the file edit_file edits: 80 lines, "line N x",
// whose line 40 the benchmarks toggle.
func EditContent() string {
	var b strings.Builder
	for i := 1; i <= 80; i++ {
		fmt.Fprintf(&b, "line %d x\n", i)
	}
	return b.String()
}

// NewToken returns a random bearer token.
func NewToken() string {
	var raw [16]byte
	rand.Read(raw[:])
	return hex.EncodeToString(raw[:])
}

// TokenLine returns the token file's entry of token, named and scoped to
// tenant, with files:read and files:write.
func TokenLine(tenantID, token string) string {
	return fmt.Sprintf("  - {name: %s, sha256: %s, tenant: %s, scopes: [files:read, files:write]}\n", tenantID, tenant.HashToken(token), tenantID)
}

// Build compiles pkg into dir and returns the binary's path.
func Build(dir, pkg string) (string, error) {
	bin := filepath.Join(dir, filepath.Base(pkg))
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %w\n%s", pkg, err, out)
	}
	return bin, nil
}

// FreeAddr returns a loopback address no listener holds now.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Process is a server process listening on a loopback address.
type Process struct {
	Cmd  *exec.Cmd
	Addr string
}

// Start runs bin with args and a free loopback address as its last
// argument, env added to its environment, and waits at most wait for the
// address to accept connections. Its standard output is discarded, and
// its standard error too unless stderr is given, which then reads it.
func Start(bin string, args, env []string, stderr func(io.Reader), wait time.Duration) (*Process, error) {
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, append(append([]string(nil), args...), addr)...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout = io.Discard
	var errPipe io.Reader
	if stderr != nil {
		if errPipe, err = cmd.StderrPipe(); err != nil {
			return nil, err
		}
	} else {
		cmd.Stderr = io.Discard
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	if stderr != nil {
		go stderr(errPipe)
	}
	p := &Process{Cmd: cmd, Addr: addr}
	deadline := time.Now().Add(wait)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return p, nil
		}
		if time.Now().After(deadline) {
			p.Stop()
			return nil, fmt.Errorf("%s did not listen on %s within %v", bin, addr, wait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// URL is the process's MCP endpoint.
func (p *Process) URL() string { return "http://" + p.Addr + "/mcp" }

// CPU returns the process's user and system CPU time so far.
func (p *Process) CPU() time.Duration { return CPU(p.Cmd.Process.Pid) }

// Stop interrupts the process and kills it when it has not ended 10 s
// later.
func (p *Process) Stop() {
	p.Cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { p.Cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		p.Cmd.Process.Kill()
		<-done
	}
}

// CPU returns the user and system CPU time of process pid so far, or 0
// when /proc does not say.
func CPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses; utime and
	// stime are fields 14 and 15 of the whole line.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 > len(data) {
		return 0
	}
	f := strings.Fields(string(data[i+2:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

// LoadAvg returns the one-minute load average, or "?".
func LoadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	if f := strings.Fields(string(data)); len(f) > 0 {
		return f[0]
	}
	return "?"
}

// Bearer adds a token to every request it sends through Next.
type Bearer struct {
	Token string
	Next  http.RoundTripper
}

// RoundTrip sends r with the Authorization header.
func (b Bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.Token)
	return b.Next.RoundTrip(r)
}

// Connect opens an SDK client session, named client, to the streamable
// HTTP endpoint url through rt, with the bearer token unless it is
// empty; the client neither retries nor opens the standalone SSE stream.
func Connect(ctx context.Context, client, url, token string, rt http.RoundTripper) (*mcp.ClientSession, error) {
	if token != "" {
		rt = Bearer{token, rt}
	}
	return mcp.NewClient(&mcp.Implementation{Name: client, Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rt}, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
}
