package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/fencefs/fencefs/local"
)

// BenchmarkSmallCalls measures the other cheap calls a host makes most,
// on local disk: list_directory of 20 entries and file_info of a 4 KiB
// text file.
//
//	go test ./tools -run '^$' -bench 'SmallCalls' -benchmem
func BenchmarkSmallCalls(b *testing.B) {
	dir := b.TempDir()
	for i := range 18 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("file%02d.go", i)), []byte("package x\n"), 0o644)
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
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
	ctx := context.Background()
	for _, c := range []struct{ tool, args string }{
		{"list_directory", `{"path":"."}`},
		{"file_info", `{"path":"f.txt"}`},
	} {
		b.Run(c.tool, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Call(ctx, c.tool, []byte(c.args)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
