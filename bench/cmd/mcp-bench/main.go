// Command mcp-bench measures the cost of one MCP tool call, side by side:
// `fencefs serve`, the Node reference server
// (@modelcontextprotocol/server-filesystem) and a minimal server on the
// same Go SDK whose tools return fencefs's texts with no work (the SDK's
// floor). One raw client writes pre-encoded JSON-RPC lines (stdio) or
// POST bodies (streamable HTTP) and reads the answers, so the client's
// own cost is the same for every server. It prints per-op median round
// trips and the server's CPU time per call, the tool's own cost in
// process, and whether fencefs stays within the floor plus that cost
// plus 20%. scripts/mcp-bench.sh builds and runs it.
//
//	mcp-bench -fencefs BIN [-node SERVER.js] [-n 500]   run the comparison
//	mcp-bench floor [-http ADDR [-stateless]]           the floor server (stdio by default)
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/bench/internal/servebench"
	"github.com/fencefs/fencefs/internal/gctune"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/tools"
)

func main() {
	var err error
	if len(os.Args) > 1 && os.Args[1] == "floor" {
		err = floor(os.Args[2:])
	} else {
		err = compare(os.Args[1:], os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcp-bench:", err)
		os.Exit(1)
	}
}

// op is one measured call, with the argument sets alternated between
// rounds (an edit and its undo).
type op struct {
	name string
	// tool and args per server kind.
	tool map[string]string
	args []map[string]any
	node []map[string]any
}

func ops(dir string) []op {
	p := func(name string) string { return filepath.Join(dir, name) }
	return []op{
		{name: "read_file 4 KiB", tool: map[string]string{"fencefs": "read_file", "node": "read_text_file"},
			args: []map[string]any{{"path": "r.txt"}}, node: []map[string]any{{"path": p("r.txt")}}},
		{name: "list_directory", tool: map[string]string{"fencefs": "list_directory", "node": "list_directory"},
			args: []map[string]any{{"path": "d"}}, node: []map[string]any{{"path": p("d")}}},
		{name: "file_info", tool: map[string]string{"fencefs": "file_info", "node": "get_file_info"},
			args: []map[string]any{{"path": "r.txt"}}, node: []map[string]any{{"path": p("r.txt")}}},
		{name: "write_file", tool: map[string]string{"fencefs": "write_file", "node": "write_file"},
			args: []map[string]any{{"path": "w.txt", "content": lines(80, "a")}, {"path": "w.txt", "content": lines(80, "b")}},
			node: []map[string]any{{"path": p("w.txt"), "content": lines(80, "a")}, {"path": p("w.txt"), "content": lines(80, "b")}}},
		{name: "edit_file", tool: map[string]string{"fencefs": "edit_file", "node": "edit_file"},
			args: []map[string]any{{"path": "e.txt", "old_text": "line 40 x", "new_text": "line 40 y"}, {"path": "e.txt", "old_text": "line 40 y", "new_text": "line 40 x"}},
			node: []map[string]any{{"path": p("e.txt"), "edits": []map[string]any{{"oldText": "line 40 x", "newText": "line 40 y"}}},
				{"path": p("e.txt"), "edits": []map[string]any{{"oldText": "line 40 y", "newText": "line 40 x"}}}}},
	}
}

func lines(n int, tag string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "line %d %s of the file, long enough to look like code\n", i, tag)
	}
	return b.String()
}

