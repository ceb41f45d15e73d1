package main

import (
	"testing"
	"time"

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
