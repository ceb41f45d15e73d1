//go:build !fencefs_oneshot

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tools"
)

// binary is the fencefs executable under test, built once by TestMain.
var binary string

// exitDeadline bounds how long the server may take to exit once asked to;
// it is a deadline against hangs, not a measure of speed.
const exitDeadline = 10 * time.Second

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fencefs-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "fencefs")
	args := []string{"build", "-o", binary}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, ".")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building fencefs:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	// A race-enabled binary sleeps a second at exit unless told not to;
	// the tests run it dozens of times.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fixture is a root directory with a few files and, beside it, a
// directory the tools must never touch.
type fixture struct {
	root, outside string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	base := t.TempDir()
	f := fixture{root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside")}
	writeFile(t, filepath.Join(f.root, "a.txt"), "hello\nworld\n")
	writeFile(t, filepath.Join(f.root, "sub", "b.go"), "package sub\n")
	writeFile(t, filepath.Join(f.outside, "secret.txt"), "secret\n")
	return f
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// snapshot records every path below dir with its content ("/" for
// directories), to show that nothing changed.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
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

// toolCall is one call and a text its result must contain.
type toolCall struct {
	tool string
	args map[string]any
	want string
}

// exerciseSession drives a connected MCP session over f.root with all ten
// tools configured: the listing, one successful call of every tool, refusals
// outside the root, and argument errors.
func exerciseSession(t *testing.T, ctx context.Context, cs *mcp.ClientSession, f fixture) {
	t.Helper()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		schema, ok := tool.InputSchema.(map[string]any)
		if !ok || schema["type"] != "object" || schema["additionalProperties"] != false {
			t.Errorf("%s: input schema %v is not a closed object schema", tool.Name, tool.InputSchema)
		}
		if tool.Description == "" || tool.Annotations == nil {
			t.Errorf("%s: missing description or annotations", tool.Name)
			continue
		}
		if want := slices.Contains(tools.ReadOnlyTools(), tool.Name); tool.Annotations.ReadOnlyHint != want {
			t.Errorf("%s: readOnlyHint %v, want %v", tool.Name, tool.Annotations.ReadOnlyHint, want)
		}
	}
	// The SDK lists tools sorted by name.
	if want := slices.Sorted(slices.Values(tools.AllTools())); !slices.Equal(names, want) {
		t.Fatalf("tools/list names %q, want %q", names, want)
	}

	calls := []toolCall{
		{"read_file", map[string]any{"path": "a.txt"}, "     1\thello\n"},
		{"write_file", map[string]any{"path": "new.txt", "content": "one\ntwo\n"}, "Wrote 8 chars (2 lines) to new.txt."},
		{"edit_file", map[string]any{"path": "new.txt", "old_text": "two", "new_text": "three"}, "Edited new.txt (line 2)."},
		{"list_directory", map[string]any{"path": "."}, "a.txt  (12 bytes)"},
		{"search_files", map[string]any{"pattern": "hel+o"}, "a.txt:1:hello"},
		{"find_files", map[string]any{"pattern": "**/*.go"}, "sub/b.go"},
		{"create_directory", map[string]any{"path": "made/deep"}, "Created directory: made/deep"},
		{"file_info", map[string]any{"path": "a.txt"}, "type: file"},
		{"list_files", map[string]any{}, "sub/b.go"},
		{"grep", map[string]any{"pattern": "package"}, "sub/b.go:1:package sub"},
		{"apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Add File: p.txt\n+p\n*** End Patch\n"}, "A p.txt (1 line)"},
		{"copy_file", map[string]any{"source": "new.txt", "destination": "copy.txt"}, "Copied new.txt to copy.txt."},
		{"move_file", map[string]any{"source": "copy.txt", "destination": "made/moved.txt"}, "Moved copy.txt to made/moved.txt."},
		{"delete_file", map[string]any{"path": "made/moved.txt"}, "Deleted file: made/moved.txt"},
	}
	called := map[string]bool{}
	for _, c := range calls {
		called[c.tool] = true
		if text := callOK(t, ctx, cs, c.tool, c.args); !strings.Contains(text, c.want) {
			t.Errorf("%s(%v) = %q, want it to contain %q", c.tool, c.args, text, c.want)
		}
	}
	if got := slices.Sorted(maps.Keys(called)); !slices.Equal(got, slices.Sorted(slices.Values(tools.AllTools()))) {
		t.Fatalf("called %q, want every tool", got)
	}
	if got := readFile(t, filepath.Join(f.root, "new.txt")); got != "one\nthree\n" {
		t.Errorf("new.txt holds %q after the edit", got)
	}
	if fi, err := os.Stat(filepath.Join(f.root, "made", "deep")); err != nil || !fi.IsDir() {
		t.Errorf("create_directory did not create made/deep: %v", err)
	}

	before := snapshot(t, f.outside)
	outside := []toolCall{
		{"write_file", map[string]any{"path": "../outside/evil.txt", "content": "x"}, "resolves outside the root directory"},
		{"write_file", map[string]any{"path": filepath.Join(f.outside, "evil.txt"), "content": "x"}, "resolves outside the root directory"},
		{"edit_file", map[string]any{"path": "../outside/secret.txt", "old_text": "secret", "new_text": "x"}, "resolves outside the root directory"},
		{"create_directory", map[string]any{"path": "../outside/newdir"}, "resolves outside the root directory"},
		{"read_file", map[string]any{"path": "../outside/secret.txt"}, "resolves outside the root directory"},
	}
	for _, c := range outside {
		if text := callRefused(t, ctx, cs, c.tool, c.args); !strings.Contains(text, c.want) {
			t.Errorf("%s(%v) = %q, want it to contain %q", c.tool, c.args, text, c.want)
		}
	}
	if after := snapshot(t, f.outside); !maps.Equal(before, after) {
		t.Errorf("the directory outside the root changed:\nbefore %q\nafter  %q", before, after)
	}

	invalid := []toolCall{
		{"read_file", map[string]any{}, "Missing required argument 'path'."},
		{"read_file", map[string]any{"path": "a.txt", "bogus": true}, "Unknown argument 'bogus'."},
		{"write_file", map[string]any{"path": "a.txt"}, "Missing required argument 'content'."},
		{"read_file", map[string]any{"path": 7}, "'path'"},
	}
	for _, c := range invalid {
		if text := callRefused(t, ctx, cs, c.tool, c.args); !strings.Contains(text, c.want) {
			t.Errorf("%s(%v) = %q, want it to contain %q", c.tool, c.args, text, c.want)
		}
	}
}

