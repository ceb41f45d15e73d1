//go:build !fencefs_oneshot

package main

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/tenant/tenanttest"
)

// TestReplicasOverS3 runs three serve --http replicas (separate
// processes) over one S3 server, with JWT auth from an issuer on
// 127.0.0.1 and one namespace per tenant: tenants stay apart through
// every replica, compare-and-swap holds across replicas, and a replica
// killed during a write leaves the old object or the new one while the
// others go on.
func TestReplicasOverS3(t *testing.T) {
	containers.SetTestcontainersDefaults()
	ctx := t.Context()
	srv := containers.StartS3(ctx, t)
	iss := tenanttest.NewIssuer(t)
	env := []string{"AWS_ACCESS_KEY_ID=" + srv.AccessKey, "AWS_SECRET_ACCESS_KEY=" + srv.SecretKey, "AWS_REGION=" + srv.Region}
	mount := fmt.Sprintf("ws=s3://%s/tenants/{tenant}/ws?endpoint=%s&region=%s&path_style=1", containers.DefaultS3Bucket, srv.Endpoint, srv.Region)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "fencefs.yaml")
	writeFile(t, cfg, "quota_tenants:\n  t2: {max_files: 2}\n")
	var replicas []*httpServe
	for i := range 3 {
		replicas = append(replicas, startServeEnv(t, env, "serve", "--config", cfg, "--http", "127.0.0.1:0", "--tools", allTools(),
			"--auth", "jwt", "--oidc-issuer", iss.URL, "--oidc-audience", iss.Audience, "--tenant-mount", mount,
			"--audit", filepath.Join(dir, fmt.Sprintf("audit-%d.jsonl", i))))
	}
	sessions := map[string][]*mcp.ClientSession{}
	for _, tn := range []string{"t1", "t2", "t10"} {
		tok := iss.Sign(t, tenanttest.Claims{Subject: tn})
		for _, r := range replicas {
			cs, err := connectAs(t, r.url, tok, "")
			if err != nil {
				t.Fatalf("%s: %v\n%s", tn, err, r.stderr.String())
			}
			t.Cleanup(func() { cs.Close() })
			sessions[tn] = append(sessions[tn], cs)
		}
		callOK(t, ctx, sessions[tn][0], "write_file", map[string]any{"path": "/ws/secret.txt", "content": "secret of " + tn + "\n"})
	}

	t.Run("isolation", func(t *testing.T) {
		spellings := []string{"/ws/../t2/secret.txt", "/ws/../../t2/ws/secret.txt", "/ws/../../t10/ws/secret.txt", "../t10/ws/secret.txt",
			"/../tenants/t2/ws/secret.txt", "/ws/%2e%2e/t2/secret.txt", "/ws/..\\t2\\secret.txt", "/ws//../t10/ws/secret.txt", "tenants/t2/ws/secret.txt"}
		for i, cs := range sessions["t1"] {
			for _, p := range spellings {
				for _, tool := range []struct {
					name string
					args map[string]any
				}{
					{"read_file", map[string]any{"path": p}},
					{"file_info", map[string]any{"path": p}},
					{"list_directory", map[string]any{"path": strings.TrimSuffix(p, "secret.txt")}},
					{"write_file", map[string]any{"path": p, "content": "owned"}},
				} {
					if text, _ := callTool(t, ctx, cs, tool.name, tool.args); strings.Contains(text, "secret of t2") || strings.Contains(text, "secret of t10") {
						t.Errorf("replica %d: t1 %s %s: %q", i, tool.name, p, text)
					}
				}
			}
			for _, tool := range []struct {
				name string
				args map[string]any
				own  string // what t1 must find of its own
			}{
				{"search_files", map[string]any{"path": "/", "pattern": "secret"}, "secret.txt"},
				{"grep", map[string]any{"path": "/", "pattern": "secret of"}, "secret of t1"},
				{"find_files", map[string]any{"path": "/", "pattern": "**"}, "secret.txt"},
				{"list_files", map[string]any{"path": "/"}, "secret.txt"},
				{"list_directory", map[string]any{"path": "/"}, "ws"},
			} {
				text, _ := callTool(t, ctx, cs, tool.name, tool.args)
				if !strings.Contains(text, tool.own) {
					t.Errorf("replica %d: t1 %s does not find its own %q: %q", i, tool.name, tool.own, text)
				}
				if strings.Contains(text, "t2") || strings.Contains(text, "t10") {
					t.Errorf("replica %d: t1 %s: %q", i, tool.name, text)
				}
			}
		}
		for _, tn := range []string{"t2", "t10"} {
			if text := callOK(t, ctx, sessions[tn][2], "read_file", map[string]any{"path": "/ws/secret.txt"}); !strings.Contains(text, "secret of "+tn) {
				t.Errorf("%s's file after t1's attempts: %q", tn, text)
			}
		}
	})

	hashOf := func(t *testing.T, cs *mcp.ClientSession, p string) (string, string) {
		t.Helper()
		text := callOK(t, ctx, cs, "read_file", map[string]any{"path": p})
		m := regexp.MustCompile(`hash:([0-9a-f]+)`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("no hash in %q", text)
		}
		return m[1], text
	}

	t.Run("metrics", func(t *testing.T) {
		// Three tenants' writes through replica 0 went out over one
		// shared client, counted under their mount and S3 operation.
		resp, err := http.Get(strings.TrimSuffix(replicas[0].url, "/mcp") + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		put := regexp.MustCompile(`(?m)^fencefs_storage_requests_total\{mount="ws",operation="PutObject"\} ([0-9]+)$`).FindSubmatch(body)
		if put == nil || string(put[1]) == "0" {
			t.Errorf("/metrics counts no PutObject of mount ws:\n%s", body)
		}
		for _, want := range []string{"fencefs_open_sessions 0", "fencefs_ripgrep_running 0", "fencefs_http_requests_in_flight "} {
			if !strings.Contains(string(body), want) {
				t.Errorf("/metrics has no %q", want)
			}
		}
	})

	t.Run("quotas", func(t *testing.T) {
		// t2 may store 2 files and holds secret.txt. Each replica scans the
		// shared storage at t2's first change through it, so a replica
		// that has not seen t2 yet refuses too; a delete gives back.
		s := sessions["t2"]
		callOK(t, ctx, s[0], "write_file", map[string]any{"path": "/ws/q1.txt", "content": "1"})
		for i, p := range map[int]string{0: "/ws/q2.txt", 1: "/ws/q3.txt"} {
			if text, isError := callTool(t, ctx, s[i], "write_file", map[string]any{"path": p, "content": "x"}); !isError || !strings.Contains(text, "stored files") {
				t.Errorf("replica %d: a third file: %q, want a refusal naming stored files", i, text)
			}
			if text, isError := callTool(t, ctx, s[2], "file_info", map[string]any{"path": p}); !isError {
				t.Errorf("%s after a refused write: %q", p, text)
			}
		}
		callOK(t, ctx, s[2], "delete_file", map[string]any{"path": "/ws/q1.txt"})
		callOK(t, ctx, s[2], "write_file", map[string]any{"path": "/ws/q4.txt", "content": "4"})
	})

	t.Run("compare-and-swap", func(t *testing.T) {
		const writers, rounds = 50, 20
		tok := iss.Sign(t, tenanttest.Claims{Subject: "t1"})
		var clients []*mcp.ClientSession
		for w := range writers {
			cs, err := connectAs(t, replicas[w%3].url, tok, "")
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			clients = append(clients, cs)
		}
		callOK(t, ctx, clients[0], "write_file", map[string]any{"path": "/ws/cas.txt", "content": "round 0\n"})
		for r := 1; r <= rounds; r++ {
			hash, _ := hashOf(t, clients[r%3], "/ws/cas.txt")
			var wins atomic.Int32
			var winner atomic.Value
			var wg sync.WaitGroup
			for w, cs := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					content := fmt.Sprintf("round %d writer %d\n", r, w)
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "/ws/cas.txt", "content": content, "expected_hash": hash}})
					if err == nil && !res.IsError {
						wins.Add(1)
						winner.Store(content)
					}
				}()
			}
			wg.Wait()
			if wins.Load() != 1 {
				t.Fatalf("round %d: %d winners, want 1", r, wins.Load())
			}
			if _, text := hashOf(t, clients[(r+1)%3], "/ws/cas.txt"); !strings.Contains(text, strings.TrimSpace(winner.Load().(string))) {
				t.Fatalf("round %d: the file holds %q, the winner wrote %q", r, text, winner.Load())
			}
		}
	})

	t.Run("replica killed during a write", func(t *testing.T) {
		old := strings.Repeat("old ", 1<<10)
		callOK(t, ctx, sessions["t1"][0], "write_file", map[string]any{"path": "/ws/big.txt", "content": old})
		sent := make(chan struct{})
		var once sync.Once
		tr := &mcp.StreamableClientTransport{Endpoint: replicas[2].url, MaxRetries: -1, HTTPClient: &http.Client{Transport: bodySent{bearer{iss.Sign(t, tenanttest.Claims{Subject: "t1"})}, func() { once.Do(func() { close(sent) }) }}}}
		cs, err := newClient().Connect(ctx, tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		neu := strings.Repeat("new ", 3<<18) // 3 MiB: within the SDK's 4 MiB request limit
		done := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "/ws/big.txt", "content": neu}})
			done <- err
		}()
		select {
		case <-sent:
			replicas[2].cmd.Process.Kill()
			<-done
		case err := <-done:
			// The body's end was not seen (the call ended first): the
			// kill then comes after the write, which must hold too.
			t.Logf("the write ended before the kill: %v", err)
			replicas[2].cmd.Process.Kill()
		}
		cs.Close()
		_, text := hashOf(t, sessions["t1"][0], "/ws/big.txt")
		if !strings.Contains(text, "old old") && !strings.Contains(text, "new new") {
			t.Fatalf("after the kill the file holds neither version: %.200q", text)
		}
		info := callOK(t, ctx, sessions["t1"][1], "file_info", map[string]any{"path": "/ws/big.txt"})
		if !strings.Contains(info, fmt.Sprintf("size: %d", len(old))) && !strings.Contains(info, fmt.Sprintf("size: %d", len(neu))) {
			t.Fatalf("after the kill: %q, want the size of the old or the new content", info)
		}
		callOK(t, ctx, sessions["t2"][1], "read_file", map[string]any{"path": "/ws/secret.txt"})
	})
	for i := range 2 {
		checkAuditFile(t, filepath.Join(dir, fmt.Sprintf("audit-%d.jsonl", i)))
	}
}

// bodySent calls sent once a request's body has been read to its end:
// the server then holds the whole request.
type bodySent struct {
	next http.RoundTripper
	sent func()
}

func (b bodySent) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil && r.Method == http.MethodPost && r.ContentLength > 1<<20 {
		r = r.Clone(r.Context())
		r.Body = &eofHook{ReadCloser: r.Body, hook: b.sent}
	}
	return b.next.RoundTrip(r)
}

type eofHook struct {
	io.ReadCloser
	hook func()
}

func (e *eofHook) Read(p []byte) (int, error) {
	n, err := e.ReadCloser.Read(p)
	if err == io.EOF {
		e.hook()
	}
	return n, err
}
