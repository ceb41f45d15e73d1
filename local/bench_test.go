//go:build linux

package local

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchFS returns the backend variants to measure over root, by name.
func benchFS(b *testing.B, root string) []struct {
	name string
	fs   *FS
} {
	b.Helper()
	return []struct {
		name string
		fs   *FS
	}{
		{"local", openTestFS(b, opener{"openat2", false}, root)},
		{"local-fallback", openTestFS(b, opener{"root", true}, root)},
	}
}

// BenchmarkOpenRead reads a 4 KiB file: OpenRead, read to EOF, Close;
// next to os.ReadFile.
func BenchmarkOpenRead(b *testing.B) {
	root := b.TempDir()
	makeTree(b, root, tree{"d/f": strings.Repeat("x", 4096)})
	ctx := context.Background()
	buf := make([]byte, 8192)
	for _, v := range benchFS(b, root) {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r, err := v.fs.OpenRead(ctx, "d/f")
				if err != nil {
					b.Fatal(err)
				}
				if n, err := io.ReadFull(r, buf); n != 4096 || err != io.ErrUnexpectedEOF {
					b.Fatal(n, err)
				}
				r.Close()
			}
		})
	}
	b.Run("os.ReadFile", func(b *testing.B) {
		b.ReportAllocs()
		p := filepath.Join(root, "d/f")
		for b.Loop() {
			if data, err := os.ReadFile(p); err != nil || len(data) != 4096 {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkStat stats a file one directory down; next to os.Lstat.
func BenchmarkStat(b *testing.B) {
	root := b.TempDir()
	makeTree(b, root, tree{"d/f": "x"})
	ctx := context.Background()
	for _, v := range benchFS(b, root) {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.fs.Stat(ctx, "d/f"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("os.Lstat", func(b *testing.B) {
		b.ReportAllocs()
		p := filepath.Join(root, "d/f")
		for b.Loop() {
			if _, err := os.Lstat(p); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkList lists a directory of 1000 files. List reports sizes and
// modification times, so os.ReadDir plus Info for every entry is the
// like-for-like comparison; bare os.ReadDir reads only names and types.
func BenchmarkList(b *testing.B) {
	root := b.TempDir()
	dir := filepath.Join(root, "d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("file-%04d.txt", i)), []byte("x"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	for _, v := range benchFS(b, root) {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if entries, err := v.fs.List(ctx, "d"); err != nil || len(entries) != 1000 {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("os.ReadDir", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if entries, err := os.ReadDir(dir); err != nil || len(entries) != 1000 {
				b.Fatal(err)
			}
		}
	})
	b.Run("os.ReadDir+Info", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			entries, err := os.ReadDir(dir)
			if err != nil || len(entries) != 1000 {
				b.Fatal(err)
			}
			for _, e := range entries {
				if _, err := e.Info(); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
