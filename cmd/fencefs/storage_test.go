package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/cmd/fencefs/internal/config"
)

// TestStorageSharesS3Clients: the namespaces of one server get one S3
// client per mount name, endpoint, region, addressing and timeout, so the
// tenants of a template share its connections.
func TestStorageSharesS3Clients(t *testing.T) {
	ctx := t.Context()
	st := newStorage(nil)
	spec := config.S3Spec{Bucket: "b", Prefix: "tenants/t1", Endpoint: "http://127.0.0.1:9", Region: "eu-west-1", PathStyle: true}
	client := func(mount string, s config.S3Spec, timeout time.Duration) any {
		t.Helper()
		c, err := st.s3Client(ctx, mount, s, timeout)
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
		"another endpoint": client("ws", config.S3Spec{Endpoint: "http://127.0.0.1:10", Region: "eu-west-1", PathStyle: true}, time.Second),
		"another region":   client("ws", config.S3Spec{Endpoint: spec.Endpoint, Region: "us-east-1", PathStyle: true}, time.Second),
		"another timeout":  client("ws", spec, time.Minute),
	} {
		if c == first {
			t.Errorf("%s shares the first client", name)
		}
	}
	var none *storage
	if c, err := none.s3Client(ctx, "ws", spec, time.Second); c != nil || err != nil {
		t.Errorf("no shared storage: %v, %v", c, err)
	}
}

// TestStorageSharesBackends: two tenants' namespaces get the same backend
// for a mount spec they share and their own for their own specs; the
// shared one stays open while a namespace holds it, and is closed once
// none does and the server's storage closes.
func TestStorageSharesBackends(t *testing.T) {
	ctx := t.Context()
	base := t.TempDir()
	for _, d := range []string{"shared", "t1", "t2"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(base, "shared", "s.txt"), "shared\n")
	st := newStorage(nil)
	logger := slog.New(slog.DiscardHandler)
	open := func(tn string) *namespace {
		t.Helper()
		s := config.Defaults()
		for name, dir := range map[string]string{"shared": "shared", "ws": tn} {
			ms, err := config.ParseMountSpec("local:" + filepath.Join(base, dir))
			if err != nil {
				t.Fatal(err)
			}
			s.Mounts = append(s.Mounts, config.Mount{Name: name, Spec: ms})
		}
		ns, err := openSharing(ctx, &s, logger, st)
		if err != nil {
			t.Fatal(err)
		}
		return ns
	}
	ns1, ns2 := open("t1"), open("t2")
	shared := ns1.children["shared"]
	if ns2.children["shared"] != shared {
		t.Error("the shared mount was opened twice")
	}
	if ns1.children["ws"] == ns2.children["ws"] {
		t.Error("two tenants' own mounts are one backend")
	}
	ns1.Close()
	if _, err := backend.Stat(ctx, shared, "s.txt"); err != nil {
		t.Fatalf("the shared mount after the other namespace closed: %v", err)
	}
	ns2.Close()
	st.Close()
	if _, err := backend.Stat(ctx, shared, "s.txt"); err == nil {
		t.Error("the shared mount is still open after every holder and the storage closed")
	}
}
