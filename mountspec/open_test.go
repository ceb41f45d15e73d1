package mountspec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fencefs/fencefs/backend"
)

// TestOpenerSharesS3Clients: the namespaces of one server get one S3
// client per mount name, endpoint, region, addressing and timeout, so the
// tenants of a template share its connections.
func TestOpenerSharesS3Clients(t *testing.T) {
	ctx := t.Context()
	o := New(Options{})
	defer o.Close()
	spec := S3Spec{Bucket: "b", Prefix: "tenants/t1", Endpoint: "http://127.0.0.1:9", Region: "eu-west-1", PathStyle: true}
	client := func(mount string, s S3Spec, timeout time.Duration) any {
		t.Helper()
		c, err := o.s3Client(ctx, mount, s, timeout)
		if err != nil || c == nil {
			t.Fatalf("s3Client(%s, %+v): %v, %v", mount, s, c, err)
		}
		return c
	}
	first := client("ws", spec, time.Second)
	other := spec
	other.Bucket, other.Prefix = "b2", "tenants/t2"
	if client("ws", other, time.Second) != first {
		t.Error("another bucket and prefix on the same endpoint got a client of its own")
	}
	for name, c := range map[string]any{
		"another mount":    client("archive", spec, time.Second),
		"another endpoint": client("ws", S3Spec{Endpoint: "http://127.0.0.1:10", Region: "eu-west-1", PathStyle: true}, time.Second),
		"another region":   client("ws", S3Spec{Endpoint: spec.Endpoint, Region: "us-east-1", PathStyle: true}, time.Second),
		"another timeout":  client("ws", spec, time.Minute),
	} {
		if c == first {
			t.Errorf("%s shares the first client", name)
		}
	}
	var none *Opener
	if c, err := none.s3Client(ctx, "ws", spec, time.Second); c != nil || err != nil {
		t.Errorf("no shared storage: %v, %v", c, err)
	}
}

// TestOpenerSharesBackends: two tenants get the same backend for a mount
// spec they share and their own for their own specs; the shared one stays
// open while a holder holds it, and is closed once none does and the
// opener closes.
func TestOpenerSharesBackends(t *testing.T) {
	ctx := t.Context()
	base := t.TempDir()
	for _, d := range []string{"shared", "t1", "t2"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(base, "shared", "s.txt"), []byte("shared\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := New(Options{})
	open := func(dir string) (backend.Backend, func()) {
		t.Helper()
		s, err := Parse("local:" + filepath.Join(base, dir))
		if err != nil {
			t.Fatal(err)
		}
		b, c, err := o.Open(ctx, "m", s, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return b, func() { c.Close() }
	}
	shared, close1 := open("shared")
	shared2, close2 := open("shared")
	if shared2 != shared {
		t.Error("the shared mount was opened twice")
	}
	ws1, closeWS1 := open("t1")
	ws2, closeWS2 := open("t2")
	defer closeWS1()
	defer closeWS2()
	if ws1 == ws2 {
		t.Error("two tenants' own mounts are one backend")
	}
	close1()
	if _, err := backend.Stat(ctx, shared, "s.txt"); err != nil {
		t.Fatalf("the shared mount after the other holder closed: %v", err)
	}
	close2()
	o.Close()
	if _, err := backend.Stat(ctx, shared, "s.txt"); err == nil {
		t.Error("the shared mount is still open after every holder and the opener closed")
	}
}

// TestOpenReadOnlyAndProbe: a read-only spec refuses changes, and Probe
// names a mount whose directory is missing.
func TestOpenReadOnlyAndProbe(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s, err := Parse("local:" + dir + ":ro")
	if err != nil {
		t.Fatal(err)
	}
	var o *Opener // shares nothing
	b, c, err := o.Open(ctx, "ro", s, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := backend.MkdirAll(ctx, b, "x"); err == nil {
		t.Error("a read-only mount made a directory")
	}
	if err := o.Probe(ctx, "ro", s, time.Second); err != nil {
		t.Errorf("probe of a good mount: %v", err)
	}
	missing, _ := Parse("local:" + filepath.Join(dir, "missing"))
	if err := o.Probe(ctx, "gone", missing, time.Second); err == nil || !strings.Contains(err.Error(), `mount "gone"`) {
		t.Errorf("probe of a missing directory: %v", err)
	}
}
