package tools

import (
	"context"
	"fmt"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

// BenchmarkDeleteTree measures the recursive delete of a tree of 1,000
// entries (10 directories of 99 files) in memory, where the tool's own
// work is all there is. "listened" adds a change listener, for which the
// delete collects the entries it walks (ChangeRequest.Entries) and holds
// its removal to them; "quiet" has none. The tree is rebuilt, untimed,
// before each delete.
//
//	go test ./tools -run '^$' -bench 'DeleteTree' -benchmem
func BenchmarkDeleteTree(b *testing.B) {
	for _, listened := range []bool{false, true} {
		name := "quiet"
		if listened {
			name = "listened"
		}
		b.Run(name, func(b *testing.B) {
			m := newMemFS()
			opts := Options{Tools: AllTools()}
			if listened {
				opts.OnChangeRequest = func(context.Context, *ChangeRequest) error { return nil }
			}
			s, err := New(m, opts)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			build := func() {
				for d := range 10 {
					dir := fmt.Sprintf("t/d%d", d)
					if err := backend.MkdirAll(ctx, m, dir); err != nil {
						b.Fatal(err)
					}
					for f := range 99 {
						if err := backend.WriteFile(ctx, m, fmt.Sprintf("%s/f%02d.txt", dir, f), []byte("x\n"), backend.WriteOptions{}); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
			raw := []byte(`{"path":"t","recursive":true}`)
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				build()
				b.StartTimer()
				if _, err := s.Call(ctx, "delete_file", raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
