package sftpadapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/tools"
)

// TestSFTPNoSpace fills a 1 MiB tmpfs on a real OpenSSH server. The server
// answers the full disk with SFTP's generic failure; the adapter asks
// statvfs@openssh.com and reports backend.ErrNoSpace, the tools say so,
// and nothing of the failed writes is left.
func TestSFTPNoSpace(t *testing.T) {
	ctx := context.Background()
	small := containers.SFTPHome + "/small"
	srv := containers.StartSFTP(ctx, t, containers.WithTmpfs(small, "size=1m"))
	b, err := srv.Dial(ctx, small)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	big := bytes.Repeat([]byte("x"), 2<<20)

	err = backend.WriteFile(ctx, b, "big.bin", big, backend.WriteOptions{})
	if !errors.Is(err, backend.ErrNoSpace) {
		t.Fatalf("writing 2 MiB into 1 MiB: error = %v, want backend.ErrNoSpace", err)
	}
	wantEmpty(ctx, t, srv, small)

	set, err := tools.New(b, tools.Options{})
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"path": "big.txt", "content": string(big)})
	_, err = set.Call(ctx, "write_file", args)
	const want = "Storage failure: no space is left on the storage. Details are in the server's log."
	if got := tools.Message(err); got != want || tools.IsRetry(err) {
		t.Errorf("write_file of 2 MiB: %q (retry %v), want the fatal %q", got, tools.IsRetry(err), want)
	}
	wantEmpty(ctx, t, srv, small)

	// The failure broke nothing: a write that fits lands.
	if err := backend.WriteFile(ctx, b, "fits.txt", []byte("fits"), backend.WriteOptions{}); err != nil {
		t.Fatalf("a small write after the full disk: %v", err)
	}
	if got, err := backend.ReadFile(ctx, b, "fits.txt"); err != nil || string(got) != "fits" {
		t.Errorf("ReadFile(fits.txt) = %q, %v", got, err)
	}
}

// TestSFTPNoInodes runs a tmpfs on a real OpenSSH server out of inodes:
// creating a directory or a write's temporary file fails with SFTP's
// generic failure, which the adapter reports as backend.ErrNoSpace.
func TestSFTPNoInodes(t *testing.T) {
	ctx := context.Background()
	few := containers.SFTPHome + "/few"
	srv := containers.StartSFTP(ctx, t, containers.WithTmpfs(few, "size=1m", "nr_inodes=4"))
	b, err := srv.Dial(ctx, few)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	// Spend the inodes the root leaves, then ask for more.
	var mkErr error
	for i := range 8 {
		if mkErr = b.MkdirAll(ctx, fmt.Sprintf("d%d", i)); mkErr != nil {
			break
		}
	}
	if !errors.Is(mkErr, backend.ErrNoSpace) {
		t.Fatalf("MkdirAll with no inodes left: error = %v, want backend.ErrNoSpace", mkErr)
	}
	err = backend.WriteFile(ctx, b, "f.txt", []byte("x"), backend.WriteOptions{})
	if !errors.Is(err, backend.ErrNoSpace) {
		t.Fatalf("a write with no inodes left: error = %v, want backend.ErrNoSpace", err)
	}
}

// TestSFTPReadOnlyStorage writes onto a read-only tmpfs of a real OpenSSH
// server, which answers EROFS with SFTP's generic failure: the adapter
// reports backend.ErrReadOnlyStorage from statvfs@openssh.com's flags.
func TestSFTPReadOnlyStorage(t *testing.T) {
	ctx := context.Background()
	ro := containers.SFTPHome + "/ro"
	srv := containers.StartSFTP(ctx, t, containers.WithReadOnlyTmpfs(ro))
	b, err := srv.Dial(ctx, ro)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	err = backend.WriteFile(ctx, b, "f.txt", []byte("x"), backend.WriteOptions{})
	if !errors.Is(err, backend.ErrReadOnlyStorage) {
		t.Fatalf("writing onto a read-only file system: error = %v, want backend.ErrReadOnlyStorage", err)
	}
	wantEmpty(ctx, t, srv, ro)
}

// wantEmpty fails unless the server directory dir holds nothing, no
// temporary file either.
func wantEmpty(ctx context.Context, t *testing.T, srv *containers.SFTPServer, dir string) {
	t.Helper()
	c, err := srv.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := c.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("%s holds %q (%d bytes) after a failed write", dir, e.Name(), e.Size())
	}
}
