package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/mountspec"
	"github.com/fencefs/fencefs/overlay"
	"github.com/fencefs/fencefs/overlay/overlayspec"
	"github.com/fencefs/fencefs/server"
	"github.com/fencefs/fencefs/tenant"
)

// sessionsFixture serves ws=overlay:local:BASE:ro+local:UP/{tenant}/{session}
// over HTTP, stateful, to tenants named by X-Tenant.
type sessionsFixture struct {
	base, up string
	schemes  mountspec.Schemes
	hs       *httptest.Server
	srv      *server.Server
}

func newSessionsFixture(t testing.TB, mod func(*server.Config)) (*sessionsFixture, error) {
	t.Helper()
	return newSessionsFixtureIn(t, t.TempDir(), mod)
}

// newSessionsFixtureIn is newSessionsFixture with its base and upper
// layers in dir.
func newSessionsFixtureIn(t testing.TB, dir string, mod func(*server.Config)) (*sessionsFixture, error) {
	t.Helper()
	f := &sessionsFixture{base: filepath.Join(dir, "base"), up: filepath.Join(dir, "up")}
	for _, d := range []string{f.base, f.up} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(f.base, "a.txt"), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ov := overlayspec.New(mountspec.Options{})
	t.Cleanup(ov.Close)
	f.schemes = mountspec.Schemes{overlayspec.Prefix: ov}
	ws, err := tenant.ParseTemplate("overlay:local:" + f.base + ":ro+local:" + filepath.Join(f.up, tenant.Placeholder, tenant.SessionPlaceholder))
	if err != nil {
		t.Fatal(err)
	}
	cfg := server.Config{
		TenantMounts: []server.TenantMount{{Name: "ws", Template: ws}},
		Schemes:      f.schemes,
		Namespace:    server.NamespaceConfig{StorageTimeout: 10 * time.Second},
		Logger:       slog.New(slog.NewTextHandler(t.Output(), nil)),
		Identity:     readWriteByHeader,
	}
	if mod != nil {
		mod(&cfg)
	}
	srv, err := server.New(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { srv.Close() })
	f.srv = srv
	f.hs = httptest.NewServer(srv.Handler())
	t.Cleanup(f.hs.Close)
	return f, nil
}

// connect opens a stateful session as tenant id and returns it with the
// Mcp-Session-Id the server issued.
func (f *sessionsFixture) connect(t *testing.T, id string) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: f.hs.URL + "/mcp", HTTPClient: &http.Client{Transport: asTenant(id)}, DisableStandaloneSSE: true, MaxRetries: -1}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if cs.ID() == "" {
		t.Fatal("the server issued no Mcp-Session-Id")
	}
	return cs
}

