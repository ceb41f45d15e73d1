package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/mountspec"
	"github.com/fencefs/fencefs/server"
)

// TestS3ColdTenantCostsNoRequest: on S3, once a tenant has reached the
// bucket, a cold tenant's first read_file (its namespace opened for the
// call) sends exactly the requests a warm tenant's read_file sends, no
// HeadBucket of its own; the first tenant of the bucket checks it once.
// Requests are counted by a proxy in front of versitygw.
func TestS3ColdTenantCostsNoRequest(t *testing.T) {
	ctx := t.Context()
	containers.SetTestcontainersDefaults()
	srv := containers.StartS3(ctx, t)
	bucket := srv.NewBucket(ctx, t)
	client := srv.Client()
	const tenants = 4
	for i := range tenants {
		tn := "t" + string(rune('0'+i))
		if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("tenants/" + tn + "/r.txt"),
			Body: strings.NewReader("content of " + tn + "\n")}); err != nil {
			t.Fatal(err)
		}
	}
	// The requests are signed for the host the client dials.
	proxy := containers.StartRequestLog(t, srv.Endpoint, containers.RequestLogOptions{KeepHost: true})
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	t.Setenv("AWS_REGION", srv.Region)
	st := mountspec.New(mountspec.Options{})
	t.Cleanup(st.Close)
	logger := slog.New(slog.DiscardHandler)
	open := func(tn string) *server.Namespace {
		t.Helper()
		ms, err := mountspec.Parse("s3://" + bucket + "/tenants/" + tn + "?endpoint=" + proxy.URL + "&region=" + srv.Region + "&path_style=1")
		if err != nil {
			t.Fatal(err)
		}
		nc := server.NamespaceConfig{Mounts: []server.Mount{{Name: "ws", Spec: ms}}, StorageTimeout: 30 * time.Second, Logger: logger}
		ns, err := server.OpenNamespace(ctx, nc, st)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ns.Close() })
		return ns
	}
	read := func(ns *server.Namespace, tn string) {
		t.Helper()
		text, err := ns.Tools().Call(context.WithoutCancel(ctx), "read_file", json.RawMessage(`{"path":"/ws/r.txt"}`))
		if err != nil || !strings.Contains(text, "content of "+tn) {
			t.Fatalf("%s reads r.txt: %q, %v", tn, text, err)
		}
	}

	// The bucket's first tenant: the open checks the bucket.
	proxy.Take()
	first := open("t0")
	opened := proxy.Take()
	read(first, "t0")
	firstCall := proxy.Take()
	t.Logf("first tenant: open %q, read_file %q", opened, firstCall)
	if len(opened) != 1 || !strings.HasPrefix(opened[0], "HEAD ") {
		t.Errorf("the first tenant's open sent %q, want one HeadBucket", opened)
	}

	// A warm tenant's call, then cold tenants: open and call.
	read(first, "t0")
	warm := proxy.Take()
	for i := 1; i < tenants; i++ {
		tn := "t" + string(rune('0'+i))
		ns := open(tn)
		read(ns, tn)
		cold := proxy.Take()
		t.Logf("cold tenant %s: %q; warm: %q", tn, cold, warm)
		if len(cold) != len(warm) {
			t.Errorf("cold tenant %s sent %d requests (%q), a warm one %d (%q)", tn, len(cold), cold, len(warm), warm)
		}
		for _, r := range cold {
			if strings.HasPrefix(r, "HEAD /"+bucket) && strings.TrimSuffix(strings.TrimPrefix(r, "HEAD /"), "/") == bucket {
				t.Errorf("cold tenant %s checked the bucket again: %q", tn, cold)
			}
		}
	}
}
