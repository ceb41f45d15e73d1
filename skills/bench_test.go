package skills

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fencefs/fencefs/backend"
)

// skillTree writes n skills of about 1 KiB each under root.
func skillTree(tb testing.TB, b backend.Backend, root string, n int) {
	tb.Helper()
	ctx := context.Background()
	body := strings.Repeat("Follow these steps carefully.\n", 30)
	for i := range n {
		name := fmt.Sprintf("skill-%04d", i)
		data := manifest(name, "Benchmark skill number "+name+".", body)
		if err := backend.WriteFile(ctx, b, root+"/"+name+"/SKILL.md", []byte(data), backend.WriteOptions{}); err != nil {
			tb.Fatal(err)
		}
	}
}

func benchDiscover(b *testing.B, be backend.Backend, roots []string, opts Options, want int) {
	l, err := New(be, roots, opts)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		cat, err := l.Discover(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if len(cat.Skills) != want {
			b.Fatalf("found %d skills, want %d", len(cat.Skills), want)
		}
	}
}

func BenchmarkDiscover(b *testing.B) {
	b.Run("mem/1000", func(b *testing.B) {
		m := newMem()
		skillTree(b, m, "s", 1000)
		benchDiscover(b, m, []string{"s"}, Options{}, 1000)
	})
	b.Run("local/1000", func(b *testing.B) {
		dir := b.TempDir()
		l, err := newLocalAt(dir)
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		skillTree(b, l, "s", 1000)
		benchDiscover(b, l, []string{"s"}, Options{}, 1000)
	})
	// latency stands for remote storage: each read waits 1ms, so the
	// gain of reading manifests concurrently shows.
	for _, workers := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("latency-1ms/100/workers-%d", workers), func(b *testing.B) {
			m := newMem()
			skillTree(b, m, "s", 100)
			benchDiscover(b, latencyFS{m, time.Millisecond}, []string{"s"}, Options{Concurrency: workers}, 100)
		})
	}
}

// latencyFS delays every read, as a remote backend's round trip would.
type latencyFS struct {
	backend.Backend
	delay time.Duration
}

func (l latencyFS) OpenRead(ctx context.Context, name string) (backend.FileReader, error) {
	t := time.NewTimer(l.delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return l.Backend.OpenRead(ctx, name)
}

func BenchmarkActivate(b *testing.B) {
	m := newMem()
	skillTree(b, m, "a", 100)
	skillTree(b, m, "b", 100)
	l, err := New(m, []string{"missing", "b", "a"}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Activate(ctx, "skill-0050"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseManifest(b *testing.B) {
	data := []byte(manifest("bench", "A description of moderate length for the benchmark.",
		strings.Repeat("Follow these steps carefully.\n", 30)))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseManifest(data); err != nil {
			b.Fatal(err)
		}
	}
}
