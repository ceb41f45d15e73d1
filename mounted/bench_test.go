package mounted_test

import (
	"context"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/mounted"
)

// BenchmarkStat compares a Stat through the namespace with one on the
// child directly, to show what routing costs.
func BenchmarkStat(b *testing.B) {
	ctx := context.Background()
	child := memBackend(b, map[string]string{"src/pkg/file.go": "package pkg"})
	m, err := mounted.New(map[string]backend.Backend{"ws": child, "tenant": memBackend(b, nil)})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if _, err := child.Stat(ctx, "src/pkg/file.go"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mounted", func(b *testing.B) {
		for b.Loop() {
			if _, err := m.Stat(ctx, "ws/src/pkg/file.go"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
