//go:build !fencefs_oneshot && linux

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tenant"
)

// startServeNofile is startServe with the process's limit on open files
// (soft and hard) set to nofile before fencefs starts: a shell sets it
// and execs fencefs, so the process the test watches is fencefs itself.
func startServeNofile(t *testing.T, nofile int, args ...string) *httpServe {
	t.Helper()
	return startServeCmd(t, exec.Command("/bin/sh", append([]string{"-c", `ulimit -n "$1" && shift && exec "$0" "$@"`, binary, strconv.Itoa(nofile)}, args...)...))
}

// serveTenants makes n tenants t<i>, each with r.txt holding "content of
// t<i>" and a token with scopes, and starts `fencefs serve --http` with
// extra flags and a limit of nofile open files over them, as
// ws=local:DIR/{tenant}; it returns the server, DIR and the tokens,
// tenant i's at i.
func serveTenants(t *testing.T, nofile, n int, scopes string, extra ...string) (*httpServe, string, []string) {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "tenants")
	var tokens []string
	var tf strings.Builder
	tf.WriteString("tokens:\n")
	for i := range n {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("t%d", i), "r.txt"), fmt.Sprintf("content of t%d\n", i))
		var raw [16]byte
		rand.Read(raw[:])
		tok := hex.EncodeToString(raw[:])
		tokens = append(tokens, tok)
		fmt.Fprintf(&tf, "  - {name: t%d, sha256: %s, tenant: t%d, scopes: [%s]}\n", i, tenant.HashToken(tok), i, scopes)
	}
	tokenFile := filepath.Join(base, "tokens.yaml")
	if err := os.WriteFile(tokenFile, []byte(tf.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	h := startServeNofile(t, nofile, append([]string{"serve", "--http", "127.0.0.1:0", "--auth", "tokens", "--token-file", tokenFile,
		"--tenant-mount", "ws=local:" + filepath.Join(dir, "{tenant}")}, extra...)...)
	return h, dir, tokens
}

// tokenTransport adds a bearer token to every request it sends on next.
type tokenTransport struct {
	token string
	next  http.RoundTripper
}

func (b tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// descriptors counts the open descriptors of process pid by kind:
// "socket", "root" (a tenant's directory below dir), "file" (anything else
// below dir) and "other".
func descriptors(t *testing.T, pid int, dir string) map[string]int {
	t.Helper()
	fdDir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(fdDir)
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join(fdDir, e.Name()))
		switch {
		case err != nil:
			// Closed since the directory was read.
		case strings.HasPrefix(target, "socket:"):
			n["socket"]++
		case strings.HasPrefix(target, dir+string(filepath.Separator)):
			if rel, _ := filepath.Rel(dir, target); !strings.Contains(rel, string(filepath.Separator)) {
				n["root"]++
			} else {
				n["file"]++
			}
		default:
			n["other"]++
		}
	}
	return n
}