// metric reads a gauge of /metrics.
func (f *sessionsFixture) metric(t *testing.T, name string) string {
	t.Helper()
	res, err := http.Get(f.hs.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	t.Fatalf("no %s in /metrics", name)
	return ""
}

// overlay opens the overlay of session sid of tenant id, as `fencefs
// overlay diff` does.
func (f *sessionsFixture) overlay(t *testing.T, id, sid string) *overlay.FS {
	t.Helper()
	sp, err := f.schemes.Parse("overlay:local:" + f.base + ":ro+local:" + filepath.Join(f.up, id, sid))
	if err != nil {
		t.Fatal(err)
	}
	o, c, err := f.schemes[overlayspec.Prefix].(*overlayspec.Scheme).OpenFS(context.Background(), sp, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return o
}

// TestSessionTemplates: two stateful sessions of one tenant over
// ws=overlay:local:BASE:ro+local:UP/{tenant}/{session} each write the same
// path and each reads its own; the base is untouched; each session's upper
// layer, named by the Mcp-Session-Id the server issued, holds its change
// alone; ending a session closes its namespace and keeps its upper layer
// for review.
func TestSessionTemplates(t *testing.T) {
	f, err := newSessionsFixture(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	s1, s2 := f.connect(t, "t1"), f.connect(t, "t1")
	if s1.ID() == s2.ID() {
		t.Fatalf("two sessions got one id %q", s1.ID())
	}
	for _, c := range []struct {
		cs   *mcp.ClientSession
		text string
	}{{s1, "one\n"}, {s2, "two\n"}} {
		if text, isErr := callText(t, c.cs, "write_file", map[string]any{"path": "/ws/a.txt", "content": c.text}); isErr {
			t.Fatalf("write_file: %s", text)
		}
	}
	for _, c := range []struct {
		cs   *mcp.ClientSession
		want string
	}{{s1, "one"}, {s2, "two"}} {
		text, isErr := callText(t, c.cs, "read_file", map[string]any{"path": "/ws/a.txt"})
		if isErr || !strings.Contains(text, c.want) || strings.Contains(text, map[string]string{"one": "two", "two": "one"}[c.want]) {
			t.Errorf("session %s read %q, want its own %q", c.cs.ID(), text, c.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(f.base, "a.txt")); string(b) != "base\n" {
		t.Errorf("the base changed: %q", b)
	}
	for _, c := range []struct {
		cs       *mcp.ClientSession
		add, not string
	}{{s1, "+one", "+two"}, {s2, "+two", "+one"}} {
		o := f.overlay(t, "t1", c.cs.ID())
		changes, err := o.Changes(context.Background())
		if err != nil || len(changes) != 1 || changes[0].Path != "a.txt" || changes[0].Kind != overlay.Modified {
			t.Errorf("session %s: changes %+v, %v; want a.txt modified", c.cs.ID(), changes, err)
		}
		diff, err := o.Diff(context.Background())
		if err != nil || !strings.Contains(diff, "-base") || !strings.Contains(diff, c.add) || strings.Contains(diff, c.not) {
			t.Errorf("session %s: diff %q, %v; want -base %s", c.cs.ID(), diff, err, c.add)
		}
	}
	// A session of another tenant sees the base, not t1's sessions.
	other := f.connect(t, "t2")
	if text, _ := callText(t, other, "read_file", map[string]any{"path": "/ws/a.txt"}); !strings.Contains(text, "base") {
		t.Errorf("tenant t2 read %q, want the base", text)
	}
	if entries, _ := os.ReadDir(filepath.Join(f.up, "t1")); len(entries) != 2 {
		t.Errorf("t1's upper layers: %d, want one per session (2)", len(entries))
	}
	if got := f.metric(t, "fencefs_session_namespaces"); got != "3" {
		t.Errorf("session namespaces open: %s, want 3", got)
	}
	// The session ends (DELETE): its namespace is closed before the
	// answer; its upper layer stays for review.
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	if got := f.metric(t, "fencefs_session_namespaces"); got != "2" {
		t.Errorf("session namespaces open after one ended: %s, want 2", got)
	}
	if _, err := os.Stat(filepath.Join(f.up, "t1", s1.ID(), "a.txt")); err != nil {
		t.Errorf("the ended session's upper layer: %v", err)
	}
}

// TestSessionTemplatesRefusals: a session id is the server's, bound to
// the tenant that opened it; a request without one, or a stateless
// server, is refused saying why, as is a session retention where no
// template names {session}.
func TestSessionTemplatesRefusals(t *testing.T) {
	if _, err := newSessionsFixture(t, func(c *server.Config) { c.Stateless = true }); err == nil || !strings.Contains(err.Error(), "needs stateful HTTP sessions") {
		t.Fatalf("a stateless server with {session}: %v, want a refusal", err)
	}
	store, err := tenant.ParseTemplate("local:" + filepath.Join(t.TempDir(), tenant.Placeholder))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newSessionsFixture(t, func(c *server.Config) { c.Checkpoints = &server.Checkpoints{Store: store} }); err == nil || !strings.Contains(err.Error(), "must name the session ({session})") {
		t.Fatalf("a store per tenant with {session} mounts: %v, want a refusal", err)
	}
	perTenant, err := tenant.ParseTemplate("local:" + filepath.Join(t.TempDir(), tenant.Placeholder))
	if err != nil {
		t.Fatal(err)
	}
	for _, keep := range []func(c *server.Config){
		func(c *server.Config) { c.SessionRetention = time.Hour },
		func(c *server.Config) { c.SessionRetention = server.KeepSessions },
		func(c *server.Config) { c.SessionCollectLeftovers = true },
		func(c *server.Config) { c.SessionRetention = server.RemoveSessionsAtOnce },
	} {
		_, err := newSessionsFixture(t, func(c *server.Config) {
			c.TenantMounts = []server.TenantMount{{Name: "ws", Template: perTenant}}
			keep(c)
		})
		if err == nil || !strings.Contains(err.Error(), "no tenant mount names the session ({session})") {
			t.Fatalf("session retention without {session}: %v, want a refusal", err)
		}
	}
	// The default, spelled out, is no setting of its own.
	if _, err := newSessionsFixture(t, func(c *server.Config) {
		c.TenantMounts = []server.TenantMount{{Name: "ws", Template: perTenant}}
		c.SessionRetention = server.DefaultSessionRetention
	}); err != nil {
		t.Fatalf("the default retention without {session}: %v", err)
	}
	f, err := newSessionsFixture(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	s1 := f.connect(t, "t1")
	callText(t, s1, "write_file", map[string]any{"path": "/ws/a.txt", "content": "mine\n"})

	post := func(tenantID, sessionID, body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, f.hs.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("X-Tenant", tenantID)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sessionID != "" {
			req.Header.Set("Mcp-Session-Id", sessionID)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		n, _ := res.Body.Read(buf)
		b.Write(buf[:n])
		return res.StatusCode, b.String()
	}
	read := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"/ws/a.txt"}}}`
	// Another tenant presenting t1's session id is refused by the SDK's
	// binding of the session to its opener.
	if code, body := post("t2", s1.ID(), read); code < 400 || strings.Contains(body, "mine") {
		t.Errorf("tenant t2 with t1's session: %d %q", code, body)
	}
	// A session id the server never issued, shaped as a path, opens nothing.
	for _, sid := range []string{"../t1/" + s1.ID(), "forged", strings.Repeat("A", 26)} {
		if code, body := post("t1", sid, read); code < 400 || strings.Contains(body, "mine") {
			t.Errorf("session id %q: %d %q", sid, code, body)
		}
	}
	if _, err := os.Stat(filepath.Join(f.up, "t1", "forged")); !os.IsNotExist(err) {
		t.Errorf("a forged session id made storage: %v", err)
	}
	// Without a session, a call is refused saying why.
	if code, body := post("t1", "", read); code != http.StatusBadRequest || !strings.Contains(body, "per MCP session") {
		t.Errorf("a call without a session: %d %q", code, body)
	}
	if entries, _ := os.ReadDir(filepath.Join(f.up, "t1")); len(entries) != 1 {
		t.Errorf("t1's upper layers: %d, want the one session's", len(entries))
	}
}
