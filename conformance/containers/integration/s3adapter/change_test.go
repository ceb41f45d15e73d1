package s3adapter_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/s3adapter"
)

// TestRemoveAllRequests removes a tree of 2,520 keys: one listing pass
// and one DeleteObjects per 1000 keys, whatever the number of files.
func TestRemoveAllRequests(t *testing.T) {
	srv := s3srv.Get(t)
	ctx := t.Context()
	bucket := srv.NewBucket(ctx, t)
	var keys []string
	for i := range 2500 {
		keys = append(keys, fmt.Sprintf("p/tree/big/f%04d", i))
	}
	for d := range 2 {
		for i := range 10 {
			keys = append(keys, fmt.Sprintf("p/tree/s%d/f%02d", d, i))
		}
	}
	keys = append(keys, "p/keep")
	putKeys(t, srv.Client(), bucket, keys)
	f, c := countedBackend(t, srv, bucket, "p")
	if err := backend.RemoveAll(ctx, f, "tree", backend.RemoveAllOptions{}); err != nil {
		t.Fatalf("RemoveAll: %v", err)
	}
	t.Logf("RemoveAll of %d keys: %d requests, %d listings, %d DeleteObjects", len(keys)-1, c.all.Load(), c.lists.Load(), c.deletes.Load())
	if got := c.deletes.Load(); got != 3 {
		t.Errorf("RemoveAll of 2,520 keys sent %d DeleteObjects, want 3", got)
	}
	// The tree's Stat (1), the walk (3 pages), the batches (3), and for each
	// of the 4 directories, gone with their last key, a Stat (1).
	if got := c.all.Load(); got != 11 {
		t.Errorf("RemoveAll of 2,520 keys sent %d requests, want 11", got)
	}
	if _, err := f.Stat(ctx, "tree"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat(tree) after RemoveAll = %v, want fs.ErrNotExist", err)
	}
	entries, err := f.List(ctx, ".")
	if err != nil || len(entries) != 1 || entries[0].Name != "keep" {
		t.Errorf("List(.) after RemoveAll = %+v, %v; want only keep", entries, err)
	}
}

// TestMultipartCopy copies an object of three parts (CopyPartSize 5 MiB),
// as an object above 5 GiB is copied, with and without a target
// precondition, and moves it the same way.
func TestMultipartCopy(t *testing.T) {
	srv := s3srv.Get(t)
	ctx := t.Context()
	h := srv.Harness(ctx, t)
	h.Configure = func(c *s3adapter.Config) { c.Options.CopyPartSize = s3adapter.MinPartSize }
	b := h.MakeBackend(ctx, t)
	data := bytes.Repeat([]byte("0123456789abcdef"), (2*s3adapter.MinPartSize+12345)/16)
	if err := backend.WriteFile(ctx, b, "big", data, backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	sum := hashHex(data)
	tests := []struct {
		to   string
		opts backend.CopyOptions
	}{
		{"plain", backend.CopyOptions{}},
		{"created", backend.CopyOptions{Precondition: backend.Precondition{CreateOnly: true}, Source: backend.Precondition{MatchHash: sum}}},
	}
	for _, tt := range tests {
		if err := backend.Copy(ctx, b, "big", tt.to, tt.opts); err != nil {
			t.Fatalf("Copy to %s: %v", tt.to, err)
		}
		if got, err := backend.ReadFile(ctx, b, tt.to); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("copy %s holds %d bytes (%v), want the %d bytes of the source", tt.to, len(got), err, len(data))
		}
	}
	err := backend.Copy(ctx, b, "big", "created", backend.CopyOptions{Precondition: backend.Precondition{CreateOnly: true}})
	if !errors.Is(err, fs.ErrExist) {
		t.Errorf("a CreateOnly multipart copy onto an existing object = %v, want fs.ErrExist", err)
	}
	if err := backend.Rename(ctx, b, "big", "moved/big", backend.RenameOptions{Source: backend.Precondition{MatchHash: sum}}); err != nil {
		t.Fatalf("Rename: %v", err)
	}
	if got, err := backend.ReadFile(ctx, b, "moved/big"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("moved object holds %d bytes (%v), want %d", len(got), err, len(data))
	}
	if _, err := backend.Stat(ctx, b, "big"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat of the moved source = %v, want fs.ErrNotExist", err)
	}
}

// hashHex is the form of Precondition.MatchHash.
func hashHex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
