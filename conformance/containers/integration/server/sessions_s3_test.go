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

// TestSessionStorageS3: stateful sessions over
// ws=overlay:local:BASE:ro+s3://B/up/{tenant}/{session} with checkpoints in
// s3://B/ckpt/{tenant}/{session} on versitygw, through the server over
// HTTP with the SDK client: each session journals its own changes, the
// storage quota holds across a tenant's sessions, and an ended session's
// upper layer and store are removed (retention 1ns) while a live
// session's and another tenant's stay.
func TestSessionStorageS3(t *testing.T) {
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
	bucket := srv.NewBucket(ctx, t)
	base := t.TempDir()
	if err := os.WriteFile(filepath.Join(base, "a.txt"), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s3spec := func(prefix string) string {
		return fmt.Sprintf("s3://%s/%s?endpoint=%s&region=%s&path_style=1&timeout=20s", bucket, prefix, srv.Endpoint, srv.Region)
	}
	ws, err := tenant.ParseTemplate("overlay:local:" + base + ":ro+" + s3spec("up/{tenant}/{session}"))
	if err != nil {
		t.Fatal(err)
	}
	store, err := tenant.ParseTemplate(s3spec("ckpt/{tenant}/{session}"))
	if err != nil {
		t.Fatal(err)
	}
	ov := overlayspec.New(mountspec.Options{})
	t.Cleanup(ov.Close)
	s, err := server.New(ctx, server.Config{
		TenantMounts:     []server.TenantMount{{Name: "ws", Template: ws}},
		Schemes:          mountspec.Schemes{overlayspec.Prefix: ov},
		Checkpoints:      &server.Checkpoints{Store: store, List: true},
		QuotaTenants:     map[string]quota.Limits{"t1": {MaxBytes: 8000}},
		SessionRetention: time.Nanosecond,
		Namespace:        server.NamespaceConfig{StorageTimeout: 20 * time.Second},
		Logger:           slog.New(slog.NewTextHandler(t.Output(), nil)),
		Identity: server.AuthenticatorFunc(func(r *http.Request) (*tenant.Identity, error) {
			id, err := tenant.ParseID(r.Header.Get("X-Tenant"))
			if err != nil {
				return nil, fmt.Errorf("%w: %v", server.ErrUnauthenticated, err)
			}
			return &tenant.Identity{Subject: "agent", Tenant: id, Scopes: []string{tenant.ScopeRead, tenant.ScopeWrite}}, nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		hs.Close()
		s.Close()
	})
	connect := func(id string) *mcp.ClientSession {
		t.Helper()
		tr := &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp", HTTPClient: &http.Client{Transport: tenantHeader(id)}, DisableStandaloneSSE: true, MaxRetries: -1}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	call := func(cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		return res.Content[0].(*mcp.TextContent).Text, res.IsError
	}
	keys := func(prefix string) []string {
		t.Helper()
		out, err := srv.Client().ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
		if err != nil {
			t.Fatal(err)
		}
		var ks []string
		for _, o := range out.Contents {
			ks = append(ks, *o.Key)
		}
		return ks
	}

	s1, s2, other := connect("t1"), connect("t1"), connect("t2")
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
	deadline := time.Now().Add(30 * time.Second)
	for len(keys(up1))+len(keys(ckpt1)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("s1's storage still there 30s after it ended: %q %q", keys(up1), keys(ckpt1))
		}
		time.Sleep(50 * time.Millisecond)
	}
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
	bucket := srv.NewBucket(ctx, t)
	base := t.TempDir()
	if err := os.WriteFile(filepath.Join(base, "a.txt"), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := tenant.ParseTemplate(fmt.Sprintf("overlay:local:%s:ro+s3://%s/up/{tenant}/{session}?endpoint=%s&region=%s&path_style=1&timeout=20s", base, bucket, srv.Endpoint, srv.Region))
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
			Identity: server.AuthenticatorFunc(func(r *http.Request) (*tenant.Identity, error) {
				id, err := tenant.ParseID(r.Header.Get("X-Tenant"))
				if err != nil {
					return nil, fmt.Errorf("%w: %v", server.ErrUnauthenticated, err)
				}
				return &tenant.Identity{Subject: "agent", Tenant: id, Scopes: []string{tenant.ScopeRead, tenant.ScopeWrite}}, nil
			}),
		}
		if mod != nil {
			mod(&cfg)
		}
		s, err := server.New(ctx, cfg)
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
	connect := func(url string) *mcp.ClientSession {
		t.Helper()
		tr := &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: tenantHeader("t1")}, DisableStandaloneSSE: true, MaxRetries: -1}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	write := func(cs *mcp.ClientSession, text string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "/ws/a.txt", "content": text}})
		if err != nil || res.IsError {
			t.Fatalf("write_file: %v %v", err, res)
		}
	}
	keys := func(prefix string) []string {
		t.Helper()
		out, err := srv.Client().ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
		if err != nil {
			t.Fatal(err)
		}
		var ks []string
		for _, o := range out.Contents {
			ks = append(ks, *o.Key)
		}
		return ks
	}
	gone := func(prefix string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for len(keys(prefix)) > 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%s still there after 30s: %q", prefix, keys(prefix))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

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
	if _, err := srv.Client().PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(leftover + "src/pkg/a.go"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	replica(func(c *server.Config) {
		c.SessionCollectLeftovers = true
		c.HTTP.SessionTimeout = 2 * time.Second
	})
	gone(leftover)
}
