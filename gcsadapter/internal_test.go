package gcsadapter

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"testing"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/fencefs/fencefs/backend"
)

// newTestClient is a client that never sends a request.
func newTestClient(t testing.TB) *storage.Client {
	t.Helper()
	c, err := storage.NewClient(context.Background(), option.WithoutAuthentication(), option.WithEndpoint("http://127.0.0.1:1/storage/v1/"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestMapError(t *testing.T) {
	api := func(code int) error { return fmt.Errorf("wrapped: %w", &googleapi.Error{Code: code}) }
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"object not found", fmt.Errorf("w: %w", storage.ErrObjectNotExist), fs.ErrNotExist},
		{"bucket not found", storage.ErrBucketNotExist, fs.ErrNotExist},
		{"404", api(404), fs.ErrNotExist},
		{"403", api(403), fs.ErrPermission},
		{"401", api(401), fs.ErrPermission},
		{"412", api(412), backend.ErrPrecondition},
		{"507", api(507), backend.ErrNoSpace},
		{"deadline", fmt.Errorf("w: %w", context.DeadlineExceeded), context.DeadlineExceeded},
		{"cancelled", fmt.Errorf("w: %w", context.Canceled), context.Canceled},
	}
	for _, tt := range tests {
		got := pathError("open", "a/b", tt.err)
		var pe *fs.PathError
		if !errors.Is(got, tt.want) || !errors.As(got, &pe) || pe.Path != "a/b" {
			t.Errorf("%s: pathError = %v, want a PathError on a/b matching %v", tt.name, got, tt.want)
		}
	}
	if err := api(500); mapError(err) != err {
		t.Errorf("an unknown answer changed: %v", mapError(err))
	}
}

func TestTransportErrorHidesURL(t *testing.T) {
	err := &url.Error{Op: "Get", URL: "http://127.0.0.1:4443/storage/v1/b/bucket/o/tenant7%2Fsecret.txt", Err: errors.New("connection refused")}
	msg := pathError("open", "secret.txt", fmt.Errorf("send: %w", err)).Error()
	if strings.Contains(msg, "tenant7") || strings.Contains(msg, "bucket") {
		t.Errorf("error %q names the bucket or the tenant prefix", msg)
	}
	if !strings.Contains(msg, "connection refused") {
		t.Errorf("error %q lost the cause", msg)
	}
}

func TestConditionalWriteError(t *testing.T) {
	failed := &googleapi.Error{Code: 412}
	tests := []struct {
		name    string
		err     error
		pre     backend.Precondition
		matched bool
		want    error
	}{
		{"create-only on an existing object", failed, backend.Precondition{CreateOnly: true}, false, fs.ErrExist},
		{"generation changed", failed, backend.Precondition{MatchVersion: "7"}, true, backend.ErrPrecondition},
		{"target gone", storage.ErrObjectNotExist, backend.Precondition{MatchVersion: "7"}, true, backend.ErrPrecondition},
		{"unconditional write to a missing bucket", storage.ErrBucketNotExist, backend.Precondition{}, false, fs.ErrNotExist},
	}
	for _, tt := range tests {
		if got := conditionalWriteError("commit", "f", tt.err, tt.pre, tt.matched); !errors.Is(got, tt.want) {
			t.Errorf("%s: %v, want a match for %v", tt.name, got, tt.want)
		}
	}
}

func TestNewPrefix(t *testing.T) {
	tests := []struct {
		prefix, want string
		ok           bool
	}{
		{"", "", true},
		{"tenant1", "tenant1/", true},
		{"tenant1/", "tenant1/", true},
		{"a/b", "a/b/", true},
		{"/abs", "", false},
		{"a/../b", "", false},
		{".", "", false},
		{"~x", "", false},
	}
	for _, tt := range tests {
		f, err := New(newTestClient(t), "b", tt.prefix, Options{})
		if (err == nil) != tt.ok {
			t.Errorf("New(prefix %q) error = %v, want ok=%v", tt.prefix, err, tt.ok)
			continue
		}
		if err == nil && f.keys.Prefix() != tt.want {
			t.Errorf("New(prefix %q) name prefix = %q, want %q", tt.prefix, f.keys.Prefix(), tt.want)
		}
	}
}

func TestCheckPath(t *testing.T) {
	f, err := New(newTestClient(t), "b", strings.Repeat("p", 500), Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		want error
	}{
		{".", nil},
		{"a/b.txt", nil},
		{"tab\there", nil},
		{strings.Repeat("n", MaxNameBytes), nil},
		{strings.Repeat("n", MaxNameBytes+1), backend.ErrNameTooLong},
		{strings.Repeat("abc/", 140) + "f", backend.ErrNameTooLong},
		{"a//b", backend.ErrInvalidPath},
		{"/a", backend.ErrInvalidPath},
		{"a/./b", backend.ErrInvalidPath},
		{"a/../b", backend.ErrInvalidPath},
		{"a/", backend.ErrInvalidPath},
		{"nul\x00", backend.ErrInvalidPath},
		{"~a", backend.ErrInvalidPath},
	}
	for _, tt := range tests {
		err := f.keys.Check("stat", tt.name)
		if (tt.want == nil) != (err == nil) || (tt.want != nil && !errors.Is(err, tt.want)) {
			t.Errorf("Check(%.20q...) = %v, want %v", tt.name, err, tt.want)
		}
	}
}
