package s3adapter_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/s3adapter"
)

// Environment of the big streaming test.
const (
	envBig      = "FENCEFS_BIG"       // "1" runs TestBigStream
	envBigChild = "FENCEFS_BIG_CHILD" // the child's S3 endpoint
	bigSize     = 1 << 30
	rssGoalKiB  = 64 << 10
)

// TestBigStream streams a 1 GiB object in and out through the backend in
// a child process and checks the child's peak resident set (VmHWM)
// against the 64 MiB goal. It runs only with FENCEFS_BIG=1 and without
// the race detector, whose shadow memory would dominate the number:
//
//	FENCEFS_BIG=1 go test -run TestBigStream -v ./s3adapter/
func TestBigStream(t *testing.T) {
	if os.Getenv(envBig) != "1" {
		t.Skipf("skipped: set %s=1 to stream 1 GiB through S3 and measure peak RSS", envBig)
	}
	if raceEnabled {
		t.Skip("skipped under -race: the race detector's memory would be measured, not the backend's")
	}
	srv := s3srv.Get(t)
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestBigStreamChild$", "-test.v", "-test.timeout=15m")
	cmd.Env = append(os.Environ(), envBigChild+"="+srv.Endpoint)
	out, err := cmd.CombinedOutput()
	t.Logf("child output:\n%s", out)
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	hwm := -1
	for line := range strings.Lines(string(out)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "peak-rss-kib:"); ok {
			hwm, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if hwm < 0 {
		t.Fatal("the child did not report its peak RSS")
	}
	t.Logf("peak RSS streaming 1 GiB in and out: %d KiB (%.1f MiB), goal under %d MiB", hwm, float64(hwm)/1024, rssGoalKiB/1024)
	if hwm >= rssGoalKiB {
		t.Errorf("peak RSS %d KiB, want under %d KiB", hwm, rssGoalKiB)
	}
}

// TestBigStreamChild is the measured half of TestBigStream: it writes a
// generated 1 GiB stream (never held in memory) with the default part
// size, reads it back, compares the hashes and prints its VmHWM.
func TestBigStreamChild(t *testing.T) {
	endpoint := os.Getenv(envBigChild)
	if endpoint == "" {
		t.Skip("skipped: runs only as TestBigStream's child process")
	}
	ctx := t.Context()
	srv := &containers.S3Server{Endpoint: endpoint, AccessKey: "fencefs", SecretKey: "fencefs-secret", Region: "us-east-1"}
	cfg := srv.Config(containers.DefaultS3Bucket, fmt.Sprintf("big-%d", time.Now().UnixNano()))
	cfg.Options = s3adapter.Options{} // the defaults: 8 MiB parts
	f := srv.Open(t, cfg)

	start := time.Now()
	w, err := f.OpenWrite(ctx, "big.bin", backend.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	in := sha256.New()
	if _, err := io.Copy(io.MultiWriter(w, in), io.LimitReader(&generator{}, bigSize)); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	wrote := time.Since(start)

	start = time.Now()
	r, err := f.OpenRead(ctx, "big.bin")
	if err != nil {
		t.Fatal(err)
	}
	out := sha256.New()
	n, err := io.Copy(out, r)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	read := time.Since(start)
	if n != bigSize || !bytes.Equal(in.Sum(nil), out.Sum(nil)) {
		t.Fatalf("read back %d bytes with a different hash", n)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	hwm, err := vmHWM()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("write %v (%.0f MiB/s), read %v (%.0f MiB/s), HeapSys %d KiB",
		wrote.Round(time.Millisecond), float64(bigSize>>20)/wrote.Seconds(),
		read.Round(time.Millisecond), float64(bigSize>>20)/read.Seconds(), ms.HeapSys>>10)
	fmt.Printf("peak-rss-kib: %d\n", hwm)
}

// vmHWM returns the process's peak resident set size in KiB.
func vmHWM() (int, error) {
	fh, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			return strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/self/status")
}

// generator produces an endless, cheap, non-repeating byte stream.
type generator struct{ n uint64 }

func (g *generator) Read(p []byte) (int, error) {
	var word [8]byte
	for i := 0; i < len(p); i += 8 {
		g.n++
		binary.LittleEndian.PutUint64(word[:], g.n*0x9E3779B97F4A7C15)
		copy(p[i:], word[:])
	}
	return len(p), nil
}

// BenchmarkStream measures streaming a 64 MiB file in and out through the
// multipart path, with the default part size:
//
//	go test -run '^$' -bench Stream -benchmem ./s3adapter/
func BenchmarkStream(b *testing.B) {
	const size = 64 << 20
	srv := s3srv.Get(b)
	cfg := srv.Config(srv.NewBucket(b.Context(), b), "bench")
	cfg.Options = s3adapter.Options{}
	f, err := s3adapter.Open(b.Context(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(2 * size)
	for b.Loop() {
		ctx := b.Context()
		w, err := f.OpenWrite(ctx, "stream.bin", backend.WriteOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(w, io.LimitReader(&generator{}, size)); err != nil {
			b.Fatal(err)
		}
		if err := w.Commit(); err != nil {
			b.Fatal(err)
		}
		r, err := f.OpenRead(ctx, "stream.bin")
		if err != nil {
			b.Fatal(err)
		}
		if n, err := io.Copy(io.Discard, r); err != nil || n != size {
			b.Fatalf("read %d bytes: %v", n, err)
		}
		r.Close()
	}
}
