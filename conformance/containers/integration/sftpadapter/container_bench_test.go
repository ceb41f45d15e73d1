package sftpadapter_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"syscall"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/sftpadapter"
)

// benchSFTP starts a server for a benchmark and dials a backend on a fresh
// root.
func benchSFTP(b *testing.B) (*containers.SFTPServer, *sftpadapter.FS, string) {
	b.Helper()
	ctx := context.Background()
	srv := containers.StartSFTP(ctx, b)
	root, err := srv.NewRoot(ctx)
	if err != nil {
		b.Fatal(err)
	}
	fsys, err := srv.Dial(ctx, root)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { fsys.Close() })
	return srv, fsys, root
}

// BenchmarkSFTPWalk10k walks 10,000 files in 100 directories on the real
// server, with the adapter's level-by-level Walker and with a List per
// directory.
func BenchmarkSFTPWalk10k(b *testing.B) {
	srv, fsys, root := benchSFTP(b)
	ctx := context.Background()
	script := fmt.Sprintf(`set -e; cd %s; for d in $(seq -w 1 100); do mkdir d$d; (cd d$d && touch $(seq -f f%%03g 1 100)); done; chown -R %s: .`,
		containers.ShellQuote(root), containers.SFTPUser)
	if out, err := srv.Exec(ctx, script); err != nil {
		b.Fatalf("seeding: %v\n%s", err, out)
	}
	for _, bc := range []struct {
		name string
		b    backend.Backend
	}{
		{"Walker", fsys},
		{"ListPerDir", struct{ backend.Backend }{fsys}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				n := 0
				err := backend.Walk(ctx, bc.b, ".", func(string, backend.DirEntry) error { n++; return nil })
				if err != nil || n != 10100 {
					b.Fatalf("walked %d entries: %v", n, err)
				}
			}
		})
	}
}

// countingReader produces n bytes of a repeating pattern without holding
// them.
type countingReader struct{ left int64 }

func (r *countingReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), r.left)]
	for i := range p {
		p[i] = byte(i)
	}
	r.left -= int64(len(p))
	return len(p), nil
}

// BenchmarkSFTPStream1GiB writes 1 GiB through the backend and reads it
// back, and reports the process's peak resident set size, which must stay
// bounded (the goal is under 64 MiB) whatever the file size. Run it alone:
//
//	go test -run '^$' -bench SFTPStream1GiB -benchtime 1x ./conformance/containers/
func BenchmarkSFTPStream1GiB(b *testing.B) {
	_, fsys, _ := benchSFTP(b)
	ctx := context.Background()
	const size = 1 << 30
	for b.Loop() {
		w, err := fsys.OpenWrite(ctx, "big", backend.WriteOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(w, &countingReader{left: size}); err != nil {
			b.Fatal(err)
		}
		if err := w.Commit(); err != nil {
			b.Fatal(err)
		}
		w.Close()
		r, err := fsys.OpenRead(ctx, "big")
		if err != nil {
			b.Fatal(err)
		}
		h := sha256.New()
		n, err := io.Copy(h, r)
		r.Close()
		if err != nil || n != size {
			b.Fatalf("read %d bytes: %v", n, err)
		}
	}
	b.SetBytes(2 * size)
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MiB")
	}
}