// waitDescriptors waits, within a generous deadline, until the server's
// sockets are back to want (clients closed their connections; the server
// notices when it next reads them), and returns its descriptors then.
func waitDescriptors(t *testing.T, pid int, dir string, want int) map[string]int {
	t.Helper()
	deadline := time.Now().Add(4 * exitDeadline)
	for {
		n := descriptors(t, pid, dir)
		if n["socket"] == want {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server holds %d sockets %v after its clients closed theirs, want %d", n["socket"], 4*exitDeadline, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// readEveryTenant connects to url as each tenant in turn from len(trs)
// concurrent clients (client k sends on trs[k]) and reads the tenant's
// /ws/r.txt; it returns the failures.
func readEveryTenant(ctx context.Context, url string, tokens []string, trs []http.RoundTripper) []error {
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for k, tr := range trs {
		wg.Go(func() {
			for i := k; i < len(tokens); i += len(trs) {
				if err := readAsTenant(ctx, url, tokens[i], tr, fmt.Sprintf("content of t%d\n", i)); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("t%d: %w", i, err))
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return errs
}

// readAsTenant connects with token over tr, reads /ws/r.txt and checks
// that it holds want.
func readAsTenant(ctx context.Context, url, token string, tr http.RoundTripper, want string) error {
	transport := &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1, HTTPClient: &http.Client{Transport: tokenTransport{token, tr}}}
	cs, err := newClient().Connect(ctx, transport, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "/ws/r.txt"}})
	if err != nil {
		return err
	}
	if len(res.Content) != 1 {
		return fmt.Errorf("read_file answered %d contents", len(res.Content))
	}
	text, _ := res.Content[0].(*mcp.TextContent)
	if text == nil || res.IsError || !strings.Contains(text.Text, "\t"+want) {
		return fmt.Errorf("read_file answered %+v (isError %v), want %q", res.Content[0], res.IsError, want)
	}
	return nil
}

// TestServeDescriptorLimit drives `fencefs serve` with a limit of 128 open
// files into its bound on connections and back out: more tenants than
// descriptors, 16 concurrent clients. Under the bound every tenant is
// served. At the bound, connections held open by clients keep being
// served; a new connection gets 503 with a body that
// says why (the SDK client reads "Service Unavailable"), the log says
// so, /healthz answers, the process lives, and it never runs out of
// descriptors. Once the clients let go, every tenant is served again and
// the process holds the descriptors it held before.
func TestServeDescriptorLimit(t *testing.T) {
	const (
		nofile  = 128
		tenants = 160 // more than the process can hold descriptors for
		clients = 16
	)
	ctx := t.Context()
	h, dir, tokens := serveTenants(t, nofile, tenants, "files:read, files:write")
	pid := h.cmd.Process.Pid
	limits, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`Max open files +128 +128 `).Match(limits) {
		t.Fatalf("the server's limits:\n%s", limits)
	}
	m := regexp.MustCompile(`max_connections[=:]"?(\d+)`).FindStringSubmatch(h.stderr.String())
	if m == nil {
		t.Fatalf("the serving line names no max_connections:\n%s", h.stderr.String())
	}
	bound, _ := strconv.Atoi(m[1])
	if bound != nofile/4 {
		t.Fatalf("max_connections %d at a limit of %d open files, want %d", bound, nofile, nofile/4)
	}
	start := descriptors(t, pid, dir)
	t.Logf("descriptors at start: %v", start)
	alive := func() {
		t.Helper()
		select {
		case err := <-h.exited:
			h.exited <- err
			t.Fatalf("the server exited: %v\nstderr:\n%s", err, h.stderr.String())
		default:
		}
	}
	newTransports := func(n int) []http.RoundTripper {
		trs := make([]http.RoundTripper, n)
		for i := range trs {
			// A client waits for an answer for a generous while: one that
			// never comes (the server cannot accept) fails the test.
			// One connection each, so that 16 clients stay below the
			// bound (an SDK session may otherwise open a second one
			// while it reads the answer before).
			trs[i] = &http.Transport{ResponseHeaderTimeout: 4 * exitDeadline, MaxConnsPerHost: 1}
		}
		return trs
	}
	closeIdle := func(trs []http.RoundTripper) {
		for _, tr := range trs {
			tr.(*http.Transport).CloseIdleConnections()
		}
	}

	// Under the bound: every tenant is served, and the idle roots kept
	// are bounded whatever the number of tenants.
	trs := newTransports(clients)
	for _, err := range readEveryTenant(ctx, h.url, tokens, trs) {
		t.Errorf("under the bound: %v", err)
	}
	closeIdle(trs)
	before := waitDescriptors(t, pid, dir, start["socket"])
	t.Logf("descriptors after %d tenants: %v", tenants, before)
	if before["root"] > nofile/4 || before["file"] != 0 || before["other"] != start["other"] {
		t.Errorf("after every tenant read: %v, want at most %d roots, no file and %d other", before, nofile/4, start["other"])
	}

	// Into the bound: clients hold connections open until one is refused.
	host := strings.TrimSuffix(h.url, "/mcp")
	var held []http.RoundTripper
	for len(held) <= nofile {
		tr := newTransports(1)[0]
		resp, err := (&http.Client{Transport: tr}).Get(host + "/held")
		if err != nil {
			t.Fatalf("connection %d: %v\nstderr:\n%s", len(held)+1, err, h.stderr.String())
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			held = append(held, tr)
			continue
		}
		want := fmt.Sprintf("fencefs: the server has %d connections open, its bound below the process's limit on open files; retry later\n", bound)
		if resp.StatusCode != http.StatusServiceUnavailable || string(body) != want || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("connection %d: %s %q (Retry-After %q), want 503 %q", len(held)+1, resp.Status, body, resp.Header.Get("Retry-After"), want)
		}
		break
	}
	if len(held) != bound {
		t.Fatalf("%d connections held before a refusal, want the bound %d", len(held), bound)
	}
	alive()

	// At the bound. New connections from 16 concurrent clients are refused
	// while the held ones serve every tenant.
	var refusals []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	for k := range clients {
		wg.Go(func() {
			err := readAsTenant(ctx, h.url, tokens[k], newTransports(1)[0], "")
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				refusals = append(refusals, "served")
			} else {
				refusals = append(refusals, err.Error())
			}
		})
	}
	// The connections held are served meanwhile (an SDK session may use
	// a second connection for a call, so the held ones are asked
	// directly).
	for i, tr := range held {
		resp, err := (&http.Client{Transport: tr}).Get(host + "/healthz")
		if err != nil {
			t.Fatalf("held connection %d at the bound: %v", i, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Close {
			t.Errorf("held connection %d at the bound: %s, closed after: %v", i, resp.Status, resp.Close)
		}
	}
	wg.Wait()
	t.Logf("what a new client reads at the bound: %q", refusals[0])
	for _, r := range refusals {
		if !strings.Contains(r, "Service Unavailable") {
			t.Errorf("a new client at the bound: %q, want Service Unavailable", r)
		}
	}
	resp, err := (&http.Client{Transport: newTransports(1)[0]}).Get(host + "/healthz")
	if err != nil {
		t.Fatalf("/healthz at the bound: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "ok\n" {
		t.Errorf("/healthz at the bound: %s %q", resp.Status, body)
	}
	at := descriptors(t, pid, dir)
	t.Logf("descriptors at the bound: %v", at)
	if total := at["socket"] + at["root"] + at["file"] + at["other"]; total >= nofile {
		t.Errorf("%d descriptors open at the bound, the limit is %d", total, nofile)
	}
	logged := h.stderr.String()
	if !regexp.MustCompile(`refusing connections: too many open.*max_connections[=:]"?` + strconv.Itoa(bound)).MatchString(logged) {
		t.Errorf("the log does not say why connections were refused:\n%s", logged)
	}
	alive()

	// Out of the bound: the clients let go, and every tenant is served
	// again with the descriptors the process held before.
	closeIdle(held)
	waitDescriptors(t, pid, dir, start["socket"])
	trs = newTransports(clients)
	for _, err := range readEveryTenant(ctx, h.url, tokens, trs) {
		t.Errorf("after the bound: %v", err)
	}
	closeIdle(trs)
	after := waitDescriptors(t, pid, dir, start["socket"])
	t.Logf("descriptors after: %v", after)
	if after["root"] > nofile/4 || after["file"] != 0 || after["other"] != before["other"] {
		t.Errorf("descriptors after the bound %v, before %v: want at most %d roots, no file and the same others", after, before, nofile/4)
	}
	alive()
	for _, bad := range []string{"too many open files", "no file descriptor left", "could not be reached", "panic"} {
		if strings.Contains(h.stderr.String(), bad) {
			t.Errorf("the log says %q:\n%s", bad, h.stderr.String())
		}
	}
}

// TestServeOutOfDescriptors runs `fencefs serve --max-connections 0` (no
// bound) with a limit of 64 open files, and lets clients take every
// descriptor with connections: the server then truly has none left. A
// cached tenant's read_file is refused with the contract's storage
// failure (what the model reads), and the log says that the process has
// no file descriptor left; nothing calls it an unreachable server. A new
// tenant opens its root in place of an idle one, given back, and its read
// is refused the same way. The process lives, connections held keep
// being answered, and once clients let go every tenant is served again
// with no descriptor left behind. (A new connection cannot be accepted
// meanwhile: that is what the bound of TestServeDescriptorLimit
// prevents.)
func TestServeOutOfDescriptors(t *testing.T) {
	const (
		nofile  = 64
		tenants = 4
	)
	ctx := t.Context()
	h, dir, tokens := serveTenants(t, nofile, tenants, "files:read", "--max-connections", "0")
	if !strings.Contains(h.stderr.String(), "max_connections=0") {
		t.Fatalf("the serving line does not say there is no bound:\n%s", h.stderr.String())
	}
	pid := h.cmd.Process.Pid
	start := descriptors(t, pid, dir)
	// used counts the descriptors below the limit: one inherited above
	// it (a shell's, say) takes no slot.
	used := func() int {
		t.Helper()
		entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range entries {
			if fd, err := strconv.Atoi(e.Name()); err == nil && fd < nofile {
				n++
			}
		}
		return n
	}
	oneConn := func() *http.Transport {
		return &http.Transport{ResponseHeaderTimeout: 4 * exitDeadline, MaxConnsPerHost: 1}
	}
	connect := func(token string, tr http.RoundTripper) (*mcp.ClientSession, error) {
		return newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: h.url, MaxRetries: -1, HTTPClient: &http.Client{Transport: tokenTransport{token, tr}}}, nil)
	}
	read := func(cs *mcp.ClientSession) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "/ws/r.txt"}})
		if err != nil {
			t.Fatalf("read_file: %v\nstderr:\n%s", err, h.stderr.String())
		}
		text, _ := res.Content[0].(*mcp.TextContent)
		if text == nil {
			t.Fatalf("read_file answered %T", res.Content[0])
		}
		return text.Text, res.IsError
	}

	// Tenant t0 connects: its namespace is cached, its root idle.
	trA := oneConn()
	csA, err := connect(tokens[0], trA)
	if err != nil {
		t.Fatal(err)
	}
	defer csA.Close()

	// Clients take every descriptor left, one connection at a time, each
	// answered before the next: no connection waits to be accepted.
	host := strings.TrimSuffix(h.url, "/mcp")
	var held []*http.Transport
	for n := used(); n < nofile; n = used() {
		if len(held) > nofile {
			t.Fatalf("%d connections held and the server has %d descriptors", len(held), n)
		}
		tr := oneConn()
		resp, err := (&http.Client{Transport: tr}).Get(host + "/held")
		if err != nil {
			t.Fatalf("connection %d: %v", len(held)+1, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("connection %d: %s", len(held)+1, resp.Status)
		}
		held = append(held, tr)
	}
	t.Logf("%d connections hold the server's last descriptors: %v", len(held), descriptors(t, pid, dir))

	// The cached tenant's read needs a descriptor for its file: refused
	// with the contract's storage failure (the model reads this), the log
	// saying what happened.
	text, isError := read(csA)
	const storageFailure = "Storage failure: the storage failed. Details are in the server's log."
	if !isError || text != storageFailure {
		t.Errorf("read_file with no descriptor left: %q (isError %v), want %q", text, isError, storageFailure)
	}
	// A new tenant, on a held connection, opens its root with the
	// descriptor of t0's, idle again and given back; its read then finds
	// none for its file.
	csB, err := connect(tokens[1], held[0])
	if err != nil {
		t.Fatalf("a new tenant with an idle root to take the place of: %v\nstderr:\n%s", err, h.stderr.String())
	}
	if text, isError := read(csB); !isError || text != storageFailure {
		t.Errorf("t1's read_file with no descriptor left: %q (isError %v), want %q", text, isError, storageFailure)
	}
	// A held connection is still answered.
	resp, err := (&http.Client{Transport: held[1]}).Get(host + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz on a held connection: %s", resp.Status)
	}
	logged := h.stderr.String()
	for _, tn := range []string{"t0", "t1"} {
		found := false
		for _, l := range strings.Split(logged, "\n") {
			if strings.Contains(l, `msg="tool call failed" tool=read_file error="open ws/r.txt: the server process has no file descriptor left (too many open files)"`) &&
				strings.Contains(l, " tenant="+tn+" ") {
				found = true
			}
		}
		if !found {
			t.Errorf("no log line of %s's read saying no file descriptor is left:\n%s", tn, logged)
		}
	}
	if strings.Contains(logged, "could not be reached") || strings.Contains(logged, "panic") {
		t.Errorf("the log:\n%s", logged)
	}
	select {
	case err := <-h.exited:
		h.exited <- err
		t.Fatalf("the server exited: %v\nstderr:\n%s", err, h.stderr.String())
	default:
	}

	// The clients let go: every tenant is served again, t0 on its
	// connection, the others on new ones.
	for _, tr := range held {
		tr.CloseIdleConnections()
	}
	waitDescriptors(t, pid, dir, start["socket"]+1)
	if text, isError := read(csA); isError || !strings.Contains(text, "content of t0") {
		t.Errorf("t0 after: %q", text)
	}
	trs := make([]http.RoundTripper, 2)
	for i := range trs {
		trs[i] = oneConn()
	}
	for _, err := range readEveryTenant(ctx, h.url, tokens, trs) {
		t.Errorf("after: %v", err)
	}
	csA.Close()
	csB.Close()
	trA.CloseIdleConnections()
	for _, tr := range trs {
		tr.(*http.Transport).CloseIdleConnections()
	}
	after := waitDescriptors(t, pid, dir, start["socket"])
	t.Logf("descriptors at start %v, after %v", start, after)
	if after["root"] > tenants || after["file"] != 0 || after["other"] != start["other"] {
		t.Errorf("descriptors after %v, at start %v: want at most %d roots, no file and the same others", after, start, tenants)
	}
}
