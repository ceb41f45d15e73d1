package aferoadapter_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

// BenchmarkWriteFile measures an atomic write (temporary file, commit
// lock, rename) of a small file over a MemMapFs.
func BenchmarkWriteFile(b *testing.B) {
	ctx := context.Background()
	_, fs := memFS(b, map[string]string{"dir/f": "old"})
	data := bytes.Repeat([]byte("x"), 4096)
	for b.Loop() {
		if err := backend.WriteFile(ctx, fs, "dir/f", data, backend.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteFileMatchHash adds the hash of the old content, read
// under the commit lock.
func BenchmarkWriteFileMatchHash(b *testing.B) {
	ctx := context.Background()
	data := bytes.Repeat([]byte("x"), 4096)
	_, fs := memFS(b, map[string]string{"dir/f": string(data)})
	opts := backend.WriteOptions{Precondition: backend.Precondition{MatchHash: hexHash(string(data))}}
	for b.Loop() {
		if err := backend.WriteFile(ctx, fs, "dir/f", data, opts); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadFile(b *testing.B) {
	ctx := context.Background()
	_, fs := memFS(b, map[string]string{"dir/f": string(bytes.Repeat([]byte("x"), 4096))})
	for b.Loop() {
		if _, err := backend.ReadFile(ctx, fs, "dir/f"); err != nil {
			b.Fatal(err)
		}
	}
}
