package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/mountspec"
	"github.com/fencefs/fencefs/overlay/overlayspec"
	"github.com/fencefs/fencefs/quota"
	"github.com/fencefs/fencefs/server"
	"github.com/fencefs/fencefs/tenant"
)

// tenantHeader sends the tenant the test's authenticator trusts.
type tenantHeader string

func (h tenantHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Tenant", string(h))
	return http.DefaultTransport.RoundTrip(r)
}

// headerIdentity trusts the tenant X-Tenant names, with files:read and
// files:write.
var headerIdentity = server.AuthenticatorFunc(func(r *http.Request) (*tenant.Identity, error) {
	id, err := tenant.ParseID(r.Header.Get("X-Tenant"))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", server.ErrUnauthenticated, err)
	}
	return &tenant.Identity{Subject: "agent", Tenant: id, Scopes: []string{tenant.ScopeRead, tenant.ScopeWrite}}, nil
})

// sessionS3 is a bucket on versitygw, with its keys in the environment,
// and a base directory holding a.txt, for the session storage tests.
type sessionS3 struct {
	srv    *containers.S3Server
	bucket string
	base   string
}

// startSessionS3 starts the S3 server (skipping loudly without it, failing
// when containers are required) and makes a bucket and the base.
func startSessionS3(t *testing.T) *sessionS3 {
	t.Helper()
	containers.SetTestcontainersDefaults()
	ctx := t.Context()
	srv, err := containers.StartS3Server(ctx)
	if err != nil {
		if containers.Required() {
			t.Fatalf("starting the S3 server: %v", err)
		}
		t.Skipf("SKIP (loud): no S3 server: %v", err)
	}
	t.Cleanup(func() { srv.Terminate(context.Background()) })
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	f := &sessionS3{srv: srv, bucket: srv.NewBucket(ctx, t), base: t.TempDir()}
	if err := os.WriteFile(filepath.Join(f.base, "a.txt"), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// s3Spec is the mount spec of prefix in the bucket.
func (f *sessionS3) s3Spec(prefix string) string {
	return fmt.Sprintf("s3://%s/%s?endpoint=%s&region=%s&path_style=1&timeout=20s", f.bucket, prefix, f.srv.Endpoint, f.srv.Region)
}

// keys lists the bucket's keys below prefix.
func (f *sessionS3) keys(t *testing.T, prefix string) []string {
	t.Helper()
	out, err := f.srv.Client().ListObjectsV2(t.Context(), &s3.ListObjectsV2Input{Bucket: aws.String(f.bucket), Prefix: aws.String(prefix)})
	if err != nil {
		t.Fatal(err)
	}
	var ks []string
	for _, o := range out.Contents {
		ks = append(ks, *o.Key)
	}
	return ks
}

// gone waits until no key is below prefix, failing after 30 s.
func (f *sessionS3) gone(t *testing.T, prefix string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for len(f.keys(t, prefix)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%s still there after 30s: %q", prefix, f.keys(t, prefix))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// serveHTTP serves cfg over HTTP until the test ends and returns the URL.
func serveHTTP(t *testing.T, cfg server.Config) string {
	t.Helper()
	s, err := server.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		hs.Close()
		s.Close()
	})
	return hs.URL
}

// connectAs opens an SDK client session to url's /mcp as tenant id,
// closed when the test ends.
func connectAs(t *testing.T, url, id string) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: tenantHeader(id)}, DisableStandaloneSSE: true, MaxRetries: -1}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestSessionStorageS3: stateful sessions over
// ws=overlay:local:BASE:ro+s3://B/up/{tenant}/{session} with checkpoints in
// s3://B/ckpt/{tenant}/{session} on versitygw, through the server over
// HTTP with the SDK client: each session journals its own changes, the
// storage quota holds across a tenant's sessions, and an ended session's
// upper layer and store are removed (retention 1ns) while a live
// session's and another tenant's stay.
func TestSessionStorageS3(t *testing.T) {
	ctx := t.Context()
	f := startSessionS3(t)
	ws, err := tenant.ParseTemplate("overlay:local:" + f.base + ":ro+" + f.s3Spec("up/{tenant}/{session}"))
	if err != nil {
		t.Fatal(err)
	}
	store, err := tenant.ParseTemplate(f.s3Spec("ckpt/{tenant}/{session}"))
	if err != nil {
		t.Fatal(err)
	}
	ov := overlayspec.New(mountspec.Options{})
	t.Cleanup(ov.Close)
	url := serveHTTP(t, server.Config{
		TenantMounts:     []server.TenantMount{{Name: "ws", Template: ws}},
		Schemes:          mountspec.Schemes{overlayspec.Prefix: ov},
		Checkpoints:      &server.Checkpoints{Store: store, List: true},
		QuotaTenants:     map[string]quota.Limits{"t1": {MaxBytes: 8000}},
		SessionRetention: time.Nanosecond,
		Namespace:        server.NamespaceConfig{StorageTimeout: 20 * time.Second},
		Logger:           slog.New(slog.NewTextHandler(t.Output(), nil)),
		Identity:         headerIdentity,
	})
	call := func(cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		return res.Content[0].(*mcp.TextContent).Text, res.IsError
	}
	keys := func(prefix string) []string { return f.keys(t, prefix) }

	s1, s2, other := connectAs(t, url, "t1"), connectAs(t, url, "t1"), connectAs(t, url, "t2")
	big := strings.Repeat("x", 5000)
	for _, c := range []struct {
		cs      *mcp.ClientSession
		p, text string
	}{{s1, "/ws/a.txt", "one\n"}, {s2, "/ws/big.txt", big}, {other, "/ws/a.txt", "other\n"}} {
		if out, isErr := call(c.cs, "write_file", map[string]any{"path": c.p, "content": c.text}); isErr {
			t.Fatalf("write %s: %s", c.p, out)
		}
	}
	// The quota is t1's across its sessions.
	if out, isErr := call(s1, "write_file", map[string]any{"path": "/ws/big.txt", "content": big}); !isErr || !strings.Contains(out, "quota") {
		t.Errorf("s1 past t1's quota: %v %q", isErr, out)
	}
	if out, _ := call(s1, "list_checkpoints", nil); !strings.Contains(out, "write /ws/a.txt") || strings.Contains(out, "big") {
		t.Errorf("s1's checkpoints:\n%s", out)
	}
	up1, ckpt1 := "up/t1/"+s1.ID()+"/", "ckpt/t1/"+s1.ID()+"/"
	if len(keys(up1)) == 0 || len(keys(ckpt1)) == 0 {
		t.Fatalf("s1's storage: upper %q, store %q", keys(up1), keys(ckpt1))
	}
	// s1 ends: its storage goes (retention 1ns), in the background.
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	f.gone(t, up1)
	f.gone(t, ckpt1)
	for _, p := range []string{"up/t1/" + s2.ID() + "/big.txt", "up/t2/" + other.ID() + "/a.txt"} {
		if ks := keys(p); len(ks) != 1 {
			t.Errorf("%s after s1's storage was removed: %q", p, ks)
		}
	}
	if len(keys("ckpt/t1/"+s2.ID()+"/")) == 0 || len(keys("ckpt/t2/"+other.ID()+"/")) == 0 {
		t.Errorf("a live session's store went")
	}
	if out, _ := call(s2, "read_file", map[string]any{"path": "/ws/big.txt"}); !strings.Contains(out, "xxxx") {
		t.Errorf("s2 reads %q", out[:min(len(out), 80)])
	}
}

