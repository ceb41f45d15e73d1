package s3adapter_test

import (
	"errors"
	"io/fs"
	"slices"
	"testing"

	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/s3adapter"
)

// TestSharedClient opens the backends of two prefixes over one client
// that NewClient built, as a server does for its tenants: each sees only
// its own keys, and the client's fields of Config are not read again.
func TestSharedClient(t *testing.T) {
	srv := s3srv.Get(t)
	ctx := t.Context()
	base := srv.Config(containers.DefaultS3Bucket, "")
	client, err := s3adapter.NewClient(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	open := func(prefix string) *s3adapter.FS {
		t.Helper()
		cfg := s3adapter.Config{Bucket: containers.DefaultS3Bucket, Prefix: prefix, Client: client,
			SecretAccessKey: "wrong", Endpoint: "http://127.0.0.1:1"}
		f, err := s3adapter.Open(ctx, cfg)
		if err != nil {
			t.Fatalf("Open %q with a shared client: %v", prefix, err)
		}
		return f
	}
	t1, t10 := open("shared-client/t1"), open("shared-client/t10")
	mustWrite(t, t1, "a.txt", "one")
	mustWrite(t, t10, "b.txt", "ten")
	if got := listNames(t, t1, "."); !slices.Equal(got, []string{"a.txt"}) {
		t.Errorf("t1 lists %q", got)
	}
	if got := listNames(t, t10, "."); !slices.Equal(got, []string{"b.txt"}) {
		t.Errorf("t10 lists %q", got)
	}
	_, err = s3adapter.Open(ctx, s3adapter.Config{Bucket: "no-such-bucket", Client: client})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of a missing bucket with a shared client: error = %v, want fs.ErrNotExist", err)
	}
}
