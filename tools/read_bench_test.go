package tools

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/local"
)

// readBenchContent is a 4 KiB text file of 64-byte lines.
var readBenchContent = strings.Repeat(strings.Repeat("x", 63)+"\n", 64)

// BenchmarkReadFile4KiB measures read_file on a small local file, with
// containment, symlink resolution, policy, hashing and formatting:
//
//	go test ./tools -run '^$' -bench 'ReadFile4KiB|OSReadFormat4KiB'
func BenchmarkReadFile4KiB(b *testing.B) {
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "f.txt"), []byte(readBenchContent), 0o644)
	lb, err := local.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer lb.Close()
	s, err := New(lb, Options{})
	if err != nil {
		b.Fatal(err)
	}
	raw := []byte(`{"path":"f.txt"}`)
	ctx := context.Background()
	b.SetBytes(int64(len(readBenchContent)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Call(ctx, "read_file", raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOSReadFormat4KiB is the baseline: open, read, hash and format
// the same file with the standard library alone, without containment or
// policy.
func BenchmarkOSReadFormat4KiB(b *testing.B) {
	dir := b.TempDir()
	p := filepath.Join(dir, "f.txt")
	os.WriteFile(p, []byte(readBenchContent), 0o644)
	b.SetBytes(int64(len(readBenchContent)))
	b.ReportAllocs()
	for b.Loop() {
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		h := sha256.New()
		var sb strings.Builder
		sc := bufio.NewScanner(f)
		n := 0
		for sc.Scan() {
			n++
			h.Write(sc.Bytes())
			h.Write([]byte{'\n'})
			fmt.Fprintf(&sb, "%6d\t%s\n", n, sc.Text())
		}
		f.Close()
		_ = fmt.Sprintf("[f.txt | %d lines | hash:%s]\n", n, hex.EncodeToString(h.Sum(nil))[:12]) + sb.String()
	}
}