// callTool calls a tool and returns its text and isError.
func callTool(t *testing.T, ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): %v", tool, args, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s(%v): %d content items, want 1", tool, args, len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("%s(%v): content %T, want text", tool, args, res.Content[0])
	}
	return text.Text, res.IsError
}

func callOK(t *testing.T, ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	text, isError := callTool(t, ctx, cs, tool, args)
	if isError {
		t.Fatalf("%s(%v) failed: %s", tool, args, text)
	}
	return text
}

func callRefused(t *testing.T, ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	text, isError := callTool(t, ctx, cs, tool, args)
	if !isError {
		t.Errorf("%s(%v) succeeded with %q, want isError", tool, args, text)
	}
	return text
}

// syncBuffer is a bytes.Buffer safe for a process's output goroutine and
// the test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func allTools() string { return strings.Join(tools.AllTools(), ",") }

func newClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "fencefs-e2e", Version: "1"}, nil)
}

func TestServeStdio(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	cmd := exec.Command(binary, "serve", "--root", f.root, "--tools", allTools(), "--log-level", "debug")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	// The transport would send SIGTERM after TerminateDuration; make that
	// later than the deadline so that a server ignoring EOF fails the test.
	cs, err := newClient().Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * exitDeadline}, nil)
	if err != nil {
		t.Fatal(err)
	}
	exerciseSession(t, ctx, cs, f)

	closed := make(chan error, 1)
	start := time.Now()
	go func() { closed <- cs.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("closing: %v (exit %v)\nstderr:\n%s", err, cmd.ProcessState, stderr.String())
		}
		t.Logf("the server exited %v after the client closed", time.Since(start))
	case <-time.After(exitDeadline):
		cmd.Process.Kill()
		t.Fatalf("the server did not exit within %v of the client closing stdin\nstderr:\n%s", exitDeadline, stderr.String())
	}
	if !cmd.ProcessState.Success() {
		t.Errorf("exit status %v", cmd.ProcessState)
	}
	if !strings.Contains(stderr.String(), "tool call") {
		t.Errorf("stderr lacks the debug logs:\n%s", stderr.String())
	}
}