// setup writes the files the ops use.
func setup(dir string) error {
	files := map[string]string{"r.txt": strings.Repeat("0123456789abcde\n", 256), "w.txt": "", "e.txt": lines(80, "x")}
	for i := range 40 {
		files[fmt.Sprintf("d/f%02d.go", i)] = "package d\n"
	}
	for name, data := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// server is one server under test.
type server struct {
	label, kind, transport string
	cmd                    *exec.Cmd
	rt                     roundTripper
}

type roundTripper interface {
	roundTrip(msg []byte) ([]byte, error)
	close()
}

func compare(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("mcp-bench", flag.ContinueOnError)
	fencefs := fs.String("fencefs", "", "the fencefs binary")
	node := fs.String("node", "", "the Node reference server's entry script (dist/index.js); empty skips it")
	n := fs.Int("n", 500, "calls per op and server")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *fencefs == "" {
		return errors.New("-fencefs is required")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "mcp-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := setup(dir); err != nil {
		return err
	}
	specs := []struct {
		label, kind, transport string
		argv                   []string
	}{
		{"fencefs", "fencefs", "stdio", []string{*fencefs, "serve", "--root", dir}},
		{"SDK floor", "fencefs", "stdio", []string{self, "floor"}},
		{"fencefs", "fencefs", "http", []string{*fencefs, "serve", "--root", dir, "--http"}},
		{"SDK floor", "fencefs", "http", []string{self, "floor", "-http"}},
	}
	if *node != "" {
		specs = slices.Insert(specs, 1, struct {
			label, kind, transport string
			argv                   []string
		}{"Node reference", "node", "stdio", []string{"node", *node, dir}})
	} else {
		fmt.Fprintln(os.Stderr, "mcp-bench: WARNING: no -node server; the Node reference column is skipped")
	}
	all := ops(dir)
	// The tools' own cost, in this process over the same files, before
	// any server touches them: the "tool" of the goal below.
	inProc, err := toolCosts(dir, all, *n)
	if err != nil {
		return err
	}
	type cell struct{ median, cpu time.Duration }
	results := map[string]map[string]cell{} // column -> op -> cell
	var columns []string
	for _, spec := range specs {
		s, err := start(spec.label, spec.kind, spec.transport, spec.argv)
		if err != nil {
			return fmt.Errorf("%s (%s): %w", spec.label, spec.transport, err)
		}
		col := spec.label + " " + spec.transport
		columns = append(columns, col)
		results[col] = map[string]cell{}
		for _, o := range all {
			msgs := encode(s.kind, o)
			// Warm up, then measure.
			for i := range 50 {
				if _, err := s.rt.roundTrip(msgs[i%len(msgs)]); err != nil {
					s.stop()
					return fmt.Errorf("%s %s: %w", col, o.name, err)
				}
			}
			times := make([]time.Duration, *n)
			cpu0 := servebench.CPU(s.cmd.Process.Pid)
			for i := range *n {
				t0 := time.Now()
				resp, err := s.rt.roundTrip(msgs[i%len(msgs)])
				times[i] = time.Since(t0)
				if err != nil {
					s.stop()
					return fmt.Errorf("%s %s: %w", col, o.name, err)
				}
				if i == 0 && bytes.Contains(resp, []byte(`"isError":true`)) {
					s.stop()
					return fmt.Errorf("%s %s: the tool failed: %s", col, o.name, resp)
				}
			}
			cpu := (servebench.CPU(s.cmd.Process.Pid) - cpu0) / time.Duration(*n)
			slices.Sort(times)
			results[col][o.name] = cell{times[len(times)/2], cpu}
		}
		s.stop()
	}
	fmt.Fprintf(out, "median round trip / server CPU per call, µs (n=%d per cell); tool: the call in process, median µs;\n", *n)
	fmt.Fprintf(out, "goal: fencefs's round trip at most (SDK floor + tool) x 1.2, per transport\n\n")
	fmt.Fprintf(out, "| op |")
	for _, c := range columns {
		fmt.Fprintf(out, " %s |", c)
	}
	fmt.Fprintf(out, " tool | goal stdio | goal http |")
	fmt.Fprintf(out, "\n|---|%s\n", strings.Repeat("---|", len(columns)+3))
	for _, o := range all {
		fmt.Fprintf(out, "| %s |", o.name)
		for _, c := range columns {
			r := results[c][o.name]
			fmt.Fprintf(out, " %d / %d |", r.median.Microseconds(), r.cpu.Microseconds())
		}
		tool := inProc[o.name]
		fmt.Fprintf(out, " %d |", tool.Microseconds())
		for _, tr := range []string{"stdio", "http"} {
			got, floor := results["fencefs "+tr][o.name].median, results["SDK floor "+tr][o.name].median
			fmt.Fprintf(out, " %s |", goalCell(got, floor, tool))
		}
		fmt.Fprintln(out)
	}
	return nil
}

// goalCell judges a round trip against the floor plus the tool's own
// cost plus 20%: "met (180 <= 204)" or "NOT met (...)".
func goalCell(got, floor, tool time.Duration) string {
	limit := (floor + tool) * 6 / 5
	verdict := "met"
	if got > limit {
		verdict = "NOT met"
	}
	return fmt.Sprintf("%s (%d <= %d)", verdict, got.Microseconds(), limit.Microseconds())
}

// toolCosts times each op's fencefs tool called in this process over dir
// (the tool's own cost, without MCP): the median of n calls after a
// warm-up, the argument sets alternated as the servers get them.
func toolCosts(dir string, all []op, n int) (map[string]time.Duration, error) {
	b, err := local.New(dir)
	if err != nil {
		return nil, err
	}
	set, err := tools.New(b, tools.Options{})
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	costs := map[string]time.Duration{}
	for _, o := range all {
		var raws [][]byte
		for _, a := range o.args {
			raw, _ := json.Marshal(a)
			raws = append(raws, raw)
		}
		times := make([]time.Duration, n)
		for i := -50; i < n; i++ {
			raw := raws[(i+50)%len(raws)]
			t0 := time.Now()
			if _, err := set.Call(ctx, o.tool["fencefs"], raw); err != nil {
				return nil, fmt.Errorf("%s in process: %w", o.name, err)
			}
			if i >= 0 {
				times[i] = time.Since(t0)
			}
		}
		slices.Sort(times)
		costs[o.name] = times[n/2]
	}
	return costs, nil
}

// encode pre-encodes an op's tools/call messages for a server kind.
func encode(kind string, o op) [][]byte {
	args := o.args
	if kind == "node" {
		args = o.node
	}
	var msgs [][]byte
	for i, a := range args {
		m, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i + 10, "method": "tools/call",
			"params": map[string]any{"name": o.tool[kind], "arguments": a}})
		msgs = append(msgs, m)
	}
	return msgs
}

