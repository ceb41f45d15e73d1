// Command floor-bench compares the server CPU one read_file of a 4 KiB
// file costs `fencefs serve --http` (stateless, static tokens,
// `--tenant-mount ws=local:DIR/{tenant}`) and the Go SDK's floor server
// (mcp-bench floor: the same text prebuilt, no file, no auth), with the
// same SDK client from concurrent clients over the same transport.
//
// On a shared machine two runs one after the other measure the load as
// much as the servers, so every server runs at once and the load goes to
// one at a time in short slices, in turn, each server's CPU counted only
// in its own slices: a change of load falls on all of them alike. Several
// fencefs binaries can be compared in one run (a build of main beside a
// branch's).
//
//	floor-bench -floor MCPBENCH -fencefs [NAME=]BIN[,NAME=BIN...] [-clients 16] [-slices 30] [-slice 400ms]
//
// It prints each server's CPU per call, its ratio to the floor (the goal
// of issue 25: at most 1.2x) and the load average through the run. go
// test never runs it.
package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "floor-bench:", err)
		os.Exit(1)
	}
}

// readContent is the 4 KiB file read_file reads (scale-bench's r.txt).
var readContent = strings.Repeat("the quick brown fox jumps over the lazy dog, line of text\n", 80)[:4096]

func run(args []string, out io.Writer) error {
	fl := flag.NewFlagSet("floor-bench", flag.ContinueOnError)
	floor := fl.String("floor", "", "the mcp-bench binary whose floor server is the SDK's floor")
	bins := fl.String("fencefs", "", "fencefs binaries, comma-separated, each NAME=BIN or BIN")
	clients := fl.Int("clients", 16, "concurrent clients of each server")
	slices := fl.Int("slices", 30, "rounds; each gives every server one slice of load")
	slice := fl.Duration("slice", 400*time.Millisecond, "duration of one slice")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *floor == "" || *bins == "" {
		return errors.New("-floor and -fencefs are required")
	}
	work, err := os.MkdirTemp("", "floor-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	dir := filepath.Join(work, "tenants")
	if err := os.MkdirAll(filepath.Join(dir, "t0"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "t0", "r.txt"), []byte(readContent), 0o644); err != nil {
		return err
	}
	var raw [16]byte
	rand.Read(raw[:])
	token := hex.EncodeToString(raw[:])
	sum := sha256.Sum256([]byte(token))
	tokenFile := filepath.Join(work, "tokens.yaml")
	if err := os.WriteFile(tokenFile, []byte("tokens:\n  - {name: t0, sha256: "+hex.EncodeToString(sum[:])+", tenant: t0, scopes: [files:read, files:write]}\n"), 0o600); err != nil {
		return err
	}

	var servers []*server
	defer func() {
		for _, s := range servers {
			s.stop()
		}
	}()
	s, err := start("floor", *floor, []string{"floor", "-stateless", "-http"}, "", "r.txt", *clients)
	if err != nil {
		return err
	}
	servers = append(servers, s)
	for i, b := range strings.Split(*bins, ",") {
		name, bin, ok := strings.Cut(b, "=")
		if !ok {
			name, bin = "fencefs"+strconv.Itoa(i+1), b
		}
		s, err := start(name, bin, []string{"serve", "--auth", "tokens", "--token-file", tokenFile,
			"--tenant-mount", "ws=local:" + dir + "/{tenant}", "--http"}, token, "/ws/r.txt", *clients)
		if err != nil {
			return err
		}
		servers = append(servers, s)
	}
	for _, s := range servers {
		if _, err := s.drive(time.Second); err != nil { // warm up
			return err
		}
	}
	loads := []string{loadAvg()}
	for i := range *slices {
		for j := range servers {
			s := servers[(i+j)%len(servers)]
			cpu0 := s.cpu()
			n, err := s.drive(*slice)
			if err != nil {
				return err
			}
			s.used += s.cpu() - cpu0
			s.calls += n
		}
		if i%10 == 9 {
			loads = append(loads, loadAvg())
		}
	}
	floorCPU := servers[0].perCall()
	fmt.Fprintf(out, "%-12s %14s %10s %12s\n", "server", "CPU per call", "calls", "vs floor")
	for _, s := range servers {
		verdict := ""
		if s != servers[0] {
			verdict = "ok"
			if s.perCall() > 1.2*floorCPU {
				verdict = "MISSED (goal <= 1.2x)"
			}
		}
		fmt.Fprintf(out, "%-12s %11.0f µs %10d %11.3fx %s\n", s.name, s.perCall(), s.calls, s.perCall()/floorCPU, verdict)
	}
	fmt.Fprintln(out, "load average (1 min) through the run:", strings.Join(loads, " "))
	return nil
}

// server is a running server with its client sessions.
type server struct {
	name     string
	cmd      *exec.Cmd
	path     string // read_file's path argument
	sessions []*mcp.ClientSession
	used     time.Duration // CPU in its own slices
	calls    int
}

// start runs bin with args and a free loopback address, and connects
// clients SDK clients (with the bearer token, when not empty).
func start(name, bin string, args []string, token, path string, clients int) (*server, error) {
	addr, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, append(args, addr)...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{name: name, cmd: cmd, path: path}
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			break
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("%s did not listen on %s within 30 s", bin, addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var rt http.RoundTripper = &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: time.Minute}
	if token != "" {
		rt = bearer{token, rt}
	}
	for range clients {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "floor-bench", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", HTTPClient: &http.Client{Transport: rt}, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
		cancel()
		if err != nil {
			s.stop()
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		s.sessions = append(s.sessions, cs)
	}
	return s, nil
}

// drive makes read_file calls from every client for d and returns how
// many were made.
func (s *server) drive(d time.Duration) (int, error) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var total int
	var first error
	end := time.Now().Add(d)
	for _, cs := range s.sessions {
		wg.Go(func() {
			n := 0
			for time.Now().Before(end) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": s.path}})
				cancel()
				if err == nil && res.IsError {
					err = fmt.Errorf("%s: read_file refused: %v", s.name, res.Content)
				}
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
				n++
			}
			mu.Lock()
			total += n
			mu.Unlock()
		})
	}
	wg.Wait()
	return total, first
}

func (s *server) perCall() float64 {
	if s.calls == 0 {
		return 0
	}
	return float64(s.used.Microseconds()) / float64(s.calls)
}

func (s *server) stop() {
	for _, cs := range s.sessions {
		cs.Close()
	}
	s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}

// cpu returns the server's user and system CPU time so far.
func (s *server) cpu() time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

// bearer adds a token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(data))[0]
}