// TestServeStdoutIsProtocolOnly speaks raw JSON-RPC to the server, with
// debug logging on, and checks that every stdout line is a JSON-RPC
// message.
func TestServeStdoutIsProtocolOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cmd := exec.Command(binary, "serve", "--root", f.root, "--log-level", "debug")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	deadline := time.NewTimer(exitDeadline)
	defer deadline.Stop()
	var all []string
	// next returns the next stdout line, or "" at EOF.
	next := func() string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if ok {
				all = append(all, l)
			}
			return l
		case <-deadline.C:
			cmd.Process.Kill()
			t.Fatalf("no answer within %v; stdout so far %q\nstderr:\n%s", exitDeadline, all, stderr.String())
		}
		return ""
	}
	send := func(msg string) {
		t.Helper()
		if _, err := io.WriteString(stdin, msg+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	requests := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"missing.txt"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`,
	}
	for i, req := range requests {
		send(req)
		if i == 0 {
			if !strings.Contains(next(), `"id":1`) {
				t.Fatalf("initialize answered with %q", all)
			}
			send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			continue
		}
		// Wait for this request's answer; notifications may come first.
		for want := fmt.Sprintf(`"id":%d`, i+1); ; {
			l := next()
			if l == "" {
				t.Fatalf("stdout ended before the answer to %s", req)
			}
			if strings.Contains(l, want) {
				break
			}
		}
	}
	stdin.Close()
	for next() != "" {
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit: %v\nstderr:\n%s", err, stderr.String())
	}
	for _, l := range all {
		var msg map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &msg); err != nil || string(msg["jsonrpc"]) != `"2.0"` {
			t.Errorf("stdout line is not a JSON-RPC message: %q", l)
		}
	}
	if !strings.Contains(strings.Join(all, "\n"), `"isError":true`) {
		t.Errorf("the call of a missing file did not give isError:\n%s", strings.Join(all, "\n"))
	}
}

// urlPattern finds the endpoint in the log line of either format.
var urlPattern = regexp.MustCompile(`url"?[=:]"?(https?://[^\s"]+/mcp)`)

// httpServe is a running `fencefs serve --http`.
type httpServe struct {
	url            string
	cmd            *exec.Cmd
	exited         chan error
	stdout, stderr *syncBuffer
	// logged receives the server's stderr lines, as far as a reader
	// keeps up (see waitLog).
	logged chan string
}

// waitLog waits until the server logs a line containing want.
func (h *httpServe) waitLog(t *testing.T, want string) string {
	t.Helper()
	timer := time.NewTimer(exitDeadline)
	defer timer.Stop()
	for {
		select {
		case l := <-h.logged:
			if strings.Contains(l, want) {
				return l
			}
		case <-timer.C:
			t.Fatalf("the server did not log %q within %v\nstderr:\n%s", want, exitDeadline, h.stderr.String())
		}
	}
}

// startHTTPServe starts `fencefs serve --http` on f's root with every
// tool and args, and waits for it to log its endpoint. The process is
// killed when the test ends.
func startHTTPServe(t *testing.T, f fixture, args ...string) *httpServe {
	t.Helper()
	return startServe(t, append([]string{"serve", "--http", "127.0.0.1:0", "--root", f.root, "--tools", allTools()}, args...)...)
}

// startServe starts fencefs with args, a serve --http command line, and
// waits for it to log its endpoint.
func startServe(t testing.TB, args ...string) *httpServe {
	t.Helper()
	return startServeEnv(t, nil, args...)
}

// startServeEnv is startServe with env added to the process's environment.
func startServeEnv(t testing.TB, env []string, args ...string) *httpServe {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	return startServeCmd(t, cmd)
}

// startServeCmd starts cmd, fencefs serve --http, and waits for it to log
// its endpoint. The process is killed when the test ends.
func startServeCmd(t testing.TB, cmd *exec.Cmd) *httpServe {
	t.Helper()
	stderrPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	h := &httpServe{cmd: cmd, exited: make(chan error, 1), stdout: &syncBuffer{}, stderr: &syncBuffer{}, logged: make(chan string, 4096)}
	cmd.Stdout = h.stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-h.exited
	})
	// Read stderr until the endpoint is logged, then keep draining it.
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderrPipe)
		for sc.Scan() {
			fmt.Fprintln(h.stderr, sc.Text())
			select {
			case h.logged <- sc.Text():
			default:
			}
			if m := urlPattern.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		h.exited <- cmd.Wait()
	}()
	select {
	case h.url = <-found:
	case err := <-h.exited:
		h.exited <- err
		t.Fatalf("the server exited before serving: %v\nstderr:\n%s", err, h.stderr.String())
	case <-time.After(exitDeadline):
		t.Fatalf("the server did not log its URL within %v\nstderr:\n%s", exitDeadline, h.stderr.String())
	}
	return h
}

