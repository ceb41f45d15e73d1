package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/mountspec"
	"github.com/fencefs/fencefs/server"
)

// requestLog is a reverse proxy on 127.0.0.1 in front of an S3 server
// that records each request's method and path, so that requests are
// counted from outside the client.
type requestLog struct {
	url string
	mu  sync.Mutex
	log []string
}

func startRequestLog(t *testing.T, target string) *requestLog {
	t.Helper()
	to, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &requestLog{url: "http://" + ln.Addr().String()}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(to)
		r.Out.Host = r.In.Host // the request is signed for the host dialled
	}}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.log = append(p.log, r.Method+" "+r.URL.Path)
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return p
}

// take returns the requests recorded since the last take.
func (p *requestLog) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	log := p.log
	p.log = nil
	return log
}

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
	proxy := startRequestLog(t, srv.Endpoint)
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	t.Setenv("AWS_REGION", srv.Region)
	st := mountspec.New(mountspec.Options{})
	t.Cleanup(st.Close)
	logger := slog.New(slog.DiscardHandler)
	open := func(tn string) *server.Namespace {
		t.Helper()
		ms, err := mountspec.Parse("s3://" + bucket + "/tenants/" + tn + "?endpoint=" + proxy.url + "&region=" + srv.Region + "&path_style=1")
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
	proxy.take()
	first := open("t0")
	opened := proxy.take()
	read(first, "t0")
	firstCall := proxy.take()
	t.Logf("first tenant: open %q, read_file %q", opened, firstCall)
	if len(opened) != 1 || !strings.HasPrefix(opened[0], "HEAD ") {
		t.Errorf("the first tenant's open sent %q, want one HeadBucket", opened)
	}

	// A warm tenant's call, then cold tenants: open and call.
	read(first, "t0")
	warm := proxy.take()
	for i := 1; i < tenants; i++ {
		tn := "t" + string(rune('0'+i))
		ns := open(tn)
		read(ns, tn)
		cold := proxy.take()
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