// The handshake every server gets; the version is one every server
// speaks with plain request and answer.
var (
	initialize  = []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"mcp-bench","version":"1"}}}`)
	initialized = []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
)

func start(label, kind, transport string, argv []string) (*server, error) {
	s := &server{label: label, kind: kind, transport: transport}
	if transport == "http" {
		addr, err := servebench.FreeAddr()
		if err != nil {
			return nil, err
		}
		argv = append(argv, addr)
		s.cmd = exec.Command(argv[0], argv[1:]...)
		s.cmd.Stderr = io.Discard
		if err := s.cmd.Start(); err != nil {
			return nil, err
		}
		h := &httpRT{url: "http://" + addr + "/mcp", client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}}
		s.rt = h
		deadline := time.Now().Add(10 * time.Second)
		for {
			if _, err := h.post(initialize); err == nil {
				break
			} else if time.Now().After(deadline) {
				s.stop()
				return nil, fmt.Errorf("no answer to initialize: %w", err)
			}
			time.Sleep(20 * time.Millisecond) // waiting for the process to listen
		}
		if _, err := h.post(initialized); err != nil {
			s.stop()
			return nil, err
		}
		return s, nil
	}
	s.cmd = exec.Command(argv[0], argv[1:]...)
	s.cmd.Stderr = io.Discard
	in, err := s.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	outp, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	p := &pipeRT{in: in, out: bufio.NewReaderSize(outp, 1<<20)}
	s.rt = p
	if _, err := p.roundTrip(initialize); err != nil {
		s.stop()
		return nil, err
	}
	if _, err := in.Write(append(initialized, '\n')); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

func (s *server) stop() {
	s.rt.close()
	s.cmd.Process.Kill()
	s.cmd.Wait()
}

// pipeRT writes one line and reads one answer line, skipping
// notifications.
type pipeRT struct {
	in  io.WriteCloser
	out *bufio.Reader
}

func (p *pipeRT) roundTrip(msg []byte) ([]byte, error) {
	if _, err := p.in.Write(append(msg, '\n')); err != nil {
		return nil, err
	}
	for {
		line, err := p.out.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		if bytes.Contains(line, []byte(`"id":`)) {
			return line, nil
		}
	}
}

func (p *pipeRT) close() { p.in.Close() }

// httpRT posts each message in the session initialize opened.
type httpRT struct {
	url, session string
	client       *http.Client
}

func (h *httpRT) post(msg []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, h.url, bytes.NewReader(msg))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if h.session != "" {
		req.Header.Set("Mcp-Session-Id", h.session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("HTTP %s: %s", resp.Status, body)
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		h.session = id
	}
	return body, nil
}

func (h *httpRT) roundTrip(msg []byte) ([]byte, error) { return h.post(msg) }
func (h *httpRT) close()                               { h.client.CloseIdleConnections() }

// floor serves the minimal SDK server: the five tools, raw, each
// answering fencefs's text for the op with no work.
func floor(args []string) error {
	fs := flag.NewFlagSet("floor", flag.ContinueOnError)
	addr := fs.String("http", "", "serve streamable HTTP on ADDR instead of stdio")
	stateless := fs.Bool("stateless", false, "with -http, answer each request on its own, as fencefs serve does by default")
	if err := fs.Parse(args); err != nil {
		return err
	}
	// The collector fencefs serve sets for itself (GOGC unset), so that
	// the floor differs from it by the work alone.
	gctune.Tune(os.Getenv, gctune.GCPercent, gctune.MinHeap)
	server := mcp.NewServer(&mcp.Implementation{Name: "floor"}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{}})
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"additionalProperties":true}`)
	for tool, text := range floorTexts() {
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
		server.AddTool(&mcp.Tool{Name: tool, InputSchema: schema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return res, nil
		})
	}
	if *addr == "" {
		return server.Run(context.Background(), &mcp.StdioTransport{})
	}
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: *stateless})
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	return http.ListenAndServe(*addr, mux)
}

// floorTexts returns the text fencefs answers for each op, made by the
// tools over the same files, so the floor's answers are as large.
func floorTexts() map[string]string {
	dir, err := os.MkdirTemp("", "mcp-bench-floor-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	if err := setup(dir); err != nil {
		panic(err)
	}
	b, err := local.New(dir)
	if err != nil {
		panic(err)
	}
	set, err := tools.New(b, tools.Options{})
	if err != nil {
		panic(err)
	}
	texts := map[string]string{}
	for _, o := range ops(dir) {
		raw, _ := json.Marshal(o.args[0])
		text, err := set.Call(context.Background(), o.tool["fencefs"], raw)
		if err != nil {
			panic(fmt.Sprintf("%s: %v", o.name, err))
		}
		texts[o.tool["fencefs"]] = text
	}
	return texts
}