// TestServeHTTPSessionsReadApart serves two MCP sessions with
// --require-read: a file one session read is not read for the other.
func TestServeHTTPSessionsReadApart(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	h := startHTTPServe(t, f, "--require-read", "--stateful")
	var sessions [2]*mcp.ClientSession
	for i := range sessions {
		cs, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: h.url}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		sessions[i] = cs
	}
	callOK(t, ctx, sessions[0], "read_file", map[string]any{"path": "a.txt"})
	write := map[string]any{"path": "a.txt", "content": "changed\n"}
	if text, isError := callTool(t, ctx, sessions[1], "write_file", write); !isError || text != "'a.txt' has not been read yet; read it before changing it." {
		t.Fatalf("write by the session that did not read: %q, isError %v", text, isError)
	}
	if got := readFile(t, filepath.Join(f.root, "a.txt")); got != "hello\nworld\n" {
		t.Fatalf("a.txt holds %q after a refused write", got)
	}
	callOK(t, ctx, sessions[0], "write_file", write)
	if got := readFile(t, filepath.Join(f.root, "a.txt")); got != "changed\n" {
		t.Fatalf("a.txt holds %q", got)
	}
}

func TestServeHTTP(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	h := startHTTPServe(t, f)
	cmd, exited, stdout, stderr := h.cmd, h.exited, h.stdout, h.stderr
	cs, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: h.url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	exerciseSession(t, ctx, cs, f)
	if err := cs.Close(); err != nil {
		t.Errorf("closing the session: %v", err)
	}

	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err // for the deferred clean-up
		if err != nil {
			t.Errorf("exit after SIGTERM: %v\nstderr:\n%s", err, stderr.String())
		}
		t.Logf("the server exited %v after SIGTERM", time.Since(start))
	case <-time.After(exitDeadline):
		t.Fatalf("the server did not exit within %v of SIGTERM\nstderr:\n%s", exitDeadline, stderr.String())
	}
	if stdout.String() != "" {
		t.Errorf("the HTTP server wrote to stdout: %q", stdout.String())
	}
}