// TestSessionReplicasS3: two stateful replicas over one bucket's
// ws=overlay:local:BASE:ro+s3://B/up/{tenant}/{session}, each removing
// its ended sessions' storage at once (retention 1ns): the second,
// started while the first serves a session (sticky routing, or a rolling
// restart), removes the storage of a session it saw end and never the
// first's live one, which the first removes once it ended. A third,
// told it alone uses the bucket
// (SessionCollectLeftovers, session timeout 2s), dates a leftover by its
// newest object, however deep: it removes it once the session timeout
// passed since.
func TestSessionReplicasS3(t *testing.T) {
	ctx := t.Context()
	f := startSessionS3(t)
	ws, err := tenant.ParseTemplate("overlay:local:" + f.base + ":ro+" + f.s3Spec("up/{tenant}/{session}"))
	if err != nil {
		t.Fatal(err)
	}
	replica := func(mod func(*server.Config)) string {
		t.Helper()
		ov := overlayspec.New(mountspec.Options{})
		t.Cleanup(ov.Close)
		cfg := server.Config{
			TenantMounts:     []server.TenantMount{{Name: "ws", Template: ws}},
			Schemes:          mountspec.Schemes{overlayspec.Prefix: ov},
			SessionRetention: time.Nanosecond,
			Namespace:        server.NamespaceConfig{StorageTimeout: 20 * time.Second},
			Logger:           slog.New(slog.NewTextHandler(t.Output(), nil)),
			Identity:         headerIdentity,
		}
		if mod != nil {
			mod(&cfg)
		}
		return serveHTTP(t, cfg)
	}
	connect := func(url string) *mcp.ClientSession { return connectAs(t, url, "t1") }
	write := func(cs *mcp.ClientSession, text string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "/ws/a.txt", "content": text}})
		if err != nil || res.IsError {
			t.Fatalf("write_file: %v %v", err, res)
		}
	}
	keys := func(prefix string) []string { return f.keys(t, prefix) }
	gone := func(prefix string) { f.gone(t, prefix) }

	first := connect(replica(nil))
	write(first, "first\n")
	liveKey := "up/t1/" + first.ID() + "/a.txt"
	// The second replica starts; a session of its own ends there, and
	// it removes that session's storage: by then it has looked.
	second := connect(replica(nil))
	write(second, "second\n")
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	gone("up/t1/" + second.ID() + "/")
	if ks := keys(liveKey); len(ks) != 1 {
		t.Fatalf("the first replica's live session's storage after the second's collection: %q", ks)
	}
	if res, err := first.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "/ws/a.txt"}}); err != nil || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "first") {
		t.Errorf("the live session reads %v, %v", res, err)
	}

	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	gone("up/t1/" + first.ID() + "/")

	// A leftover whose only object is deep below its prefix (no
	// prefix has a modification time on S3).
	leftover := "up/t1/" + strings.Repeat("E", 26) + "/"
	if _, err := f.srv.Client().PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(f.bucket), Key: aws.String(leftover + "src/pkg/a.go"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	replica(func(c *server.Config) {
		c.SessionCollectLeftovers = true
		c.HTTP.SessionTimeout = 2 * time.Second
	})
	gone(leftover)
}
