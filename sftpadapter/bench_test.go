package sftpadapter

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/pkg/sftp"
)

// These benchmarks count SFTP requests per call against the in-process
// server (which, like OpenSSH, answers READDIR with up to 100 names); the
// times they report are those of a pipe, not of a network.

// requests returns how many requests the FS's current session has sent.
func requests(f *FS) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cur.reqs.sent.Load()
}

// seed creates dirs directories of files empty files each under "tree".
func seed(b *testing.B, f *FS, dirs, files int) {
	b.Helper()
	ctx := context.Background()
	err := f.do(ctx, false, func(s *session) error {
		if err := s.client.Mkdir(f.remote("tree")); err != nil {
			return err
		}
		for d := range dirs {
			dir := fmt.Sprintf("tree/d%03d", d)
			if err := s.client.Mkdir(f.remote(dir)); err != nil {
				return err
			}
			for i := range files {
				file, err := s.client.Create(f.remote(fmt.Sprintf("%s/f%03d", dir, i)))
				if err != nil {
					return err
				}
				file.Close()
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

func benchFS(b *testing.B) *FS {
	b.Helper()
	f, _ := pipeFS(b, sftp.InMemHandler())
	return f
}

// BenchmarkList lists a directory of 1000 files.
func BenchmarkList(b *testing.B) {
	f := benchFS(b)
	seed(b, f, 1, 1000)
	ctx := context.Background()
	before := requests(f)
	for b.Loop() {
		if _, err := f.List(ctx, "tree/d000"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(requests(f)-before)/float64(b.N), "requests/op")
}

// BenchmarkWalk walks 10,000 files in 100 directories with the level-
// by-level Walker, and, for comparison, with a List per directory.
func BenchmarkWalk(b *testing.B) {
	f := benchFS(b)
	seed(b, f, 100, 100)
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		walk func(fn backend.WalkFunc) error
	}{
		{"Walker", func(fn backend.WalkFunc) error { return f.Walk(ctx, "tree", fn) }},
		{"ListPerDir", func(fn backend.WalkFunc) error { return backend.Walk(ctx, listOnly{f}, "tree", fn) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			before := requests(f)
			for b.Loop() {
				n := 0
				if err := bc.walk(func(string, backend.DirEntry) error { n++; return nil }); err != nil {
					b.Fatal(err)
				}
				if n != 10100 {
					b.Fatalf("walked %d entries", n)
				}
			}
			b.ReportMetric(float64(requests(f)-before)/float64(b.N), "requests/op")
		})
	}
}

// listOnly offers only the required interface of an FS, hiding its
// Walker.
type listOnly struct{ f *FS }

func (l listOnly) OpenRead(ctx context.Context, name string) (backend.FileReader, error) {
	return l.f.OpenRead(ctx, name)
}

func (l listOnly) List(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	return l.f.List(ctx, dir)
}

// BenchmarkStatDeep stats a file eight directories down: the ancestor
// checks are sent together.
func BenchmarkStatDeep(b *testing.B) {
	f := benchFS(b)
	ctx := context.Background()
	name := strings.Repeat("d/", 8) + "f"
	if err := backend.WriteFile(ctx, f, name, []byte("x"), backend.WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	before := requests(f)
	for b.Loop() {
		if _, err := f.Stat(ctx, name); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(requests(f)-before)/float64(b.N), "requests/op")
}
