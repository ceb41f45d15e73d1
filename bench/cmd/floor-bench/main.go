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
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/bench/internal/servebench"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "floor-bench:", err)
		os.Exit(1)
	}
}

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
	if err := os.WriteFile(filepath.Join(dir, "t0", "r.txt"), []byte(servebench.ReadContent), 0o644); err != nil {
		return err
	}
	token := servebench.NewToken()
	tokenFile := filepath.Join(work, "tokens.yaml")
	if err := os.WriteFile(tokenFile, []byte("tokens:\n"+servebench.TokenLine("t0", token)), 0o600); err != nil {
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
	loads := []string{servebench.LoadAvg()}
	for i := range *slices {
		for j := range servers {
			s := servers[(i+j)%len(servers)]
			cpu0 := s.CPU()
			n, err := s.drive(*slice)
			if err != nil {
				return err
			}
			s.used += s.CPU() - cpu0
			s.calls += n
		}
		if i%10 == 9 {
			loads = append(loads, servebench.LoadAvg())
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
	*servebench.Process
	name     string
	path     string // read_file's path argument
	sessions []*mcp.ClientSession
	used     time.Duration // CPU in its own slices
	calls    int
}

// start runs bin with args and a free loopback address, and connects
// clients SDK clients (with the bearer token, when not empty).
func start(name, bin string, args []string, token, path string, clients int) (*server, error) {
	p, err := servebench.Start(bin, args, nil, nil, 30*time.Second)
	if err != nil {
		return nil, err
	}
	s := &server{Process: p, name: name, path: path}
	rt := &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: time.Minute}
	for range clients {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cs, err := servebench.Connect(ctx, "floor-bench", p.URL(), token, rt)
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
	s.Stop()
}
